// The model's ranking of a pruned space: predict everything, keep the best k.
#include <algorithm>
#include <chrono>

#include "search/search.hpp"

namespace gemmtune {

Ranking rank_space(const Problem& problem, const DeviceSpec& device, int top_k,
                   const ModelCoefficients& coefficients, const SpaceDomain& domain,
                   const ConstraintOptions& options) {
  if (top_k < 1) throw InputError("top k = " + std::to_string(top_k) + " must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  Ranking r;
  auto slower = [](const Ranked& a, const Ranked& b) {
    return a.prediction.time_s < b.prediction.time_s;
  };
  // A max-heap on time holds the best k seen so far.
  r.funnel = enumerate_space(problem, device, domain, options, [&](const KernelConfig& c) {
    Prediction pred = predict(problem, device, c, coefficients);
    ++r.evaluated;
    if (int(r.top.size()) < top_k) {
      r.top.push_back({c, pred});
      std::push_heap(r.top.begin(), r.top.end(), slower);
    } else if (pred.time_s < r.top.front().prediction.time_s) {
      std::pop_heap(r.top.begin(), r.top.end(), slower);
      r.top.back() = {c, pred};
      std::push_heap(r.top.begin(), r.top.end(), slower);
    }
  });
  std::sort_heap(r.top.begin(), r.top.end(), slower);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gemmtune
