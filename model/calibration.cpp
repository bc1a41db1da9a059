// Calibration: the coefficients that make predicted times match measured ones, fitted with a
// bounded derivative-free optimizer (the model is a max of piecewise terms, not smooth), then
// the linear log-time correction on what they leave.
#include <nlopt.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "model/model.hpp"

namespace gemmtune {
namespace {

using Array = std::array<double, kCoefficientCount>;

// The loss: per problem, the variance of log(predicted / measured) (what breaks the ranking
// within a problem, which is what tuning uses), plus a quarter of the squared mean (the
// absolute scale, which time budgets and reports use). A configuration the coefficients say
// cannot run counts as a factor of e^3, so the optimizer is steered away rather than stopped.
double log_loss(const DeviceSpec& d, const std::vector<CalibrationSample>& samples,
                const ModelCoefficients& k) {
  std::map<std::string, std::pair<double, double>> sums;  // problem -> (sum e, sum e^2)
  std::map<std::string, int> counts;
  for (const auto& s : samples) {
    if (!(s.time_s > 0) || !linear_correction_applies(s.problem.precision)) continue;
    double e = 3;
    try {
      e = std::log(predict(s.problem, sample_device(s, d), s.config, k, s.registers).time_s /
                   s.time_s);
    } catch (const InputError&) {
    }
    const std::string shape = sample_gpu_prefix(s) + s.problem.shape_id();
    auto& [sum, sum2] = sums[shape];
    sum += e;
    sum2 += e * e;
    ++counts[shape];
  }
  double loss = 0;
  for (const auto& [id, acc] : sums) {
    const double n = counts[id], mean = acc.first / n;
    loss += (acc.second / n - mean * mean) + 0.25 * mean * mean;
  }
  return sums.empty() ? 0.0 : loss / double(sums.size());
}

struct Objective {
  const DeviceSpec& device;
  const std::vector<CalibrationSample>& samples;
  Array lower, upper;
  // The correction the coefficients are fitted under and the trees fitted after it (kept
  // together, never apart); its scalar coefficients are not read.
  ModelCoefficients held;
  int evaluations = 0;

  // The optimizer works on [0, 1] per coefficient so that one step means as much for a
  // latency in cycles as for an efficiency.
  ModelCoefficients at(const std::vector<double>& unit) const {
    Array v{};
    for (size_t i = 0; i < v.size(); ++i) v[i] = lower[i] + unit[i] * (upper[i] - lower[i]);
    ModelCoefficients k = from_array(v);
    k.correction = held.correction;
    k.learned = held.learned;
    k.learned_reduced = held.learned_reduced;
    return k;
  }
  static double call(const std::vector<double>& x, std::vector<double>&, void* self) {
    auto* o = static_cast<Objective*>(self);
    ++o->evaluations;
    return log_loss(o->device, o->samples, o->at(x));
  }
};

}  // namespace

CalibrationResult calibrate(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                            const ModelCoefficients& start, const CalibrationOptions& options) {
  // The coefficients and the linear correction rest on the samples linear_correction_applies to.
  std::size_t usable = 0, described = 0;
  std::set<std::string> described_problems;
  for (const auto& s : samples) {
    if (!(s.time_s > 0)) continue;
    ++usable;
    if (!linear_correction_applies(s.problem.precision)) continue;
    ++described;
    described_problems.insert(s.problem.shape_id());
  }
  if (usable == 0) throw InputError("calibration needs measured samples; none has a time > 0");
  if (described == 0)
    throw InputError(
        "calibration needs measurements of S, D, C or Z kernels, on which the "
        "coefficients rest; all " +
        std::to_string(usable) + " given are of FP16, BF16 or TF32 kernels");
  const auto t0 = std::chrono::steady_clock::now();
  // Refit the correction only with enough data behind it (74 weights); otherwise fit the
  // coefficients under the start's correction and keep it, as a tune's few new measurements
  // would otherwise replace a correction fitted on thousands.
  const bool refit = options.fit_correction &&
                     described >= std::size_t(options.min_correction_samples) &&
                     int(described_problems.size()) >= options.min_correction_problems;
  Objective objective{device, samples, coefficient_lower_bounds(), coefficient_upper_bounds(),
                      refit ? ModelCoefficients{} : start};
  std::vector<double> x(kCoefficientCount);
  const Array s0 = to_array(start);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::clamp((s0[i] - objective.lower[i]) / (objective.upper[i] - objective.lower[i]), 0.0,
                      1.0);

  CalibrationResult r;
  r.samples = usable;
  r.correction_samples = described;
  r.loss_before = log_loss(device, samples, start);
  nlopt::opt opt(nlopt::LN_BOBYQA, kCoefficientCount);
  opt.set_lower_bounds(std::vector<double>(kCoefficientCount, 0.0));
  opt.set_upper_bounds(std::vector<double>(kCoefficientCount, 1.0));
  opt.set_min_objective(&Objective::call, &objective);
  opt.set_initial_step(0.1);
  opt.set_xtol_rel(1e-4);
  opt.set_ftol_rel(1e-6);
  // BOBYQA's trust region shrinks fast on this piecewise loss; restarting from the best point
  // with a fresh step finds more, until a restart gains under 0.1%.
  // The optimizer's starting point: the start's coefficients (within bounds) under the held
  // correction; never hand back anything worse.
  const ModelCoefficients from = objective.at(x);
  const double from_loss = log_loss(device, samples, from);
  double best = from_loss;
  const auto deadline = t0 + std::chrono::duration<double>(options.max_seconds);
  for (int restart = 0; restart < 8; ++restart) {
    const double before = best;
    if (objective.evaluations >= options.max_evaluations) break;
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.stopped_by_clock = true;
      break;
    }
    opt.set_maxtime(left);
    opt.set_maxeval(options.max_evaluations - objective.evaluations);
    nlopt::result result = nlopt::SUCCESS;
    try {
      result = opt.optimize(x, best);
    } catch (const nlopt::roundoff_limited&) {
      // x holds the best point found; good enough.
    }
    r.stopped_by_clock = result == nlopt::MAXTIME_REACHED;
    if (r.stopped_by_clock || best > before * 0.999) break;
  }
  r.coefficients = objective.at(x);
  r.loss_coefficients = log_loss(device, samples, r.coefficients);
  if (r.loss_coefficients > from_loss) {
    r.coefficients = from;
    r.loss_coefficients = from_loss;
  }
  // The correction minimizes its own, fast-end-weighted error, so it may raise this unweighted
  // loss a little while it ranks the configurations that tuning picks from better.
  r.correction_refitted = refit;
  r.problems = described_problems.size();
  if (refit) r.coefficients.correction = fit_log_time_correction(device, samples, r.coefficients);
  // Without a refit the start's trees stay, fitted under (Objective::at) as its correction is.
  if (refit && options.fit_learned) fit_learned_trees(device, samples, r.coefficients);
  // The samples' proven kernels, then the start's that they do not repeat (a store's few
  // tunes add to the winners of the recordings it started from).
  r.coefficients.proven = proven_kernels(samples, start.proven);
  r.loss_after = log_loss(device, samples, r.coefficients);
  r.evaluations = objective.evaluations;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

ModelCoefficients fit_fold(const DeviceSpec& device, const std::vector<CalibrationSample>& train) {
  ModelCoefficients k = calibrate(device, train, {}, fold_fit_options()).coefficients;
  k.correction = fit_log_time_correction(device, train, k);
  fit_learned_trees(device, train, k);
  k.proven = proven_kernels(train);
  return k;
}

}  // namespace gemmtune
