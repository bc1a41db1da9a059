// Tuning strategies over an Evaluator: sweep, random, and the model-driven hybrid.
#include <algorithm>
#include <chrono>
#include <future>
#include <limits>
#include <optional>
#include <random>
#include <set>

#include "search/constraints.hpp"
#include "search/search.hpp"

namespace gemmtune {
namespace {

using Clock = std::chrono::steady_clock;

// Measures configurations one at a time, keeping the history and the budget.
struct Run {
  const Problem& problem;
  Evaluator& evaluator;
  const Budget& budget;
  const EvaluationSink& sink;
  TuneResult result;
  Clock::time_point start = Clock::now();
  std::set<std::string> measured;
  Objective objective = Objective::Time;

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  bool exhausted() {
    if (budget.evaluations > 0 && result.evaluations >= budget.evaluations) {
      result.stopped_by = "evaluation budget";
      return true;
    }
    // A time budget that compiling used up must still leave the user a kernel: until one
    // measures correctly, up to kGraceEvaluations go on past it.
    constexpr int kGraceEvaluations = 8;
    if (budget.seconds > 0 && elapsed() >= budget.seconds &&
        (result.best || result.evaluations >= kGraceEvaluations)) {
      result.stopped_by = "time budget";
      return true;
    }
    return false;
  }

  // Returns false when the budget is spent.
  bool measure(const KernelConfig& c) {
    if (!measured.insert(c.id()).second) return true;
    if (exhausted()) return false;
    Evaluation e = evaluator.measure(problem, {c}).at(0);
    e.config = c;
    ++result.evaluations;
    const double s = score(e, objective);
    if (s < std::numeric_limits<double>::infinity() && e.time_s > 0 &&
        (!result.best || s < score(*result.best, objective)))
      result.best = e;
    result.best_after.push_back(result.best ? result.best->time_s
                                            : std::numeric_limits<double>::infinity());
    result.history.push_back(e);
    if (sink) sink(e);
    return true;
  }

  TuneResult finish() {
    result.seconds = elapsed();
    return std::move(result);
  }
};

// A kernel the compiler spilled this much of to local memory is not the kernel the model
// describes: its time goes to local-memory traffic (one 6144x6080x64 SGEMM tiling came out with
// 32 registers and 41 KB of spills per thread, 40x slower than predicted).
// The few bytes ptxas often spills cost little, so only heavy spilling rules a kernel out.
constexpr int kMaxSpillBytes = 128;

// Predicted time with the compiler's registers, or nothing where the compiled kernel is not a
// candidate (it failed to compile, spilled heavily, or does not fit with its real registers).
std::optional<double> predict_compiled(const Problem& p, const DeviceSpec& d, const KernelConfig& c,
                                       const CompiledInfo& info, const ModelCoefficients& k) {
  if (!info.ok() || info.spill_bytes > kMaxSpillBytes) return std::nullopt;
  try {
    return predict(p, d, c, k, info.registers > 0 ? info.registers : -1).time_s;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// Orders the candidates among configurations by predicted time with the compiler's registers.
std::vector<KernelConfig> by_prediction(const Problem& p, const DeviceSpec& d,
                                        std::vector<KernelConfig> configs,
                                        const std::vector<CompiledInfo>& compiled,
                                        const ModelCoefficients& k) {
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < configs.size(); ++i)
    if (const auto t = predict_compiled(p, d, configs[i], compiled[i], k))
      order.emplace_back(*t, i);
  std::stable_sort(order.begin(), order.end());
  std::vector<KernelConfig> out;
  for (auto& [t, i] : order) out.push_back(configs[i]);
  return out;
}

}  // namespace

Objective parse_objective(const std::string& name) {
  if (name == "time") return Objective::Time;
  if (name == "energy") return Objective::Energy;
  if (name == "edp") return Objective::Edp;
  throw InputError("objective '" + name + "' is not one of time, energy, edp");
}

double score(const Evaluation& e, Objective objective) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!e.ok() || !(e.time_s > 0)) return inf;
  switch (objective) {
    case Objective::Time:
      return e.time_s;
    case Objective::Energy:
      return e.energy_j > 0 ? e.energy_j : inf;
    case Objective::Edp:
      return e.energy_j > 0 ? e.energy_j * e.time_s : inf;
  }
  return inf;
}

