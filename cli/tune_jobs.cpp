#include "cli/tune_jobs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace gemmtune::cli {

EvaluatorOptions evaluator_options(const TuneArgs& a) {
  EvaluatorOptions o = a.evaluator;
  o.energy = parse_objective(a.objective) != Objective::Time;
  o.counters = a.counters;
  return o;
}

std::vector<Problem> tune_problems(const TuneArgs& a) {
  if (a.problems_file.empty()) {
    if (a.problem.m == 0 && a.problem.n == 0 && a.problem.k == 0)
      throw InputError("tune needs a problem (--m --n --k) or a workload (--problems FILE)");
    return {a.problem.problem()};
  }
  return read_problems_file(a.problems_file);
}

std::string tune_step_key(const Problem& p, const std::string& device, const TuneArgs& a) {
  return "tune " + device + " " + p.shape_id() + " lda" + std::to_string(p.lda) + " " + a.strategy +
         " " + a.domain + " e" + std::to_string(a.evaluations) + " s" + std::to_string(a.seconds);
}

std::string report_text(const Problem& p, const TuneResult& r, const char* what) {
  char buf[1024];
  if (!r.best) {
    std::snprintf(buf, sizeof buf, "%s %s: no configuration ran correctly in %d evaluations\n",
                  what, p.shape_id().c_str(), r.evaluations);
    return buf;
  }
  std::snprintf(
      buf, sizeof buf,
      "%s %s: best %s\n  %.2f us, %.0f GFLOP/s; %d measured, %d compiled, %.1f s, stopped by %s\n",
      what, p.shape_id().c_str(), r.best->config.id().c_str(), r.best->time_s * 1e6,
      p.flops() / r.best->time_s * 1e-9, r.evaluations, r.compiled, r.seconds,
      r.stopped_by.c_str());
  std::string text = buf;
  if (r.best->energy_j > 0) {
    std::snprintf(buf, sizeof buf, "  %.4f J per run, %.1f GFLOP/J\n", r.best->energy_j,
                  p.flops() / r.best->energy_j * 1e-9);
    text += buf;
  }
  return text;
}

void store_reference(Database& db, Evaluator& evaluator, const Problem& p) {
  const std::optional<Evaluation> e = evaluator.reference(p);
  if (!e) return;
  db.add_reference(
      {evaluator.device().name, p, "cublas", e->time_s, p.flops() / e->time_s * 1e-9, ""});
}

TuneResult tune_problem(const TuneArgs& a, const Problem& p, Evaluator& evaluator,
                        const ModelCoefficients& coefficients, const EvaluationSink& sink) {
  const Strategy& strategy = find_strategy(a.strategy);
  TuneRequest request{p, evaluator, {}, a.seed, sink};
  HybridOptions& o = request.options;
  o.compile_top = a.compile_top;
  o.measure_top = a.measure_top;
  o.budget = Budget{a.evaluations, a.seconds, a.cap_percent / 100};
  o.domain = SpaceDomain::named(a.domain);
  o.coefficients = coefficients;
  o.objective = parse_objective(a.objective);
  return strategy.tune(request);
}

void recalibrate(Database& db, const DeviceSpec& d, const TuneArgs& a) {
  const auto samples = calibration_samples(db.attempts(d.name));
  const ModelCoefficients start = stored_coefficients(a.db, d.name, a.calibration);
  CalibrationOptions options;
  options.max_seconds = 20;
  // A tune's refit is held to a short time; `gemmtune calibrate` fits the same data to the end.
  const CalibrationResult c = calibrate(d, samples, start, options);
  db.save_calibration(d.name, coefficients_to_json(c.coefficients));
  std::printf("recalibrated %s on %zu stored measurements: loss %.4f -> %.4f (%.1f s)\n%s\n",
              d.name.c_str(), c.samples, c.loss_before, c.loss_after, c.seconds,
              correction_note(c, options).c_str());
  if (c.stopped_by_clock)
    std::printf(
        "the refit stopped at its %.0f s limit after %d evaluations; `gemmtune calibrate` fits "
        "the store's measurements to the end\n",
        options.max_seconds, c.evaluations);
}

SweepPlan plan_sweep(const TuneArgs& a, const Problem& p, const Evaluator& evaluator,
                     const Database& db) {
  SweepPlan plan;
  const DeviceSpec& d = evaluator.device();
  std::vector<KernelConfig> space = pruned_space(p, d, SpaceDomain::named(a.domain));
  plan.space_size = space.size();
  if (a.sample > 0 && size_t(a.sample) < space.size()) {
    // The same seed picks the same subset, so an interrupted sampled sweep resumes.
    std::mt19937 rng(a.seed);
    std::shuffle(space.begin(), space.end(), rng);
    space.resize(size_t(a.sample));
  }
  plan.sampled = space.size();
  for (const auto& c : space) {
    if (!evaluator.can_evaluate(c)) continue;
    if (db.has(d.name, p, c)) {
      ++plan.skipped;
      continue;
    }
    plan.to_measure.push_back(c);
    if (a.limit > 0 && int(plan.to_measure.size()) >= a.limit) break;
  }
  return plan;
}

std::string sweep_header(const TuneArgs& a, const Problem& p, const SweepPlan& plan) {
  return "sweep of " + p.shape_id() + " (" + a.domain + " domain, " +
         std::to_string(plan.space_size) + " configurations" +
         (plan.sampled < plan.space_size ? ", a sample of " + std::to_string(plan.sampled) : "") +
         "): " + std::to_string(plan.to_measure.size()) + " to measure, " +
         std::to_string(plan.skipped) + " already stored\n";
}

SweepProgress::SweepProgress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}

void SweepProgress::add(size_t done_now) {
  for (size_t i = 0; i < done_now; ++i) {
    ++done_;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = elapsed / double(done_) * double(total_ - std::min(total_, done_));
    if (tty_) {
      const int width = 30, filled = int(width * done_ / std::max<size_t>(1, total_));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu  %.0f s elapsed, ETA %.0f s ",
                   std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), done_, total_, elapsed, eta);
    } else if (done_ % 25 == 0 || done_ == total_) {
      std::fprintf(stderr, "sweep %zu/%zu, %.0f s elapsed, ETA %.0f s\n", done_, total_, elapsed,
                   eta);
    }
  }
}

void SweepProgress::finish() const {
  if (tty_) std::fprintf(stderr, "\n");
}

#ifndef GEMMTUNE_WITH_MPI
bool run_distributed(const TuneArgs&, bool) {
  const char* ranks = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (ranks && std::atoi(ranks) > 1)
    throw InputError("mpirun started " + std::string(ranks) +
                     " ranks, but this gemmtune was built without MPI (GEMMTUNE_MPI=OFF); "
                     "install libopenmpi-dev and rebuild, or run one rank");
  return false;
}
#endif

}  // namespace gemmtune::cli
