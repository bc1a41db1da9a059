// gemmtune kernel-set: the few kernels to ship for a workload, and what each problem loses.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "cli/options.hpp"
#include "search/search.hpp"
#include "search/tuning_run.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct KernelSetArgs {
  app::KernelSetRequest request;
  std::string problems, format = "table";
  int measure_rounds = 0;
  EvaluatorOptions evaluator;
};

// Measures each problem's predicted pairs on the local GPU (or a replay), every attempt stored as
// a tune's are, none twice (`done`: problem index and configuration id); returns how many were
// measured. A replay without a problem, or without a pair, leaves it predicted.
int measure_pairs(const KernelSetArgs& a, const std::string& set_device,
                  const std::vector<std::vector<KernelConfig>>& pairs,
                  std::set<std::pair<size_t, std::string>>& done) {
  EvaluatorOptions o = a.evaluator;
  o.gpu = a.request.gpu;
  Database db(a.request.db);
  const TuningRun run("kernel-set");
  std::unique_ptr<Evaluator> gpu;  // one worker and compile cache for every problem
  int measured = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Problem& p = a.request.workload[i].problem;
    std::vector<KernelConfig> configs;
    for (const KernelConfig& c : pairs[i])
      if (!done.count({i, c.id()})) configs.push_back(c);
    if (configs.empty()) continue;
    std::unique_ptr<Evaluator> replay;
    if (o.replay.empty() && !gpu) {
      gpu = app::make_evaluator(o, p);
      // Attempts are stored under the measuring GPU; the set reads those of its own spec.
      if (spec_name_of(gpu->device().name) != set_device)
        throw InputError("--measure measures on this machine's " + gpu->device().name +
                         ", but the set is chosen for " + set_device +
                         " (--gpu): name the local GPU's spec");
    }
    if (!o.replay.empty()) {
      try {
        replay = app::make_evaluator(o, p);
      } catch (const InputError&) {
        continue;  // the recording lacks this problem
      }
    }
    Evaluator& evaluator = gpu ? *gpu : *replay;
    std::erase_if(configs, [&](const KernelConfig& c) { return !evaluator.can_evaluate(c); });
    if (configs.empty()) continue;
    db.save_device(evaluator.device());
    evaluator.compile(p, configs);
    for (const Evaluation& e : evaluator.measure(p, configs)) {
      db.add(run.attempt(e, p, evaluator.device()));
      done.insert({i, e.config.id()});
    }
    measured += int(configs.size());
  }
  return measured;
}

// The set chosen on the store, then, for up to `rounds` rounds, the pairs it rests on that only
// the model gives measured and the set chosen again, until its figures are all measured.
app::KernelSetResult measured_kernel_set(KernelSetArgs& a) {
  app::KernelSetResult r = app::kernel_set(a.request);
  a.request.model_picks = r.model_picks;  // measurements do not move the model's picks
  std::set<std::pair<size_t, std::string>> done;
  for (int round = 1; round <= a.measure_rounds; ++round) {
    const auto pairs = app::predicted_pairs(r);
    size_t pending = 0;
    for (const auto& x : pairs) pending += x.size();
    if (pending == 0) break;
    const int measured = measure_pairs(a, r.device.name, pairs, done);
    std::fprintf(stderr, "kernel-set: round %d measured %d pairs\n", round, measured);
    if (measured == 0) break;
    r = app::kernel_set(a.request);
  }
  return r;
}

std::string time_text(const app::KernelTime& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%s", t.seconds * 1e6, t.predicted ? "*" : "");
  return buf;
}

void print_table(const app::KernelSetResult& r) {
  std::printf("kernel set of %zu on %s, from %zu candidates (calibration: %s)\n", r.members.size(),
              r.device.name.c_str(), r.candidates, r.calibration.description.c_str());
  for (size_t i = 0; i < r.members.size(); ++i)
    std::printf("  %zu. %s (runs %d problems)\n", i + 1, r.members[i].id().c_str(), r.serves[i]);
  std::printf("%-32s %8s %12s %12s %7s  %s\n", "problem", "weight", "time_us", "best_us", "loss",
              "kernel");
  for (const app::KernelSetRow& x : r.rows) {
    if (!x.kernel) {
      std::printf("%-32s %8g %12s %12s %7s  none of the set can run it\n",
                  x.entry.problem.shape_id().c_str(), x.entry.weight, "-",
                  time_text(x.best).c_str(), "-");
      continue;
    }
    std::printf("%-32s %8g %12s %12s %7.3f  %s\n", x.entry.problem.shape_id().c_str(),
                x.entry.weight, time_text(x.time).c_str(), time_text(x.best).c_str(), x.loss(),
                x.kernel->id().c_str());
  }
  std::printf(
      "weighted total %.2f us with the set, %.2f us with each problem's own best "
      "(loss %.4f)%s\n* predicted by the calibrated model (never measured)\n",
      r.total_s * 1e6, r.best_total_s * 1e6, r.best_total_s > 0 ? r.total_s / r.best_total_s : 0.0,
      r.uncovered ? (", " + std::to_string(r.uncovered) + " problems not covered").c_str() : "");
}

void run(KernelSetArgs& a) {
  const Format format = parse_format(a.format);
  if (format == Format::Csv) throw InputError("kernel-set prints a table or json, not csv");
  a.request.workload = read_workload_file(a.problems);
  if (a.measure_rounds < 0)
    throw InputError("--measure " + std::to_string(a.measure_rounds) +
                     ": rounds must be >= 0 (0: nothing measured)");
  const app::KernelSetResult r = measured_kernel_set(a);
  if (format == Format::Json)
    std::printf("%s\n", app::to_json(r).dump(2).c_str());
  else
    print_table(r);
}

}  // namespace

void register_kernel_set(CLI::App& app) {
  auto a = std::make_shared<KernelSetArgs>();
  auto* cmd = app.add_subcommand(
      "kernel-set",
      "the K kernels that minimise a workload's weighted total time, each problem running its "
      "best member (measured times from the store, the model's for pairs never measured)");
  cmd->add_option("--problems", a->problems, "the workload (tune --problems' syntax, --weight)")
      ->required();
  cmd->add_option("--size,-K", a->request.size, "kernels in the set")->required();
  cmd->add_option("--db", a->request.db, "the store")->capture_default_str();
  cmd->add_option("--gpu,-g", a->request.gpu, "built-in spec of the store's measurements")
      ->capture_default_str();
  cmd->add_option("--candidates", a->request.candidates,
                  "per problem, its fastest measured kernels considered (plus the model's pick)")
      ->capture_default_str();
  cmd->add_option("--measure", a->measure_rounds,
                  "rounds of measuring on the local GPU the pairs the set rests on that only the "
                  "model predicts (each member on every problem, each problem's best), stored, "
                  "then choosing again (0: the store and the model only)")
      ->capture_default_str();
  cmd->add_option("--replay", a->evaluator.replay,
                  "with --measure: answer from a CSV of recorded attempts instead of the GPU");
  cmd->add_option("--repetitions,-r", a->evaluator.repetitions,
                  "with --measure: timed repetitions per kernel")
      ->capture_default_str();
  cmd->add_option("--timeout", a->evaluator.timeout,
                  "with --measure: seconds one measurement may take before its worker is killed")
      ->capture_default_str();
  add_domain_option(*cmd, a->request.domain);
  add_calibration_option(*cmd, a->request.calibration);
  add_format_option(*cmd, a->format);
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