TuneResult sweep(const Problem& problem, Evaluator& evaluator,
                 const std::vector<KernelConfig>& configs, const Budget& budget,
                 const EvaluationSink& sink) {
  Run run{problem, evaluator, budget, sink, {}, Clock::now(), {}, Objective::Time};
  // Compiling in chunks lets the evaluator use every core, where measuring one by one would
  // compile serially; a chunk is small so a time budget wastes little compilation. The next
  // chunk compiles while this one is measured, so the cores and the GPU work at once.
  constexpr size_t kChunk = 64;
  auto chunk_at = [&](size_t first) {
    return std::vector<KernelConfig>(
        configs.begin() + std::ptrdiff_t(first),
        configs.begin() + std::ptrdiff_t(std::min(configs.size(), first + kChunk)));
  };
  auto compile_async = [&](size_t first) {
    run.result.compiled += int(std::min(kChunk, configs.size() - first));
    return std::async(std::launch::async, [&evaluator, &problem, chunk = chunk_at(first)] {
      evaluator.compile(problem, chunk);
    });
  };
  std::future<void> compiling;
  if (!configs.empty() && !run.exhausted()) compiling = compile_async(0);
  for (size_t first = 0; first < configs.size(); first += kChunk) {
    if (run.exhausted()) return run.finish();
    compiling.get();
    if (first + kChunk < configs.size()) compiling = compile_async(first + kChunk);
    for (const auto& c : chunk_at(first))
      if (!run.measure(c)) return run.finish();  // the chunk compiling ahead is waited for
  }
  run.result.stopped_by = "space exhausted";
  return run.finish();
}

TuneResult random_search(const Problem& problem, Evaluator& evaluator,
                         std::vector<KernelConfig> configs, unsigned seed, const Budget& budget,
                         const EvaluationSink& sink) {
  std::mt19937 rng(seed);
  std::shuffle(configs.begin(), configs.end(), rng);
  return sweep(problem, evaluator, configs, budget, sink);
}

