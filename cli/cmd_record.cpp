// gemmtune problems / record: problems drawn at random with a fixed seed, and the recording the
// model is fitted on. Per problem, a tune (its best is the problem's reference) and a stratified
// sample (the uncalibrated model's top, uniformly random configurations of the pruned space);
// each finished step is marked in the store, so an interrupted recording resumes where it was.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "cli/options.hpp"
#include "cli/tune_jobs.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct ProblemsArgs {
  ProblemSampling sampling;
  GpuOption gpu;
  double max_ms = 50;
  std::string precisions = "sdcz";
};

void run_problems(ProblemsArgs a) {
  a.sampling.max_seconds = a.max_ms * 1e-3;
  a.sampling.precisions = parse_precision_letters(a.precisions);
  const DeviceSpec d = a.gpu.device();
  std::printf(
      "# %d problems, seed %u, precisions %s, sizes %lld..%lld, under %.0f ms at %.0f%% of %s's "
      "peak\n",
      a.sampling.count, a.sampling.seed, a.precisions.c_str(),
      static_cast<long long>(a.sampling.min_size), static_cast<long long>(a.sampling.max_size),
      a.max_ms, kSamplingPeakFraction * 100, d.name.c_str());
  for (const Problem& p : random_problems(a.sampling, d))
    std::printf("%s\n", problem_options(p).c_str());
}

struct RecordArgs {
  std::string problems;
  std::string db = Database::default_path();
  EvaluatorOptions evaluator;
  std::string domain = "full";
  std::string calibration = "auto";
  double tune_seconds = 60;
  int model_top = 16;
  int random = 120;
  unsigned seed = 1;
  double seconds = 0;  // the whole run; 0: no limit
};

// A step of one problem's recording on one device. Recorded stores hold these keys: keep the
// format, or a resumed recording measures its finished problems again.
std::string step_key(const DeviceSpec& d, const Problem& p, const char* step) {
  std::ostringstream o;
  o << "record/" << d.name << "/" << p.shape_id() << "_ld" << p.lda << "," << p.ldb << "," << p.ldc
    << "_beta" << p.beta.re << "/" << step;
  return o.str();
}

// The sample step's configurations: the uncalibrated model's top and a uniformly random draw of
// the pruned space (seeded by the run's seed and the problem), less what the store has.
std::vector<KernelConfig> sample_configs(const Problem& p, const Evaluator& evaluator,
                                         const Database& db, const RecordArgs& a,
                                         std::size_t problem_index) {
  const DeviceSpec& d = evaluator.device();
  const SpaceDomain domain = SpaceDomain::named(a.domain);
  std::vector<KernelConfig> picked;
  std::set<std::string> seen;
  auto take = [&](const KernelConfig& c) {
    if (!evaluator.can_evaluate(c) || db.has(d.name, p, c)) return;
    if (seen.insert(c.id()).second) picked.push_back(c);
  };
  for (const auto& r : rank_space(p, d, a.model_top, {}, domain).top) take(r.config);
  std::vector<KernelConfig> space = pruned_space(p, d, domain);
  std::mt19937_64 rng(a.seed * 1000003ull + problem_index);
  std::shuffle(space.begin(), space.end(), rng);
  if (space.size() > std::size_t(a.random)) space.resize(std::size_t(a.random));
  for (const auto& c : space) take(c);
  return picked;
}

