// tune and sweep under mpirun: rank 0 plans, hands out items and alone writes the store; the
// other ranks measure, each on its own GPU.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/tune_jobs.hpp"
#include "dist/dist.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune::cli {

extern const char* const kBuildCommit;

namespace {

// A worker rank measures on GPU local_rank % count of those it may see. The rank's kernels run
// in its worker process, which inherits the choice through CUDA_VISIBLE_DEVICES.
void pick_gpu(int local_rank) {
  const int count = cuda_device_count();
  if (count == 0) throw InputError("no CUDA GPU on this rank's machine (or replay with --replay)");
  const int ordinal = local_rank % count;
  std::string chosen = std::to_string(ordinal);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::stringstream list(visible);
    for (int i = 0; std::getline(list, chosen, ',') && i < ordinal; ++i) {
    }
  }
  setenv("CUDA_VISIBLE_DEVICES", chosen.c_str(), 1);
}

std::string device_name(const EvaluatorOptions& o) {
  return o.replay.empty() ? query_local_device().name : find_builtin_device(o.gpu).name;
}

std::string identity(const std::string& device) {
  return "commit " + std::string(kBuildCommit) + " as `gemmtune " + command_line() + "` on " +
         device;
}

dist::Options dist_options(const TuneArgs& a, bool sweep) {
  if (!(a.rank_timeout > 0))
    throw InputError("--rank-timeout " + std::to_string(a.rank_timeout) + " must be > 0");
  if (sweep && a.item_configs < 1)
    throw InputError("--item-configs " + std::to_string(a.item_configs) + " must be >= 1");
  dist::Options o;
  o.rank_timeout_s = a.rank_timeout;
  if (sweep) o.hand_out_s = a.seconds;
  return o;
}

// Rank 0's setup: the evaluator (for the device and what a replay knows) and the store, opened
// before anything is measured; a failure is every rank's refusal.
struct Lead {
  std::unique_ptr<Evaluator> evaluator;
  std::unique_ptr<Database> db;
  std::optional<std::string> error;
  std::string device = "(unknown device)";
};

Lead open_lead(const TuneArgs& a, const Problem& p) {
  Lead lead;
  try {
    lead.evaluator = make_evaluator(evaluator_options(a), p);
    lead.device = lead.evaluator->device().name;
    lead.db = std::make_unique<Database>(a.db);
    lead.db->save_device(lead.evaluator->device());
  } catch (const std::exception& e) {
    lead.error = e.what();
  }
  return lead;
}

void print_schedule(const dist::ScheduleReport& s) {
  std::printf(
      "mpi: %d items on %d worker ranks in %.1f s, efficiency %.1f%%; scheduling overhead per "
      "item %.3f ms round trip, %.3f ms of rank 0\n",
      s.items, s.workers, s.seconds, 100 * s.efficiency(), s.round_trip_overhead_ms, s.rank0_ms);
  for (const auto& l : s.lost)
    std::printf("mpi: rank %d was lost (%s); its item was measured by another rank\n", l.rank,
                l.why.c_str());
}

void check_fault_tolerance(const dist::World& world) {
  if (world.rank() == 0 && !dist::survives_lost_ranks())
    std::fprintf(stderr,
                 "gemmtune: note: a lost rank ends the whole job unless mpirun is given --mca "
                 "orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0\n");
}

void lead_sweep(const TuneArgs& a, const dist::World& world, const dist::Options& options) {
  const Problem p = a.problem.problem();
  Lead lead = open_lead(a, p);
  dist::handshake(world, identity(lead.device), lead.error, "", options);
  SweepPlan plan = plan_sweep(a, p, *lead.evaluator, *lead.db);
  if (a.evaluations > 0 && plan.to_measure.size() > size_t(a.evaluations))
    plan.to_measure.resize(size_t(a.evaluations));
  std::fputs(sweep_header(a, p, plan).c_str(), stderr);
  const size_t per_item = size_t(a.item_configs);
  std::vector<std::string> payloads;
  for (size_t first = 0; first < plan.to_measure.size(); first += per_item) {
    std::string ids;
    for (size_t i = first; i < std::min(plan.to_measure.size(), first + per_item); ++i)
      ids += plan.to_measure[i].id() + "\n";
    payloads.push_back(ids);
  }
  const DeviceSpec& d = lead.evaluator->device();
  TuneResult r;
  // The serial sweep keeps the first of equal times in its order: so does this, whatever order
  // the items come back in.
  size_t best_position = std::numeric_limits<size_t>::max();
  SweepProgress progress(plan.to_measure.size());
  const TuningRun run("sweep");  // elapsed_s: when each item's results reached the lead
  const dist::ScheduleReport s = dist::schedule(
      world, payloads,
      [&](size_t item, dist::ItemOutcome&& outcome) {
        std::vector<Attempt> attempts;
        for (size_t i = 0; i < outcome.results.size(); ++i) {
          const Evaluation e = dist::evaluation_from_text(outcome.results[i]);
          const size_t position = item * per_item + i;
          if (e.ok() && e.time_s > 0 &&
              (!r.best || e.time_s < r.best->time_s ||
               (e.time_s == r.best->time_s && position < best_position))) {
            r.best = e;
            best_position = position;
          }
          attempts.push_back(run.attempt(e, p, d));
        }
        lead.db->add_all(attempts);
        r.evaluations += int(attempts.size());
        progress.add(attempts.size());
      },
      options);
  progress.finish();
  r.compiled = r.evaluations;
  r.seconds = s.seconds;
  r.stopped_by = s.items == int(payloads.size()) ? "space exhausted" : "time budget";
  std::fputs(report_text(p, r, "sweep").c_str(), stdout);
  print_schedule(s);
}

