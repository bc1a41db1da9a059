// The strategies that need no model: every configuration in order, or in random order.
#include <algorithm>
#include <future>
#include <random>

#include "search/tuning_run.hpp"

namespace gemmtune {

TuneResult sweep(const Problem& problem, Evaluator& evaluator,
                 const std::vector<KernelConfig>& configs, const Budget& budget,
                 const EvaluationSink& sink) {
  detail::TuningRun run{problem, evaluator, BudgetMeter(budget, configs.size()), sink};
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

}  // namespace gemmtune