void run_record(const RecordArgs& a) {
  if (a.tune_seconds <= 0)
    throw InputError("--tune-seconds = " + std::to_string(a.tune_seconds) + " must be positive");
  if (a.random < 0) throw InputError("--random = " + std::to_string(a.random) + " must be >= 0");
  if (a.model_top < 1)
    throw InputError("--model-top = " + std::to_string(a.model_top) + " must be >= 1");
  // One line at a time, so that a log followed from elsewhere shows every finished step.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::vector<Problem> problems = read_problems_file(a.problems);
  Database db(a.db);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto left = [&] { return a.seconds > 0 ? a.seconds - elapsed() : 1e30; };
  // One GPU worker serves every problem; a replay answers for one problem at a time.
  std::unique_ptr<Evaluator> gpu;
  if (a.evaluator.replay.empty()) gpu = make_evaluator(a.evaluator, problems.front());
  int finished = 0;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    std::unique_ptr<Evaluator> replay;
    if (!gpu) replay = make_evaluator(a.evaluator, p);
    Evaluator* evaluator = gpu ? gpu.get() : replay.get();
    const DeviceSpec d = evaluator->device();
    const std::string tune_key = step_key(d, p, "tune"), sample_key = step_key(d, p, "sample");
    if (db.step(tune_key) && db.step(sample_key)) {
      ++finished;
      continue;
    }
    db.save_device(d);
    store_reference(db, *evaluator, p);
    // The hybrid tune and the sample are two runs, each stamped on its attempts.
    std::optional<TuningRun> run;
    run.emplace("hybrid");
    const EvaluationSink sink = [&](const Evaluation& e) { db.add(run->attempt(e, p, d)); };
    std::printf("[%zu/%zu] %s (%s)\n", i + 1, problems.size(), p.shape_id().c_str(),
                problem_options(p).c_str());
    if (!db.step(tune_key)) {
      // A tune cut short is no reference: start one only if it can run its whole budget.
      if (left() < a.tune_seconds) {
        std::printf("  stopped: %.0f s left, a tune needs %.0f\n", left(), a.tune_seconds);
        break;
      }
      HybridOptions o;
      o.budget = Budget{0, a.tune_seconds};
      o.domain = SpaceDomain::named(a.domain);
      o.coefficients = stored_coefficients(a.db, d.name, a.calibration);
      const TuneResult r = hybrid_tune(p, *evaluator, o, sink);
      std::ostringstream note;
      note << "best_s=" << (r.best ? r.best->time_s : 0)
           << " config=" << (r.best ? r.best->config.id() : "none") << " measured=" << r.evaluations
           << " seconds=" << r.seconds;
      db.mark_step(tune_key, note.str());
      std::printf("  tune: %s\n", note.str().c_str());
    }
    run.emplace(std::string(kDrawnStrategy));
    const std::vector<KernelConfig> configs = sample_configs(p, *evaluator, db, a, i);
    const TuneResult s = sweep(p, *evaluator, configs, Budget{0, std::max(1.0, left())}, sink);
    std::printf("  sample: %d of %zu measured in %.1f s\n", s.evaluations, configs.size(),
                s.seconds);
    if (s.evaluations < int(configs.size())) {
      std::printf("  stopped: the run's time ran out within the sample\n");
      break;
    }
    db.mark_step(sample_key, "measured=" + std::to_string(s.evaluations));
    ++finished;
  }
  std::printf("recorded %d of %zu problems in %.0f s (%s)\n", finished, problems.size(), elapsed(),
              a.db.c_str());
}

}  // namespace

void register_record(CLI::App& app) {
  auto pa = std::make_shared<ProblemsArgs>();
  auto* problems =
      app.add_subcommand("problems",
                         "print problems drawn at random with a fixed seed, one per line in the "
                         "problem options' syntax (for record, or held-out checks)");
  problems->add_option("--seed", pa->sampling.seed, "random seed")->capture_default_str();
  problems->add_option("--count", pa->sampling.count, "how many")->capture_default_str();
  problems->add_option("--min-size", pa->sampling.min_size, "smallest M, N, K")
      ->capture_default_str();
  problems->add_option("--max-size", pa->sampling.max_size, "largest M, N, K")
      ->capture_default_str();
  problems
      ->add_option("--max-ms", pa->max_ms,
                   "keep problems that run under this many ms at " +
                       std::to_string(int(kSamplingPeakFraction * 100)) + "% of the GPU's peak")
      ->capture_default_str();
  problems
      ->add_option("--precisions", pa->precisions,
                   "the precisions to draw from, as letters (any of sdczhbt)")
      ->capture_default_str();
  problems
      ->add_option("--batched-share", pa->sampling.batched_share,
                   "share of strided batches of small matrices (0 where --min-size exceeds " +
                       std::to_string(kSampledBatchMaxSize) + ")")
      ->capture_default_str();
  problems
      ->add_option("--odd-ld-share", pa->sampling.odd_ld_share,
                   "share with padded odd leading dimensions")
      ->capture_default_str();
  problems->add_option("--beta-share", pa->sampling.beta_share, "share with beta = 1")
      ->capture_default_str();
  add_gpu_option(*problems, pa->gpu);
  problems->callback([pa] { run_problems(*pa); });

  auto ra = std::make_shared<RecordArgs>();
  auto* record = app.add_subcommand(
      "record",
      "record a problems file for calibration: per problem a tune (the reference "
      "best) and a stratified sample; resumable, each finished step kept in the store");
  record->add_option("--problems", ra->problems, "problems file (gemmtune problems)")->required();
  record->add_option("--db", ra->db, "the store")->capture_default_str();
  add_evaluator_options(*record, ra->evaluator);
  add_domain_option(*record, ra->domain);
  add_calibration_option(*record, ra->calibration);
  record->add_option("--tune-seconds", ra->tune_seconds, "each problem's tune")
      ->capture_default_str();
  record->add_option("--model-top", ra->model_top, "the uncalibrated model's top, measured")
      ->capture_default_str();
  record->add_option("--random", ra->random, "uniformly random configurations, measured")
      ->capture_default_str();
  record->add_option("--seed", ra->seed, "seed of the random draw")->capture_default_str();
  record
      ->add_option("--seconds", ra->seconds,
                   "the whole run: no tune starts that could not finish within it (0: none)")
      ->capture_default_str();
  record->callback([ra] { run_record(*ra); });
}

}  // namespace gemmtune::cli
