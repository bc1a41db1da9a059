// The kernel set of a workload: greedy additions, then member swaps, on a time matrix.
#include <cmath>
#include <optional>

#include "search/search.hpp"

namespace gemmtune {
namespace {

// The weighted total of a set over the problems it covers, how many it leaves uncovered, and the
// member each problem runs.
struct Cost {
  size_t uncovered = 0;
  double total = 0;
  std::vector<size_t> choice;
  // Fewer uncovered problems first, then lower by more than rounding (so that swaps end).
  bool better_than(const Cost& o) const {
    if (uncovered != o.uncovered) return uncovered < o.uncovered;
    return total < o.total - 1e-12 * std::abs(o.total);
  }
};
Cost cost_of(const std::vector<double>& weights, const std::vector<std::vector<double>>& times,
             const std::vector<size_t>& members) {
  Cost c;
  for (size_t p = 0; p < times.size(); ++p) {
    size_t best = members.front();
    for (size_t m : members)
      if (times[p][m] < times[p][best]) best = m;
    c.choice.push_back(best);
    if (std::isfinite(times[p][best]))
      c.total += weights[p] * times[p][best];
    else
      ++c.uncovered;
  }
  return c;
}

void check_input(const std::vector<double>& weights, const std::vector<std::vector<double>>& times,
                 int size) {
  if (size < 1)
    throw InputError("a kernel set of " + std::to_string(size) + " kernels: the size must be >= 1");
  if (times.empty()) throw InputError("a kernel set needs at least one problem");
  if (weights.size() != times.size())
    throw InputError(std::to_string(weights.size()) + " weights for " +
                     std::to_string(times.size()) + " problems");
  for (size_t p = 0; p < times.size(); ++p) {
    if (times[p].size() != times.front().size())
      throw InputError("problem " + std::to_string(p + 1) + " has " +
                       std::to_string(times[p].size()) + " candidate times, problem 1 has " +
                       std::to_string(times.front().size()));
    if (!std::isfinite(weights[p]) || !(weights[p] > 0))
      throw InputError("problem " + std::to_string(p + 1) + " has weight " +
                       std::to_string(weights[p]) + ": it must be finite and > 0");
    bool runs = false;
    for (double t : times[p]) runs = runs || std::isfinite(t);
    if (!runs) throw InputError("no candidate kernel runs problem " + std::to_string(p + 1));
  }
}

}  // namespace

KernelSet choose_kernel_set(const std::vector<double>& weights,
                            const std::vector<std::vector<double>>& times, int size) {
  check_input(weights, times, size);
  const size_t candidates = times.front().size();
  std::vector<size_t> members;
  std::vector<bool> in(candidates, false);
  Cost current;
  current.uncovered = times.size();
  while (int(members.size()) < size) {
    // Add the candidate that lowers the total most (the first of equals).
    std::optional<size_t> best;
    Cost best_cost = current;
    for (size_t c = 0; c < candidates; ++c) {
      if (in[c]) continue;
      members.push_back(c);
      Cost trial = cost_of(weights, times, members);
      members.pop_back();
      if (trial.better_than(best_cost)) {
        best = c;
        best_cost = std::move(trial);
      }
    }
    if (!best) break;
    members.push_back(*best);
    in[*best] = true;
    current = std::move(best_cost);
    // Swap a member for an outsider while that lowers the total.
    for (bool improved = true; improved;) {
      improved = false;
      for (size_t i = 0; i < members.size() && !improved; ++i) {
        for (size_t c = 0; c < candidates && !improved; ++c) {
          if (in[c]) continue;
          std::vector<size_t> trial = members;
          trial[i] = c;
          Cost t = cost_of(weights, times, trial);
          if (!t.better_than(current)) continue;
          in[members[i]] = false;
          in[c] = true;
          members = std::move(trial);
          current = std::move(t);
          improved = true;
        }
      }
    }
  }
  return {members, std::move(current.choice), current.total};
}

}  // namespace gemmtune
