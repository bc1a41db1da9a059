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
  struct Pending {
    Candidate candidate;
    std::vector<float> features;
  };
  struct Best {
    std::vector<Candidate> heap;
    std::int64_t evaluated = 0;
    std::vector<Pending> group;  // predicted, awaiting the trees
    std::size_t waiting = 0;
    FeatureBox box;
  };
  std::vector<Best> best(static_cast<std::size_t>(hardware_threads()));
  // The learned trees cost more than the rest of the model: a configuration's trees are walked
  // only while its time may still come under the slowest of a full heap. Any worker's full heap
  // will do: a configuration slower than its slowest has top_k faster ones, so it cannot be in
  // the merged top whichever worker walks it.
  ModelCoefficients before_trees = coefficients;
  before_trees.learned = before_trees.learned_reduced = {};
  const TreeEnsemble& trees = coefficients.trees_for(problem.precision);
  const LearnedBounds bounds = learned_bounds(trees, problem);
  std::atomic<double> least_full_slowest{std::numeric_limits<double>::infinity()};
  const auto ceiling = [&](const Best& b) {
    double c = least_full_slowest.load(std::memory_order_relaxed);
    if (int(b.heap.size()) >= top_k) c = std::min(c, b.heap.front().ranked.prediction.time_s);
    return c;
  };
  const auto offer = [&](Best& b, Candidate&& cand) {
    if (int(b.heap.size()) < top_k) {
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
  };
  // Configurations walked one after another differ in a few parameters, so their features span
  // a narrow box: the least sum the trees reach inside it bounds them all, and drops most of a
  // group without walking a tree for each.
  const auto correct_group = [&](Best& b) {
    if (b.waiting == 0) return;
    const double least = trees.least_within(b.box);
    for (std::size_t i = 0; i < b.waiting; ++i) {
      Pending& p = b.group[i];
      if (!apply_learned_correction_unless_above(problem, p.features, trees, bounds, ceiling(b),
                                                 p.candidate.ranked.prediction, least))
        continue;
      offer(b, std::move(p.candidate));
    }
    b.waiting = 0;
    b.box.clear();
  };
  constexpr std::size_t kGroup = 32;
  Ranking r;
  r.funnel = detail::walk_space(
      problem, device, domain, options,
      [&](const KernelConfig& c, std::uint64_t order, int worker) {
        Best& b = best[std::size_t(worker)];
        ++b.evaluated;
        Candidate cand{{c, predict(problem, device, c, before_trees)}, order};
        if (trees.empty()) return offer(b, std::move(cand));
        if (b.group.empty()) b.group.resize(kGroup);
        Pending& p = b.group[b.waiting++];
        p.candidate = std::move(cand);
        learned_features(bounds.leading, problem, c, p.candidate.ranked.prediction, p.features);
        b.box.include(p.features);
        if (b.waiting == kGroup) correct_group(b);
      });
  for (Best& b : best) correct_group(b);
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
