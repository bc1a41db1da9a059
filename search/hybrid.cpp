// The model-driven strategy as named steps over one budget: shortlist, compile batch, measure,
// refine round, and seeding the next basin once a refinement converges.
#include <algorithm>
#include <optional>
#include <ranges>
#include <set>

#include "search/tuning_run.hpp"

namespace gemmtune {
namespace {

// Refinement measures the neighbours of the best kLeaders measured so far, up to kPerRound of
// them a look and kLooks looks a round.
constexpr size_t kLeaders = 3;
constexpr int kPerRound = 6;
constexpr int kLooks = 2;
// A round improves when it gains more than timing noise; smaller gains end the refinement,
// and the budget goes to the next families. Counting any gain kept 90-240 s tunes of the D
// LU shapes on the H100 walking unroll, raster and stage variants a few tenths of a per cent
// apart (2,210 evaluations in 47 families; 2,252 in 15), never reaching better tiles.
constexpr double kMinGain = 0.01;

// Family-first order (the best-predicted variant of each tile family before any second one).
std::vector<KernelConfig> families_first(const std::vector<KernelConfig>& configs) {
  std::vector<const KernelConfig*> pointers;
  for (const auto& c : configs) pointers.push_back(&c);
  std::vector<KernelConfig> out;
  for (size_t i : shortlist_order(pointers)) out.push_back(configs[i]);
  return out;
}

// Scales a candidate's prediction by the measured / predicted ratio of its nearest measured
// configurations (fewest differing parameters), so refinement learns where the model is off.
class LocalCorrection {
 public:
  void learn(const Problem& p, const DeviceSpec& d, const std::vector<Evaluation>& history,
             const ModelCoefficients& k) {
    ratios_.clear();
    for (const auto& e : history)
      if (e.ok() && e.time_s > 0) {
        const double pred = predict(p, d, e.config, k, e.registers > 0 ? e.registers : -1).time_s;
        ratios_.emplace_back(config_csv_values(e.config), e.time_s / pred);
      }
  }

  double corrected(const KernelConfig& c, double predicted) const {
    const auto v = config_csv_values(c);
    int best_distance = 1 << 30;
    double sum = 0;
    int count = 0;
    for (const auto& [w, ratio] : ratios_) {
      int distance = 0;
      for (size_t i = 0; i < v.size(); ++i) distance += v[i] != w[i];
      if (distance < best_distance) {
        best_distance = distance;
        sum = 0;
        count = 0;
      }
      if (distance == best_distance) {
        sum += ratio;
        ++count;
      }
    }
    return count ? predicted * sum / count : predicted;
  }

 private:
  std::vector<std::pair<std::vector<int>, double>> ratios_;  // parameters, measured / predicted
};

// What a step left the run to do next.
enum class Step { Continue, Done, BudgetSpent };

class HybridTuner {
 public:
  HybridTuner(const Problem& problem, Evaluator& evaluator, const HybridOptions& options,
              const EvaluationSink& sink)
      : p_(problem),
        d_(evaluator.device()),
        o_(options),
        run_{problem, evaluator, BudgetMeter(options.budget), sink, options.objective} {}

  // Shortlist, compile the first batch, measure its best, then refine; with budget left after a
  // refinement converges, the next configurations of the shortlist seed another one (a
  // different basin), until the budget or the model's ranking runs out. Without a budget the
  // first convergence ends the run.
  TuneResult tune() {
    shortlist();
    compile_batch(0.5);
    if (!measure_first()) return run_.finish();
    for (;;) {
      if (!refine()) return run_.finish();
      if (!run_.meter.limited()) break;
      const Step next = seed_next_basin();
      if (next == Step::BudgetSpent) return run_.finish();
      if (next == Step::Done) break;
    }
    run_.result.stopped_by = run_.result.best ? "converged" : "nothing ran";
    return run_.finish();
  }

 private:
  // The model's ranking of the pruned space, what the evaluator can run of it, family first.
  void shortlist() {
    const Ranking ranking = rank_space(p_, d_, std::max(2048, o_.compile_top * 32), o_.coefficients,
                                       o_.domain, o_.constraints);
    run_.meter.set_space_size(size_t(ranking.evaluated));
    std::vector<KernelConfig> runnable;
    for (const auto& r : ranking.top)
      if (run_.evaluator.can_evaluate(r.config)) runnable.push_back(r.config);
    pool_ = families_first(runnable);
    if (pool_.empty())
      throw InputError("no configuration survives the constraints for " + p_.shape_id());
    // The calibration's proven kernels join the first compiled batch (with_proven), taken out
    // of the pool's rest so that none is compiled twice.
    first_batch_ = std::min(pool_.size(), size_t(std::max(1, o_.compile_top)));
    const std::vector<KernelConfig> head(pool_.begin(), pool_.begin() + long(first_batch_));
    std::vector<KernelConfig> proven;
    std::set<std::string> ids;
    for (auto& c : with_proven(p_, d_, o_.coefficients, head) | std::views::drop(first_batch_))
      if (run_.evaluator.can_evaluate(c)) {
        ids.insert(c.id());
        proven.push_back(std::move(c));
      }
    if (proven.empty()) return;
    std::erase_if(pool_, [&](const KernelConfig& c) { return ids.count(c.id()) > 0; });
    pool_.insert(pool_.begin() + long(first_batch_), proven.begin(), proven.end());
    first_batch_ += proven.size();
  }

