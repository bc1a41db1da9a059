// The calibrated correction of the analytical time: features, and their fit to measurements.
// The analytical terms rank tile shapes and pipelines from first principles; measurements on a
// GPU show systematic misses of those terms (a 1x2 thread tile cannot hide FMA latency, a
// layout's real conflict cost), which a linear model of the log-time error captures well and
// cheaply, and which generalizes across problems because it is written in the model's own terms.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "model/model.hpp"

namespace gemmtune {
namespace {

// Every feature of the linear correction, by name, in the calibration format's order: each
// name stands beside its value, so the two cannot drift apart. Inlined into predict's hot loop.
template <class Emit>
void each_feature(const KernelConfig& c, const Prediction& r, Emit&& emit) {
  const double tm = std::log2(double(c.thr_m())), tn = std::log2(double(c.thr_n()));
  const double t = r.time_s > 0 ? r.time_s : 1.0;
  emit("thread_tile_m_log2", tm);
  emit("thread_tile_n_log2", tn);
  emit("thread_tile_m_x_n_log2", tm * tn);
  emit("inverse_thread_tile", 1.0 / (double(c.thr_m()) * c.thr_n()));
  emit("threads_log2", std::log2(double(c.threads())));
  emit("block_k_log2", std::log2(double(c.blk_k)));
  emit("block_m_log2", std::log2(double(c.blk_m)));
  emit("block_n_log2", std::log2(double(c.blk_n)));
  emit("vector_a_log2", std::log2(double(c.vec_a)));
  emit("vector_b_log2", std::log2(double(c.vec_b)));
  emit("vector_shared_log2", std::log2(double(c.vec_s)));
  emit("a_k_major", double(c.smem_a_kmajor));
  emit("b_k_major", double(c.smem_b_kmajor));
  emit("padded", c.pad > 0 ? 1.0 : 0.0);
  emit("prefetch_a", c.prefetch == 1 ? 1.0 : 0.0);
  emit("prefetch_b", c.prefetch == 2 ? 1.0 : 0.0);
  emit("prefetch_both", c.prefetch == 3 ? 1.0 : 0.0);
  emit("stages", double(c.stages));
  emit("full_unroll", c.unroll == 0 ? 1.0 : 0.0);
  emit("predicated_edges", c.edge == EdgeMode::Predicate ? 1.0 : 0.0);
  emit("rasterized", c.raster > 1 ? 1.0 : 0.0);
  emit("mma_m8n8k4", c.mma == 1 ? 1.0 : 0.0);
  emit("mma_m16n8k4", c.mma == 2 ? 1.0 : 0.0);
  emit("cp_async", double(c.async_copy));
  emit("occupancy", r.occ.fraction);
  emit("blocks_per_sm_log2", std::log2(double(std::max(1, r.occ.blocks_per_sm))));
  emit("registers_log2", std::log2(double(std::max(1, r.registers))));
  emit("compute_share", r.t_compute / t);
  emit("shared_share", r.t_smem / t);
  emit("issue_share", r.t_issue / t);
  emit("latency_share", r.t_latency / t);
  emit("store_share", r.t_store / t);
  emit("dram_share", r.t_dram / t);
  emit("l2_share", r.t_l2 / t);
  emit("wave_efficiency", r.wave_efficiency);
  emit("dim_x_log2", std::log2(double(c.dim_x)));
  emit("dim_y_log2", std::log2(double(c.dim_y)));
}

// The fast end decides what tuning picks: a configuration at the problem's best weighs
// 1 + kFastWeight, one 5% slower about a third of that, one 30% slower almost 1.
constexpr double kFastWeight = 100, kFastScale = 0.05;
// Ridge: relative to each feature's spread, plus a floor that keeps features which barely vary
// in the training data (an mma kind on an S-only set, the inverse thread tile) near zero rather
// than fitted to noise; held out, the floor ranks better than a purely relative ridge (median
// Spearman 0.896 against 0.887 on the exhaustive H100 sweeps).
constexpr double kRidge = 1e-3;

}  // namespace

bool LogTimeCorrection::empty() const {
  const auto zero = [](double v) { return v == 0.0; };
  return offset == 0 && offset_fp64 == 0 && tensor_core_level == 0 && short_loop_level == 0 &&
         std::all_of(all.begin(), all.end(), zero) && std::all_of(fp64.begin(), fp64.end(), zero) &&
         std::all_of(tensor_core.begin(), tensor_core.end(), zero) &&
         std::all_of(short_loop.begin(), short_loop.end(), zero);
}

const std::array<const char*, kCorrectionFeatureCount>& correction_feature_names() {
  static const std::array<const char*, kCorrectionFeatureCount> names = [] {
    std::array<const char*, kCorrectionFeatureCount> out{};
    size_t i = 0;
    each_feature(KernelConfig{}, Prediction{},
                 [&](const char* name, double) { out.at(i++) = name; });
    if (i != out.size())
      throw std::logic_error("the correction declares " + std::to_string(i) + " features, " +
                             std::to_string(out.size()) + " expected");
    return out;
  }();
  return names;
}

double short_loop_gate(const Problem& p) {
  // One over the K steps of a main loop at BK = 16, the space's typical depth: 1 for K <= 16,
  // 0.5 at K = 32, 0.004 at K = 4096. Held out (leave-one-class-out, 18 H100 problems), gates
  // of 12/K and 16/K ranked alike; 8/K, 32/K, 64/K, a K <= 32 step and the configuration's own
  // BK/K all helped the skinny-K classes but kept one to three more shortlists from the best.
  return std::min(1.0, 16.0 / double(std::max<std::int64_t>(1, p.k)));
}

std::array<double, kCorrectionFeatureCount> correction_features(const KernelConfig& c,
                                                                const Prediction& r) {
  std::array<double, kCorrectionFeatureCount> values{};
  size_t i = 0;
  each_feature(c, r, [&](const char*, double value) { values[i++] = value; });
  return values;
}

std::optional<Prediction> predict_measured(const DeviceSpec& device, const CalibrationSample& s,
                                           const ModelCoefficients& coefficients) {
  if (!(s.time_s > 0)) return std::nullopt;
  try {
    return predict(s.problem, sample_device(s, device), s.config, coefficients, s.registers);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

LogTimeCorrection fit_log_time_correction(const DeviceSpec& device,
                                          const std::vector<CalibrationSample>& samples,
                                          const ModelCoefficients& base) {
  constexpr int n = kCorrectionFeatureCount;
  // `all`, then `fp64` (the same features, zero unless D or Z), then `tensor_core` (zero unless
  // MM > 0), then `short_loop` (scaled by the problem's short_loop_gate).
  constexpr int width = 4 * n;
  ModelCoefficients plain = base;
  plain.correction = {};
  struct Row {
    Eigen::Matrix<double, width, 1> x;
    double error, log_measured;
    bool fp64, tensor_core;
    double gate;
  };
  // A problem's tensor-core and SIMT kernels are centred and weighted apart: on the H100 the
  // tensor-core kernels are the fast end of every FP64 problem, and weighted together they left
  // the FP64 SIMT weights fitted to almost nothing (held-out FP64 SIMT rankings fell below the
  // uncalibrated model's).
  std::map<std::string, std::vector<Row>> by_problem;
  for (const auto& s : samples) {
    if (!linear_correction_applies(s.problem.precision)) continue;
    const auto predicted = predict_measured(device, s, plain);
    if (!predicted) continue;
    const Prediction& r = *predicted;
    const auto f = correction_features(s.config, r);
    Row row{Eigen::Matrix<double, width, 1>::Zero(),
            std::log(s.time_s / r.time_s),
            std::log(s.time_s),
            is_double(s.problem.precision),
            s.config.mma > 0,
            s.config.mma > 0 ? 0.0 : short_loop_gate(s.problem)};
    for (int j = 0; j < n; ++j) {
      row.x[j] = f[size_t(j)];
      if (is_double(s.problem.precision)) row.x[n + j] = f[size_t(j)];
      if (row.tensor_core) row.x[2 * n + j] = f[size_t(j)];
      row.x[3 * n + j] = row.gate * f[size_t(j)];
    }
    by_problem[sample_gpu_prefix(s) + s.problem.shape_id() + (row.tensor_core ? " mma" : "")]
        .push_back(row);
  }

  // On the heap: width^2 doubles exceed Eigen's stack limit.
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(width, width);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(width);
  struct Centre {
    Eigen::Matrix<double, width, 1> x;
    double error;
    Eigen::Matrix<double, width, 1> plain_x;  // unweighted means, for the absolute level
    double plain_error;
    bool fp64, tensor_core;
    double gate;  // the problem's short-loop gate, 0 for tensor-core kernels
  };
  std::vector<Centre> centres;
  for (const auto& [id, rows] : by_problem) {
    if (rows.size() < 2) continue;
    double best = rows.front().log_measured;
    for (const auto& row : rows) best = std::min(best, row.log_measured);
    std::vector<double> w(rows.size());
    double total = 0;
    for (size_t i = 0; i < rows.size(); ++i)
      total += w[i] = 1 + kFastWeight * std::exp(-(rows[i].log_measured - best) / kFastScale);
    Centre c{Eigen::Matrix<double, width, 1>::Zero(),
             0,
             Eigen::Matrix<double, width, 1>::Zero(),
             0,
             rows.front().fp64,
             rows.front().tensor_core,
             rows.front().gate};
    for (size_t i = 0; i < rows.size(); ++i) {
      w[i] /= total;  // each problem (each kind of kernel of it) weighs 1 in all
      c.x += w[i] * rows[i].x;
      c.error += w[i] * rows[i].error;
      c.plain_x += rows[i].x / double(rows.size());
      c.plain_error += rows[i].error / double(rows.size());
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const Eigen::Matrix<double, width, 1> dx = rows[i].x - c.x;
      gram.noalias() += w[i] * dx * dx.transpose();
      rhs.noalias() += w[i] * dx * (rows[i].error - c.error);
    }
    centres.push_back(c);
  }
  if (centres.empty())
    throw InputError("the log-time correction needs a problem with 2 or more usable samples; " +
                     std::to_string(by_problem.size()) + " problem(s) have fewer");
  for (int j = 0; j < width; ++j) gram(j, j) += kRidge * (1 + gram(j, j));
  const Eigen::VectorXd weights = gram.ldlt().solve(rhs);

  LogTimeCorrection k;
  for (int j = 0; j < n; ++j) {
    k.all[size_t(j)] = weights[j];
    k.fp64[size_t(j)] = weights[n + j];
    k.tensor_core[size_t(j)] = weights[2 * n + j];
    k.short_loop[size_t(j)] = weights[3 * n + j];
  }
  // The slopes say nothing of the absolute scale (every problem was centred), and features that
  // differ between problems (the terms' shares, FP64's own weights, the short-loop weights
  // through the gate) move each problem's level. The levels put the mean log error of all of a
  // problem's configurations back to zero in the least-squares sense over problems: one for every
  // problem, one more for FP64 ones, one more for tensor-core kernels, and a slope in the
  // short-loop gate (without it skinny-K problems were predicted 6x too slow and the rest 1.9x
  // too fast, which misstated every predicted time and set FP64 SIMT kernels against the
  // tensor-core kernels of the same problem wrongly).
  Eigen::Matrix4d level_gram = Eigen::Matrix4d::Zero();
  Eigen::Vector4d level_rhs = Eigen::Vector4d::Zero();
  for (const auto& c : centres) {
    const Eigen::Vector4d x(1.0, c.fp64 ? 1.0 : 0.0, c.tensor_core ? 1.0 : 0.0, c.gate);
    level_gram.noalias() += x * x.transpose();
    level_rhs += x * (c.plain_error - weights.dot(c.plain_x));
  }
  // Without FP64 or tensor-core problems that part is not determined, and the small ridge leaves
  // it at zero; without skinny-K problems the slope rests on the long-K problems' small gates.
  for (int j = 1; j < 4; ++j) level_gram(j, j) += 1e-6;
  const Eigen::Vector4d levels = level_gram.ldlt().solve(level_rhs);
  k.offset = levels[0];
  k.offset_fp64 = levels[1];
  k.tensor_core_level = levels[2];
  k.short_loop_level = levels[3];
  return k;
}

}  // namespace gemmtune