std::vector<KernelConfig> neighbours(const Problem& problem, const DeviceSpec& device,
                                     const KernelConfig& c, const SpaceDomain& dom) {
  std::vector<KernelConfig> out;
  std::set<std::string> seen{c.id()};
  const detail::StageContext split_rules(problem, device, ConstraintOptions{}, dom);
  const int shared32_of_space = enumerates(dom.shared32, 0) ? 0 : 1;
  auto add = [&](KernelConfig n) {
    // Read layouts keep their width along the contiguous dimension; the other side follows.
    if (n.dim_xa > 0 && n.threads() % n.dim_xa == 0) n.dim_ya = n.threads() / n.dim_xa;
    if (n.dim_xb > 0 && n.threads() % n.dim_xb == 0) n.dim_yb = n.threads() / n.dim_xb;
    // The cp.async pipeline fixes what it does not use: layouts its copies can write (stored
    // order for vector copies), no register prefetch, zero-filled edges, two stages at least;
    // register staging has at most two.
    if (n.async_copy) {
      if (!detail::async_copy_lands(n, problem, true))
        n.smem_a_kmajor = detail::stored_order_kmajor(problem, true);
      if (!detail::async_copy_lands(n, problem, false))
        n.smem_b_kmajor = detail::stored_order_kmajor(problem, false);
      n.prefetch = 0;
      n.edge = EdgeMode::Predicate;
      n.stages = std::max(2, n.stages);
    } else {
      n.stages = std::min(2, n.stages);
    }
    if (n.vec_c && !n.has_vector_c_path(problem.ldc)) n.vec_c = 0;  // VC1 would be VC0
    if (!n.has_shared32_path()) n.shared32 = 0;                     // no vector loads left
    // A step onto vector loads takes the space's variant of them (SL1 only where SL0 is not).
    if (n.has_shared32_path() && !c.has_shared32_path()) n.shared32 = shared32_of_space;
    if (check_hard(problem, device, n)) return;
    // Split-K only where the space would have it (few tiles, enough K per split).
    if (!detail::split_k_fits(n, split_rules)) return;
    if (seen.insert(n.id()).second) out.push_back(n);
  };
  // One step either way along an ordered domain; every other value of an unordered one.
  auto step = [&](int KernelConfig::*member, const std::vector<int>& values, bool ordered) {
    const auto it = std::find(values.begin(), values.end(), c.*member);
    for (size_t i = 0; i < values.size(); ++i) {
      const bool adjacent = it == values.end() || !ordered ||
                            i + 1 == size_t(it - values.begin()) ||
                            i == size_t(it - values.begin()) + 1;
      if (!adjacent || values[i] == c.*member) continue;
      KernelConfig n = c;
      n.*member = values[i];
      add(n);
    }
  };
  step(&KernelConfig::blk_m, dom.blk_m, true);
  step(&KernelConfig::blk_n, dom.blk_n, true);
  step(&KernelConfig::blk_k, dom.blk_k, true);
  step(&KernelConfig::dim_x, dom.dim_x, true);
  step(&KernelConfig::dim_y, dom.dim_y, true);
  step(&KernelConfig::dim_xa, dom.dim_xa, true);
  step(&KernelConfig::dim_xb, dom.dim_xb, true);
  step(&KernelConfig::vec_a, dom.vec_a, true);
  step(&KernelConfig::vec_b, dom.vec_b, true);
  step(&KernelConfig::stages, dom.stages, true);
  step(&KernelConfig::mma, dom.mma, false);
  step(&KernelConfig::async_copy, dom.async_copy, false);
  step(&KernelConfig::split_k, dom.split_k, true);
  step(&KernelConfig::vec_c, dom.vec_c, false);
  step(&KernelConfig::shared32, dom.shared32, false);
  step(&KernelConfig::pad, {0, 1, 2, 3, 4}, true);
  step(&KernelConfig::smem_a_kmajor, {0, 1}, false);
  step(&KernelConfig::smem_b_kmajor, {0, 1}, false);
  step(&KernelConfig::prefetch, {0, 1, 2, 3}, false);
  step(&KernelConfig::unroll, {0, 1, 2, 4, 8}, false);
  step(&KernelConfig::raster, {1, 2, 4, 8, 16}, true);
  step(&KernelConfig::vec_s, {1, 2, 4}, true);
  KernelConfig e = c;
  e.edge = c.edge == EdgeMode::Predicate ? EdgeMode::Redirect : EdgeMode::Predicate;
  add(e);
  return out;
}