  // Compiles configs a compile width at a time and stops before a piece that would take the
  // run past `share` of its time budget (a piece takes about as long as the last one did);
  // compiling everything before measuring spent the budget on the H100 (S 6144x6080x64: 64
  // kernels of ~250 registers, 4.75 s each, left time to measure one). Without a time budget it
  // compiles everything at once. Returns what the compiler said of the configurations it
  // compiled, a prefix of configs.
  std::vector<CompiledInfo> compile(const std::vector<KernelConfig>& configs, double share) {
    const bool paced = run_.meter.timed();
    const size_t width =
        paced ? size_t(std::max(1, run_.evaluator.compile_width())) : configs.size();
    std::vector<CompiledInfo> compiled;
    double piece_s = 0;
    while (compiled.size() < configs.size()) {
      if (paced && !compiled.empty() && !run_.meter.fits(piece_s, share)) break;
      const double piece_start = run_.meter.elapsed();
      const auto first = configs.begin() + long(compiled.size());
      const std::vector<KernelConfig> piece(
          first, first + long(std::min(width, configs.size() - compiled.size())));
      const std::vector<CompiledInfo> info = run_.evaluator.compile(p_, piece);
      compiled.insert(compiled.end(), info.begin(), info.end());
      piece_s = run_.meter.elapsed() - piece_start;
    }
    run_.result.compiled += int(compiled.size());
    return compiled;
  }

  // The next compile_top configurations of the pool, compiled and re-ranked with their real
  // registers, join the measured order; the first batch is what the user's top k means. The
  // first batch stops growing at half the time budget, so measuring starts; what it leaves
  // stays in the pool.
  void compile_batch(double share) {
    const size_t end = std::min(
        pool_.size(), pooled_ == 0 ? first_batch_ : pooled_ + size_t(std::max(1, o_.compile_top)));
    std::vector<KernelConfig> batch(pool_.begin() + long(pooled_), pool_.begin() + long(end));
    const std::vector<CompiledInfo> compiled = compile(batch, share);
    batch.resize(compiled.size());
    pooled_ += batch.size();
    // Re-ranked with the real registers, then family-first again: sorted by prediction alone,
    // the batch's first measure_top were variants of one family, and so was all refinement
    // after them (S 6144x6080x64 on the H100: all 20 attempts BM96_BN192_BK16_DX8_DY16).
    // Family-first within each standing, so that no spilling kernel goes before a clean one.
    std::vector<KernelConfig> clean, spilling;
    for (const auto& [standing, i] : compiled_ranking(p_, d_, batch, compiled, o_.coefficients))
      (standing.spills ? spilling : clean).push_back(batch[i]);
    for (const auto* tier : {&clean, &spilling})
      for (auto& c : families_first(*tier)) reranked_.push_back(std::move(c));
  }

  // The first measure_top of the re-ranked batch. Returns false when the budget is spent.
  bool measure_first() {
    for (size_t i = 0; i < reranked_.size() && int(i) < o_.measure_top; ++i)
      if (!run_.measure(reranked_[i])) return false;
    next_ = size_t(std::max(0, o_.measure_top));
    return true;
  }

  // Twins the model cannot tell apart, of which the space holds one: which shared-address width
  // suits a SIMT kernel is up to ptxas's scheduling (on the H100 SL1 took 21% less time for an S
  // 4097^3 kernel, up to 12% more for a 1000^3 one, within 2% for most), and whether an mma
  // kernel's C is better staged through shared memory depends on how much C weighs and on the
  // registers the staging takes (VC1; search/constraints.cpp). Each refinement round first
  // measures the best so far's twins. Returns false when the budget is spent.
  bool measure_twins() {
    const KernelConfig best = run_.result.best->config;
    if (best.has_shared32_path()) {
      KernelConfig twin = best;
      twin.shared32 = 1 - twin.shared32;
      if (enumerates(o_.domain.shared32, twin.shared32) && !measure_twin(twin)) return false;
    }
    if (best.mma && best.has_vector_c_path(p_.precision, p_.ldc)) {
      KernelConfig twin = best;
      twin.vec_c = 1 - twin.vec_c;
      if (enumerates(o_.domain.vec_c, twin.vec_c) && !measure_twin(twin)) return false;
    }
    return true;
  }
  bool measure_twin(const KernelConfig& twin) {
    if (run_.was_measured(twin) || !run_.evaluator.can_evaluate(twin) || check_hard(p_, d_, twin))
      return true;
    if (compile({twin}, 1.0).empty()) return false;
    return run_.measure(twin);
  }