void lead_tune(const TuneArgs& a, const dist::World& world, const dist::Options& options) {
  std::optional<std::string> error;
  std::vector<Problem> problems;
  Lead lead;
  ChosenCalibration calibration;
  try {
    if (a.recalibrate)
      throw InputError(
          "--recalibrate refits after a serial tune; under mpirun run `gemmtune "
          "calibrate` once the tune is done");
    problems = tune_problems(a);
    lead = open_lead(a, problems.front());
    if (!lead.error && find_strategy(a.strategy).uses_model)
      calibration = calibration_for(a.db, lead.device, a.calibration);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error) error = lead.error;
  const bool uses_model = !error && find_strategy(a.strategy).uses_model;
  const std::string setup =
      uses_model ? coefficients_to_json(calibration.coefficients) : std::string();
  dist::handshake(world, identity(lead.device), error, setup, options);
  if (uses_model) std::printf("tune: model calibration: %s\n", calibration.description.c_str());
  const bool workload = !a.problems_file.empty();
  std::vector<std::string> payloads;
  std::vector<size_t> problem_of;
  for (size_t i = 0; i < problems.size(); ++i) {
    const std::string key = tune_step_key(problems[i], lead.device, a);
    if (workload && lead.db->step(key)) {
      std::printf("tune %s: already tuned (%s)\n", problems[i].shape_id().c_str(),
                  lead.db->step(key)->c_str());
      continue;
    }
    payloads.push_back(std::to_string(i));
    problem_of.push_back(i);
  }
  const DeviceSpec& d = lead.evaluator->device();
  const dist::ScheduleReport s = dist::schedule(
      world, payloads,
      [&](size_t item, dist::ItemOutcome&& outcome) {
        const Problem& p = problems[problem_of[item]];
        std::vector<Attempt> attempts;
        const TuningRun run(a.strategy);
        for (const auto& text : outcome.results) {
          attempts.push_back(run.attempt(dist::evaluation_from_text(text), p, d));
          attempts.back().elapsed_s.reset();  // the rank's own times do not come back
        }
        // A tune's attempts are stored when it ends, in one transaction: a lost rank's partial
        // tune leaves nothing, and the rank that redoes it stores what a serial run would.
        lead.db->add_all(attempts);
        if (workload)
          lead.db->mark_step(tune_step_key(p, lead.device, a),
                             std::to_string(attempts.size()) + " evaluations");
        std::printf("%s", outcome.summary.c_str());
        std::fflush(stdout);
      },
      options);
  print_schedule(s);
}

void serve_items(const TuneArgs& a, const dist::World& world, const dist::Options& options,
                 bool sweep) {
  const EvaluatorOptions eo = evaluator_options(a);
  std::string device;
  try {
    if (eo.replay.empty()) pick_gpu(dist::launched_local_rank());
    device = device_name(eo);
  } catch (const std::exception& e) {
    // Told to rank 0 in the identity, which refuses the run naming it.
    device = "(" + std::string(e.what()) + ")";
  }
  const std::string setup = dist::handshake(world, identity(device), std::nullopt, "", options);
  const ModelCoefficients coefficients =
      setup.empty() ? ModelCoefficients{} : coefficients_from_json(setup, "rank 0's calibration");
  const std::vector<Problem> problems = tune_problems(a);
  // Measuring one problem item after item: its evaluator is kept.
  std::unique_ptr<Evaluator> evaluator;
  size_t evaluator_problem = std::numeric_limits<size_t>::max();
  auto evaluator_for = [&](size_t i) -> Evaluator& {
    if (i != evaluator_problem) {
      evaluator = make_evaluator(eo, problems.at(i));
      evaluator_problem = i;
    }
    return *evaluator;
  };
  dist::serve(
      world,
      [&](const std::string& payload, const dist::Emit& emit) -> std::string {
        const EvaluationSink sink = [&](const Evaluation& e) { emit(dist::evaluation_to_text(e)); };
        if (sweep) {
          std::vector<KernelConfig> configs;
          std::stringstream ids(payload);
          for (std::string id; std::getline(ids, id);) configs.push_back(KernelConfig::parse(id));
          gemmtune::sweep(problems.front(), evaluator_for(0), configs, {}, sink);
          return "";
        }
        const size_t i = std::stoul(payload);
        const TuneResult r = tune_problem(a, problems.at(i), evaluator_for(i), coefficients, sink);
        return report_text(problems[i], r, "tune") + "  (rank " + std::to_string(world.rank()) +
               ")\n";
      },
      options);
}

}  // namespace

bool run_distributed(const TuneArgs& a, bool sweep) {
  if (dist::launched_ranks() <= 1) return false;
  const dist::Options options = dist_options(a, sweep);
  int code = 0;
  {
    dist::World world;
    // Errors are reported here, before MPI ends: finalizing after a lost rank may not return.
    try {
      check_fault_tolerance(world);
      if (world.rank() != 0)
        serve_items(a, world, options, sweep);
      else if (sweep)
        lead_sweep(a, world, options);
      else
        lead_tune(a, world, options);
    } catch (const InputError& e) {
      // A worker's bad input reaches rank 0 (in its identity or its item), which says it once.
      if (world.rank() == 0) std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
      code = 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gemmtune: failed: %s\n", e.what());
      code = 1;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    world.exit_code = code;
  }
  if (code != 0) std::exit(code);
  return true;
}

}  // namespace gemmtune::cli