TuneResult hybrid_tune(const Problem& problem, Evaluator& evaluator, const HybridOptions& o,
                       const EvaluationSink& sink) {
  Run run{problem, evaluator, o.budget, sink, {}, Clock::now(), {}, o.objective};
  const DeviceSpec& d = evaluator.device();
  // The shortlist takes the best-predicted variant of each tile family before any second one.
  const Ranking ranking = rank_space(problem, d, std::max(2048, o.compile_top * 32), o.coefficients,
                                     o.domain, o.constraints);
  std::vector<const KernelConfig*> runnable;
  for (const auto& r : ranking.top)
    if (evaluator.can_evaluate(r.config)) runnable.push_back(&r.config);
  std::vector<KernelConfig> pool;
  for (size_t i : shortlist_order(runnable)) pool.push_back(*runnable[i]);
  if (pool.empty())
    throw InputError("no configuration survives the constraints for " + problem.shape_id());
  // Compiles configs a compile width at a time and stops before a piece that would take the
  // run past `share` of its time budget (a piece takes about as long as the last one did);
  // compiling everything before measuring spent the budget on the H100 (S 6144x6080x64: 64
  // kernels of ~250 registers, 4.75 s each, left time to measure one). Without a time budget it
  // compiles everything at once. Returns what the compiler said of the configurations it
  // compiled, a prefix of configs.
  auto compile_paced = [&](const std::vector<KernelConfig>& configs, double share) {
    const bool paced = o.budget.seconds > 0;
    const size_t width = paced ? size_t(std::max(1, evaluator.compile_width())) : configs.size();
    std::vector<CompiledInfo> compiled;
    double piece_s = 0;
    while (compiled.size() < configs.size()) {
      if (paced && !compiled.empty() && run.elapsed() + piece_s > share * o.budget.seconds) break;
      const double piece_start = run.elapsed();
      const auto first = configs.begin() + long(compiled.size());
      const std::vector<KernelConfig> piece(
          first, first + long(std::min(width, configs.size() - compiled.size())));
      const std::vector<CompiledInfo> info = evaluator.compile(problem, piece);
      compiled.insert(compiled.end(), info.begin(), info.end());
      piece_s = run.elapsed() - piece_start;
    }
    run.result.compiled += int(compiled.size());
    return compiled;
  };
  // The shortlist grows by compile_top configurations of the pool at a time, each batch
  // re-ranked with its real registers; the first batch is what the user's top k means. The first
  // batch stops growing at half the time budget, so measuring starts; what it leaves stays in
  // the pool.
  std::vector<KernelConfig> reranked;
  size_t pooled = 0;
  auto compile_batch = [&](double share) {
    const size_t end = std::min(pool.size(), pooled + size_t(std::max(1, o.compile_top)));
    std::vector<KernelConfig> batch(pool.begin() + long(pooled), pool.begin() + long(end));
    const std::vector<CompiledInfo> compiled = compile_paced(batch, share);
    batch.resize(compiled.size());
    pooled += batch.size();
    // Re-ranked with the real registers, then family-first again: sorted by prediction alone,
    // the batch's first measure_top were variants of one family, and so was all refinement
    // after them (S 6144x6080x64 on the H100: all 20 attempts BM96_BN192_BK16_DX8_DY16).
    const auto ordered = by_prediction(problem, d, batch, compiled, o.coefficients);
    std::vector<const KernelConfig*> ranked;
    for (const auto& c : ordered) ranked.push_back(&c);
    for (size_t i : shortlist_order(ranked)) reranked.push_back(ordered[i]);
  };
  compile_batch(0.5);
  for (size_t i = 0; i < reranked.size() && int(i) < o.measure_top; ++i)
    if (!run.measure(reranked[i])) return run.finish();

  // Refinement: candidates are the neighbours (one parameter, one step) of the best three
  // measured so far. Each candidate's prediction is scaled by the measured / predicted ratio of
  // its nearest measured configuration, so the search learns where the model is off. It moves
  // on while a round improves by more than kMinGain; a round that does not gets a second look at
  // the next-best candidates before the search calls it converged.
  constexpr int kPerRound = 6;
  constexpr int kLooks = 2;
  // A round improves when it gains more than timing noise; smaller gains end the refinement,
  // and the budget goes to the next families. Counting any gain kept 90-240 s tunes of the D
  // LU shapes on the H100 walking unroll, raster and stage variants a few tenths of a per cent
  // apart (2,210 evaluations in 47 families; 2,252 in 15), never reaching better tiles.
  constexpr double kMinGain = 0.01;
  std::vector<std::pair<std::vector<int>, double>> ratios;  // parameters, measured / predicted
  auto learn = [&] {
    ratios.clear();
    for (const auto& e : run.result.history)
      if (e.ok() && e.time_s > 0) {
        const double pred =
            predict(problem, d, e.config, o.coefficients, e.registers > 0 ? e.registers : -1)
                .time_s;
        ratios.emplace_back(config_csv_values(e.config), e.time_s / pred);
      }
  };
  auto corrected = [&](const KernelConfig& c, double predicted) {
    const auto v = config_csv_values(c);
    int best_distance = 1 << 30;
    double sum = 0;
    int count = 0;
    for (const auto& [w, ratio] : ratios) {
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
  };
  // One refinement: rounds of neighbours until a round does not improve. Only the candidates
  // the corrected model likes best are compiled (compiling is most of a tuning run's time),
  // then re-ranked with their real registers. Returns false when the budget is spent.
  // Which shared-address width suits a kernel is up to ptxas's scheduling: on the H100 SL1 took
  // 21% less time for an S 4097^3 kernel and up to 12% more for a 1000^3 one, and was within 2%
  // for most. The model cannot tell those apart, so each
  // refinement round first measures the best so far's twin (the space holds one of the two).
  auto measure_shared32_twin = [&]() -> bool {
    KernelConfig twin = run.result.best->config;
    if (!twin.has_shared32_path()) return true;
    twin.shared32 = 1 - twin.shared32;
    if (!enumerates(o.domain.shared32, twin.shared32) || run.measured.count(twin.id()) ||
        !evaluator.can_evaluate(twin) || check_hard(problem, d, twin))
      return true;
    if (compile_paced({twin}, 1.0).empty()) return false;
    return run.measure(twin);
  };
  auto refine_rounds = [&]() -> bool {
    for (int round = 0; round < o.refine_rounds && run.result.best; ++round) {
      if (!measure_shared32_twin()) return false;
      learn();
      std::vector<const Evaluation*> leaders;
      for (const auto& e : run.result.history)
        if (e.ok()) leaders.push_back(&e);
      std::sort(leaders.begin(), leaders.end(),
                [&](auto* a, auto* b) { return score(*a, o.objective) < score(*b, o.objective); });
      std::vector<std::pair<double, KernelConfig>> estimated;
      std::set<std::string> queued;
      for (size_t l = 0; l < leaders.size() && l < 3; ++l)
        for (const auto& n : neighbours(problem, d, leaders[l]->config, o.domain))
          if (!run.measured.count(n.id()) && evaluator.can_evaluate(n) &&
              queued.insert(n.id()).second) {
            try {
              estimated.emplace_back(corrected(n, predict(problem, d, n, o.coefficients).time_s),
                                     n);
            } catch (const InputError&) {
            }
          }
      if (estimated.empty()) return true;
      std::stable_sort(estimated.begin(), estimated.end(),
                       [](auto& a, auto& b) { return a.first < b.first; });
      std::vector<KernelConfig> candidates;
      for (size_t i = 0; i < estimated.size() && int(i) < 2 * kPerRound * kLooks; ++i)
        candidates.push_back(estimated[i].second);
      const std::vector<CompiledInfo> ncompiled = compile_paced(candidates, 1.0);
      candidates.resize(ncompiled.size());
      std::vector<std::pair<double, size_t>> order;
      for (size_t i = 0; i < candidates.size(); ++i)
        if (const auto t =
                predict_compiled(problem, d, candidates[i], ncompiled[i], o.coefficients))
          order.emplace_back(corrected(candidates[i], *t), i);
      std::stable_sort(order.begin(), order.end());
      const double goal = score(*run.result.best, o.objective) * (1 - kMinGain);
      bool improved = false;
      for (size_t i = 0; i < order.size() && int(i) < kPerRound * kLooks && !improved; ++i) {
        if (!run.measure(candidates[order[i].second])) return false;
        improved = score(*run.result.best, o.objective) < goal && (int(i) + 1) % kPerRound == 0;
      }
      if (score(*run.result.best, o.objective) >= goal) return true;
    }
    return true;
  };
  // The last round's best meets its twin too (a round may improve by less than kMinGain).
  auto refine = [&]() -> bool {
    return refine_rounds() && (!run.result.best || measure_shared32_twin());
  };

  // Converged with budget left: the next configurations of the shortlist seed another
  // refinement (a different basin); a used-up shortlist is extended by the next batch of the
  // model's ranking, until the budget or the ranking runs out. Without a budget the first
  // convergence ends the run.
  const bool budgeted = o.budget.seconds > 0 || o.budget.evaluations > 0;
  size_t next = size_t(std::max(0, o.measure_top));
  for (;;) {
    if (!refine()) return run.finish();
    if (!budgeted) break;
    while (next >= reranked.size() && pooled < pool.size()) {
      if (run.exhausted()) return run.finish();
      compile_batch(1.0);
    }
    if (next >= reranked.size()) break;
    const size_t seeds = std::max<size_t>(1, size_t(o.measure_top) / 2);
    for (size_t i = 0; i < seeds && next < reranked.size(); ++next)
      if (!run.measured.count(reranked[next].id())) {
        if (!run.measure(reranked[next])) return run.finish();
        ++i;
      }
  }
  run.result.stopped_by = run.result.best ? "converged" : "nothing ran";
  return run.finish();
}

}  // namespace gemmtune