  // Unmeasured neighbours of the best measured configurations, each with its prediction scaled
  // by the local correction, best first.
  std::vector<KernelConfig> refinement_candidates(const LocalCorrection& correction) {
    std::vector<const Evaluation*> leaders;
    for (const auto& e : run_.result.history)
      if (e.ok()) leaders.push_back(&e);
    std::sort(leaders.begin(), leaders.end(),
              [&](auto* a, auto* b) { return score(*a, o_.objective) < score(*b, o_.objective); });
    std::vector<std::pair<double, KernelConfig>> estimated;
    std::set<std::string> queued;
    for (size_t l = 0; l < leaders.size() && l < kLeaders; ++l)
      for (const auto& n : neighbours(p_, d_, leaders[l]->config, o_.domain))
        if (!run_.was_measured(n) && run_.evaluator.can_evaluate(n) &&
            queued.insert(n.id()).second) {
          try {
            estimated.emplace_back(
                correction.corrected(n, predict(p_, d_, n, o_.coefficients).time_s), n);
          } catch (const InputError&) {
          }
        }
    std::stable_sort(estimated.begin(), estimated.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<KernelConfig> candidates;
    for (size_t i = 0; i < estimated.size() && int(i) < 2 * kPerRound * kLooks; ++i)
      candidates.push_back(estimated[i].second);
    return candidates;
  }

  // One round of coordinate descent: only the candidates the corrected model likes best are
  // compiled (compiling is most of a tuning run's time), re-ranked with their real registers and
  // measured until the round gains more than kMinGain; a look that does not gets a second look
  // at the next-best candidates before the round calls it converged (Done).
  Step refine_round() {
    if (!measure_twins()) return Step::BudgetSpent;
    LocalCorrection correction;
    correction.learn(p_, d_, run_.result.history, o_.coefficients);
    std::vector<KernelConfig> candidates = refinement_candidates(correction);
    if (candidates.empty()) return Step::Done;
    const std::vector<CompiledInfo> compiled = compile(candidates, 1.0);
    candidates.resize(compiled.size());
    std::vector<std::pair<CompiledStanding, size_t>> order;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (auto standing = compiled_standing(p_, d_, candidates[i], compiled[i], o_.coefficients)) {
        standing->time_s = correction.corrected(candidates[i], standing->time_s);
        order.emplace_back(*standing, i);
      }
    std::stable_sort(order.begin(), order.end());
    const double goal = score(*run_.result.best, o_.objective) * (1 - kMinGain);
    bool improved = false;
    for (size_t i = 0; i < order.size() && int(i) < kPerRound * kLooks && !improved; ++i) {
      if (!run_.measure(candidates[order[i].second])) return Step::BudgetSpent;
      improved = score(*run_.result.best, o_.objective) < goal && (int(i) + 1) % kPerRound == 0;
    }
    return score(*run_.result.best, o_.objective) < goal ? Step::Continue : Step::Done;
  }

  // Rounds until one does not improve; the last round's best meets its twin too (a round may
  // improve by less than kMinGain). Returns false when the budget is spent.
  bool refine() {
    for (int round = 0; round < o_.refine_rounds && run_.result.best; ++round) {
      const Step step = refine_round();
      if (step == Step::BudgetSpent) return false;
      if (step == Step::Done) break;
    }
    return !run_.result.best || measure_twins();
  }

  // The next measure_top / 2 unmeasured configurations of the measured order seed another
  // refinement; a used-up order is extended by the next batch of the model's ranking.
  Step seed_next_basin() {
    while (next_ >= reranked_.size() && pooled_ < pool_.size()) {
      if (run_.exhausted()) return Step::BudgetSpent;
      compile_batch(1.0);
    }
    if (next_ >= reranked_.size()) return Step::Done;
    const size_t seeds = std::max<size_t>(1, size_t(o_.measure_top) / 2);
    for (size_t i = 0; i < seeds && next_ < reranked_.size(); ++next_)
      if (!run_.was_measured(reranked_[next_])) {
        if (!run_.measure(reranked_[next_])) return Step::BudgetSpent;
        ++i;
      }
    return Step::Continue;
  }

  const Problem& p_;
  const DeviceSpec& d_;
  const HybridOptions& o_;
  detail::TuningRun run_;
  std::vector<KernelConfig> pool_;      // the shortlist, family first
  size_t pooled_ = 0;                   // how much of the pool has been compiled
  size_t first_batch_ = 0;              // the first batch: compile_top and the proven kernels
  std::vector<KernelConfig> reranked_;  // compiled batches, re-ranked, in the order measured
  size_t next_ = 0;                     // the next of reranked_ to seed a basin
};

}  // namespace

TuneResult hybrid_tune(const Problem& problem, Evaluator& evaluator, const HybridOptions& options,
                       const EvaluationSink& sink) {
  return HybridTuner(problem, evaluator, options, sink).tune();
}

}  // namespace gemmtune
