// gemmtune tune / sweep: measure on the local GPU (or replay a recording), store every attempt.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "cli/options.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct TuneArgs {
  ProblemOptions problem;
  std::string db = Database::default_path();
  EvaluatorOptions evaluator;
  std::string strategy = "hybrid";
  std::string domain = "full";
  std::string calibration = "auto";
  bool recalibrate = false;
  bool counters = false;  // with every measurement (tune)
  std::string objective = "time";
  int evaluations = 0;
  double seconds = 60;
  double cap_percent = 0;  // tune: at most this percentage of the pruned space measured
  int compile_top = 64, measure_top = 8;
  unsigned seed = 1;
  int limit = 0;
  int sample = 0;  // sweep: a uniformly random subset of this size (0: every configuration)
};

EvaluatorOptions evaluator_options(const TuneArgs& a) {
  EvaluatorOptions o = a.evaluator;
  o.energy = parse_objective(a.objective) != Objective::Time;
  o.counters = a.counters;
  return o;
}

void report(const Problem& p, const TuneResult& r, const char* what) {
  if (!r.best) {
    std::printf("%s %s: no configuration ran correctly in %d evaluations\n", what,
                p.shape_id().c_str(), r.evaluations);
    return;
  }
  std::printf(
      "%s %s: best %s\n  %.2f us, %.0f GFLOP/s; %d measured, %d compiled, %.1f s, stopped by %s\n",
      what, p.shape_id().c_str(), r.best->config.id().c_str(), r.best->time_s * 1e6,
      p.flops() / r.best->time_s * 1e-9, r.evaluations, r.compiled, r.seconds,
      r.stopped_by.c_str());
  if (r.best->energy_j > 0)
    std::printf("  %.4f J per run, %.1f GFLOP/J\n", r.best->energy_j,
                p.flops() / r.best->energy_j * 1e-9);
}

// Online refinement: refit on everything the store holds for this device (the new attempts
// included), starting from the current coefficients, so the next problem ranks with it.
void recalibrate(Database& db, const DeviceSpec& d, const TuneArgs& a) {
  const auto samples = calibration_samples(db.attempts(d.name));
  const ModelCoefficients start = stored_coefficients(a.db, d.name, a.calibration);
  CalibrationOptions options;
  options.max_seconds = 20;
  const CalibrationResult c = calibrate(d, samples, start, options);
  db.save_calibration(d.name, coefficients_to_json(c.coefficients));
  std::printf("recalibrated %s on %zu stored measurements: loss %.4f -> %.4f (%.1f s)\n%s\n",
              d.name.c_str(), c.samples, c.loss_before, c.loss_after, c.seconds,
              correction_note(c, options).c_str());
}

void run_tune(const TuneArgs& a) {
  const Problem p = a.problem.problem();
  auto evaluator = make_evaluator(evaluator_options(a), p);
  Database db(a.db);
  const DeviceSpec& d = evaluator->device();
  db.save_device(d);
  const EvaluationSink sink = [&](const Evaluation& e) { db.add(attempt_from(e, p, d)); };
  const Strategy& strategy = find_strategy(a.strategy);
  TuneRequest request{p, *evaluator, {}, a.seed, sink};
  HybridOptions& o = request.options;
  o.compile_top = a.compile_top;
  o.measure_top = a.measure_top;
  o.budget = Budget{a.evaluations, a.seconds, a.cap_percent / 100};
  o.domain = SpaceDomain::named(a.domain);
  o.objective = parse_objective(a.objective);
  if (strategy.uses_model) {
    const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
    std::printf("tune %s: model calibration: %s\n", p.shape_id().c_str(),
                calibration.description.c_str());
    o.coefficients = calibration.coefficients;
  }
  const TuneResult r = strategy.tune(request);
  report(p, r, "tune");
  if (a.recalibrate) recalibrate(db, d, a);
}

