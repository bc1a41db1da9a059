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
#include "cli/tune_jobs.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

void run_tune(const TuneArgs& a) {
  if (run_distributed(a, false)) return;
  if (!a.problems_file.empty()) return tune_workload(a);
  const std::vector<Problem> problems = tune_problems(a);
  std::optional<Database> db;
  for (const Problem& p : problems) {
    auto evaluator = make_evaluator(evaluator_options(a), p);
    const DeviceSpec& d = evaluator->device();
    if (!db) db.emplace(a.db);
    db->save_device(d);
    ModelCoefficients coefficients;
    if (find_strategy(a.strategy).uses_model) {
      const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
      std::printf("tune %s: model calibration: %s\n", p.shape_id().c_str(),
                  calibration.description.c_str());
      coefficients = calibration.coefficients;
    }
    store_reference(*db, *evaluator, p);
    const TuningRun run(a.strategy);
    const EvaluationSink sink = [&](const Evaluation& e) { db->add(run.attempt(e, p, d)); };
    const TuneResult r = tune_problem(a, p, *evaluator, coefficients, sink);
    std::fputs(report_text(p, r, "tune").c_str(), stdout);
    if (a.recalibrate && &p == &problems.back()) recalibrate(*db, d, a);
  }
}

void run_sweep(const TuneArgs& a) {
  if (run_distributed(a, true)) return;
  const Problem p = a.problem.problem();
  auto evaluator = make_evaluator(evaluator_options(a), p);
  Database db(a.db);
  const DeviceSpec& d = evaluator->device();
  db.save_device(d);
  // Resumable: whatever the store already has for this problem is skipped.
  const SweepPlan plan = plan_sweep(a, p, *evaluator, db);
  if (!plan.to_measure.empty()) store_reference(db, *evaluator, p);
  SweepProgress progress(plan.to_measure.size());
  const TuningRun run("sweep");
  const EvaluationSink sink = [&](const Evaluation& e) {
    db.add(run.attempt(e, p, d));
    progress.add(1);
  };
  std::fputs(sweep_header(a, p, plan).c_str(), stderr);
  const TuneResult r =
      sweep(p, *evaluator, plan.to_measure, Budget{a.evaluations, a.seconds}, sink);
  progress.finish();
  std::fputs(report_text(p, r, "sweep").c_str(), stdout);
}

void add_common(CLI::App& cmd, TuneArgs& a, bool sizes_required) {
  add_problem_options(cmd, a.problem, sizes_required);
  cmd.add_option("--db", a.db, "the store")->capture_default_str();
  add_evaluator_options(cmd, a.evaluator);
  cmd.add_option("--evaluations", a.evaluations, "stop after this many measurements (0: no limit)");
  add_domain_option(cmd, a.domain);
}

void add_distribution_options(CLI::App& cmd, TuneArgs& a) {
  cmd.add_option("--rank-timeout", a.rank_timeout,
                 "under mpirun: seconds without word from a rank (a result, a request) before it "
                 "is lost and its item goes to another rank; longer than a compile batch")
      ->capture_default_str();
}

}  // namespace

void register_tune(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  auto* tune = app.add_subcommand(
      "tune", "hybrid tuning on the local GPU: model shortlist, measure, refine");
  add_common(*tune, *a, false);
  tune->add_option("--problems", a->problems_file,
                   "tune a workload: one problem per line in the problem options, each with an "
                   "optional --weight (how often it runs); --seconds and --evaluations are one "
                   "budget for all, shared by expected gain (under mpirun, where problems tune "
                   "side by side, a budget per problem); resumable: a rerun skips the problems "
                   "tuned");
  add_distribution_options(*tune, *a);
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
  add_common(*sw, *b, true);
  add_distribution_options(*sw, *b);
  sw->add_option("--item-configs", b->item_configs,
                 "under mpirun: configurations per work item a rank measures")
      ->capture_default_str();
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
