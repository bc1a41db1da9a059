// tune --problems: a whole workload under one budget, split by expected gain.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/tune_jobs.hpp"

namespace gemmtune::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The workload's weighted total time from the store's best of each problem, printed per problem.
void print_weighted_total(const std::vector<WorkloadEntry>& entries, const Database& db,
                          const std::string& device) {
  double total = 0;
  int missing = 0;
  for (const WorkloadEntry& e : entries) {
    const auto best = db.best(device, e.problem);
    if (!best) {
      ++missing;
      std::printf("  %-34s weight %-8g no kernel ran correctly\n", e.problem.shape_id().c_str(),
                  e.weight);
      continue;
    }
    total += e.weight * best->median_s;
    std::printf("  %-34s weight %-8g best %10.2f us  weighted %12.2f us\n",
                e.problem.shape_id().c_str(), e.weight, best->median_s * 1e6,
                e.weight * best->median_s * 1e6);
  }
  std::printf("workload: %zu problems, weighted total %.2f us (sum of weight x best time)%s\n",
              entries.size(), total * 1e6,
              missing ? (", " + std::to_string(missing) + " without a kernel").c_str() : "");
}

std::string budget_text(const Budget& b) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", b.seconds);
  std::string text = b.evaluations > 0 ? std::to_string(b.evaluations) + " evaluations" : "";
  if (b.seconds > 0) text += (text.empty() ? "" : ", ") + std::string(seconds);
  return text.empty() ? "unlimited" : text;
}

}  // namespace

void tune_workload(const TuneArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<WorkloadEntry> entries = read_workload_file(a.problems_file);
  // Every evaluator before any tune, so that a problem the replay lacks tunes nothing. A GPU
  // evaluator serves every problem: one worker, one compile cache.
  std::vector<std::unique_ptr<Evaluator>> owned;
  std::vector<Evaluator*> evaluators;
  for (const WorkloadEntry& e : entries) {
    if (owned.empty() || !a.evaluator.replay.empty())
      owned.push_back(make_evaluator(evaluator_options(a), e.problem));
    evaluators.push_back(owned.back().get());
  }
  const DeviceSpec& d = evaluators.front()->device();
  Database db(a.db);
  db.save_device(d);
  const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
  std::printf("tune: model calibration: %s\n", calibration.description.c_str());

  std::vector<size_t> pending;
  std::vector<double> gains;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Problem& p = entries[i].problem;
    const std::string key = tune_step_key(p, d.name, a);
    if (db.step(key)) {
      std::printf("tune %s: already tuned (%s)\n", p.shape_id().c_str(), db.step(key)->c_str());
      continue;
    }
    const Ranking r = rank_space(p, d, 1, calibration.coefficients, SpaceDomain::named(a.domain));
    if (r.top.empty())
      throw InputError("no configuration of the " + a.domain + " domain can run " + p.shape_id() +
                       " on " + d.name);
    pending.push_back(i);
    gains.push_back(entries[i].weight * r.top.front().prediction.time_s);
  }
  WorkloadBudget budget(Budget{a.evaluations, a.seconds, a.cap_percent / 100}, gains);
  budget.spend_overhead(seconds_since(start));
  const ModelCoefficients coefficients =
      find_strategy(a.strategy).uses_model ? calibration.coefficients : ModelCoefficients{};
  CompileMemo memo;
  for (size_t k = 0; k < pending.size(); ++k) {
    const WorkloadEntry& e = entries[pending[k]];
    const Problem& p = e.problem;
    const Budget share = budget.share(k);
    TuneArgs own = a;
    own.evaluations = share.evaluations;
    own.seconds = share.seconds;
    std::printf("tune %s: weight %g, expected gain %.2f us, budget %s\n", p.shape_id().c_str(),
                e.weight, gains[k] * 1e6, budget_text(share).c_str());
    SharingEvaluator evaluator(*evaluators[pending[k]], memo);
    const EvaluationSink sink = [&](const Evaluation& ev) { db.add(attempt_from(ev, p, d)); };
    const TuneResult r = tune_problem(own, p, evaluator, coefficients, sink);
    std::fputs(report_text(p, r, "tune").c_str(), stdout);
    budget.spend(k, r.evaluations, r.seconds);
    db.mark_step(tune_step_key(p, d.name, a), std::to_string(r.evaluations) + " evaluations");
  }
  std::printf(
      "tuned %zu of %zu problems: %d evaluations, %.1f s; %d configurations compiled, "
      "%d compile requests answered without compiling again\n",
      pending.size(), entries.size(), budget.evaluations_spent(), seconds_since(start),
      memo.compiled, memo.shared);
  print_weighted_total(entries, db, d.name);
  if (a.recalibrate) recalibrate(db, d, a);
}

}  // namespace gemmtune::cli