void run_sweep(const TuneArgs& a) {
  const Problem p = a.problem.problem();
  auto evaluator = make_evaluator(evaluator_options(a), p);
  Database db(a.db);
  const DeviceSpec& d = evaluator->device();
  db.save_device(d);
  // Resumable: whatever the store already has for this problem is skipped.
  std::vector<KernelConfig> to_measure;
  int skipped = 0;
  std::vector<KernelConfig> space = pruned_space(p, d, SpaceDomain::named(a.domain));
  const size_t space_size = space.size();
  if (a.sample > 0 && size_t(a.sample) < space.size()) {
    // The same seed picks the same subset, so an interrupted sampled sweep resumes.
    std::mt19937 rng(a.seed);
    std::shuffle(space.begin(), space.end(), rng);
    space.resize(size_t(a.sample));
  }
  for (const auto& c : space) {
    if (!evaluator->can_evaluate(c)) continue;
    if (db.has(d.name, p, c)) {
      ++skipped;
      continue;
    }
    to_measure.push_back(c);
    if (a.limit > 0 && int(to_measure.size()) >= a.limit) break;
  }
  const bool tty = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  const EvaluationSink sink = [&](const Evaluation& e) {
    db.add(attempt_from(e, p, d));
    ++done;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / done * double(to_measure.size() - size_t(done));
    if (tty) {
      const int width = 30, filled = int(width * done / std::max<size_t>(1, to_measure.size()));
      std::fprintf(stderr, "\r[%s%s] %d/%zu  %.0f s elapsed, ETA %.0f s ",
                   std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), done, to_measure.size(),
                   elapsed, eta);
    } else if (done % 25 == 0 || size_t(done) == to_measure.size()) {
      std::fprintf(stderr, "sweep %d/%zu, %.0f s elapsed, ETA %.0f s\n", done, to_measure.size(),
                   elapsed, eta);
    }
  };
  std::fprintf(
      stderr, "sweep of %s (%s domain, %zu configurations%s): %zu to measure, %d already stored\n",
      p.shape_id().c_str(), a.domain.c_str(), space_size,
      space.size() < space_size ? (", a sample of " + std::to_string(space.size())).c_str() : "",
      to_measure.size(), skipped);
  const TuneResult r = sweep(p, *evaluator, to_measure, Budget{a.evaluations, a.seconds}, sink);
  if (tty) std::fprintf(stderr, "\n");
  report(p, r, "sweep");
}

void add_common(CLI::App& cmd, TuneArgs& a) {
  add_problem_options(cmd, a.problem);
  cmd.add_option("--db", a.db, "the store")->capture_default_str();
  add_evaluator_options(cmd, a.evaluator);
  cmd.add_option("--evaluations", a.evaluations, "stop after this many measurements (0: no limit)");
  add_domain_option(cmd, a.domain);
}

}  // namespace

void register_tune(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  auto* tune = app.add_subcommand(
      "tune", "hybrid tuning on the local GPU: model shortlist, measure, refine");
  add_common(*tune, *a);
  tune->add_option("--seconds", a->seconds, "time budget (0: none)")->capture_default_str();
  std::string names;
  for (const Strategy& s : strategies())
    names += std::string(names.empty() ? "" : "; ") + std::string(s.name) + ": " +
             std::string(s.summary);
  tune->add_option("--strategy", a->strategy, names)->capture_default_str();
  tune->add_option("--cap", a->cap_percent,
                   "measure at most this percentage of the pruned space (5: the benchmarks' cap)");
  tune->add_option("--compile-top", a->compile_top, "model's top configurations compiled")
      ->capture_default_str();
  tune->add_option("--measure-top", a->measure_top, "of those, measured first")
      ->capture_default_str();
  tune->add_option("--seed", a->seed, "seed of the random strategy")->capture_default_str();
  add_calibration_option(*tune, a->calibration);
  tune->add_flag("--counters", a->counters,
                 "collect the default counter set (CUPTI) for every kernel measured, stored with "
                 "its attempt");
  tune->add_option("--objective", a->objective,
                   "what to minimize: time, energy (NVML joules per run) or edp")
      ->capture_default_str();
  tune->add_flag("--recalibrate", a->recalibrate,
                 "afterwards, refit the model on the store's measurements of this GPU");
  tune->callback([a] { run_tune(*a); });

  auto b = std::make_shared<TuneArgs>();
  b->seconds = 0;
  auto* sw =
      app.add_subcommand("sweep", "measure every configuration of the pruned space (resumable)");
  add_common(*sw, *b);
  sw->add_option("--seconds", b->seconds, "time budget (0: none)")->capture_default_str();
  sw->add_option("--limit", b->limit, "measure at most this many new configurations");
  sw->add_option("--sample", b->sample,
                 "measure a uniformly random subset of this many configurations (0: all)");
  sw->add_option("--seed", b->seed, "seed of --sample")->capture_default_str();
  sw->callback([b] { run_sweep(*b); });

  auto* worker =
      app.add_subcommand("worker", "(internal) measure requests from stdin on the local GPU");
  worker->group("");
  worker->callback([] { std::exit(run_worker(stdin, stdout)); });
}

}  // namespace gemmtune::cli
