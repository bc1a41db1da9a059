// The model's ranking of a pruned space: predict everything, keep the best k.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>

#include "search/constraints.hpp"

namespace gemmtune {

namespace {
struct Candidate {
  Ranked ranked;
  std::uint64_t order;  // place in the serial enumeration: breaks ties the same way every run
};
bool faster(const Candidate& a, const Candidate& b) {
  if (a.ranked.prediction.time_s != b.ranked.prediction.time_s)
    return a.ranked.prediction.time_s < b.ranked.prediction.time_s;
  return a.order < b.order;
}
void lower_to(std::atomic<double>& a, double v) {
  double now = a.load(std::memory_order_relaxed);
  while (v < now && !a.compare_exchange_weak(now, v, std::memory_order_relaxed)) {
  }
}
}  // namespace

Ranking rank_space(const Problem& problem, const DeviceSpec& device, int top_k,
                   const ModelCoefficients& coefficients, const SpaceDomain& domain,
                   const ConstraintOptions& options) {
  if (top_k < 1) throw InputError("top k = " + std::to_string(top_k) + " must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  // Each worker predicts what it walks and keeps its own best top_k in a max-heap (the slowest
  // on top); the heaps are merged at the end.
  struct Best {
    std::vector<Candidate> heap;
    std::int64_t evaluated = 0;
  };
  std::vector<Best> best(static_cast<std::size_t>(hardware_threads()));
  // The learned trees cost more than the rest of the model: a configuration's trees are walked
  // only while its time may still come under the slowest of a full heap. Any worker's full heap
  // will do: a configuration slower than its slowest has top_k faster ones, so it cannot be in
  // the merged top whichever worker walks it.
  ModelCoefficients before_trees = coefficients;
  before_trees.learned = {};
  const bool trees = !coefficients.learned.empty();
  const LearnedBounds bounds = learned_bounds(coefficients.learned, problem);
  std::atomic<double> least_full_slowest{std::numeric_limits<double>::infinity()};
  Ranking r;
  r.funnel = detail::walk_space(
      problem, device, domain, options,
      [&](const KernelConfig& c, std::uint64_t order, int worker) {
        Best& b = best[std::size_t(worker)];
        ++b.evaluated;
        Candidate cand{{c, predict(problem, device, c, before_trees)}, order};
        const bool full = int(b.heap.size()) >= top_k;
        if (trees) {
          double ceiling = least_full_slowest.load(std::memory_order_relaxed);
          if (full) ceiling = std::min(ceiling, b.heap.front().ranked.prediction.time_s);
          if (!apply_learned_correction_unless_above(problem, c, coefficients.learned, bounds,
                                                     ceiling, cand.ranked.prediction))
            return;
        }
        if (!full) {
          b.heap.push_back(std::move(cand));
          std::push_heap(b.heap.begin(), b.heap.end(), faster);
        } else if (faster(cand, b.heap.front())) {
          std::pop_heap(b.heap.begin(), b.heap.end(), faster);
          b.heap.back() = std::move(cand);
          std::push_heap(b.heap.begin(), b.heap.end(), faster);
        } else {
          return;
        }
        if (int(b.heap.size()) >= top_k)
          lower_to(least_full_slowest, b.heap.front().ranked.prediction.time_s);
      });
  std::vector<Candidate> all;
  for (Best& b : best) {
    r.evaluated += b.evaluated;
    all.insert(all.end(), std::make_move_iterator(b.heap.begin()),
               std::make_move_iterator(b.heap.end()));
  }
  const std::size_t keep = std::min(all.size(), std::size_t(top_k));
  std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(), faster);
  for (std::size_t i = 0; i < keep; ++i) r.top.push_back(std::move(all[i].ranked));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gemmtune
