// A workload's one budget, split by expected gain, and the compiles its problems share.
#include <algorithm>
#include <cmath>

#include "search/search.hpp"

namespace gemmtune {

WorkloadBudget::WorkloadBudget(const Budget& total, std::vector<double> gains)
    : total_(total), gains_(std::move(gains)), done_(gains_.size(), false) {
  for (size_t i = 0; i < gains_.size(); ++i)
    if (!std::isfinite(gains_[i]) || !(gains_[i] > 0))
      throw InputError("the expected gain of workload problem " + std::to_string(i + 1) + " is " +
                       std::to_string(gains_[i]) + ": it must be finite and > 0");
  if (total_.evaluations > 0 && size_t(total_.evaluations) < gains_.size())
    throw InputError("a budget of " + std::to_string(total_.evaluations) +
                     " evaluations is fewer than the workload's " + std::to_string(gains_.size()) +
                     " problems to tune (each needs one)");
}

Budget WorkloadBudget::share(std::size_t i) const {
  double gain_left = 0;
  int others_left = 0;
  for (size_t j = 0; j < gains_.size(); ++j) {
    if (done_[j]) continue;
    gain_left += gains_[j];
    if (j != i) ++others_left;
  }
  const double fraction = gains_.at(i) / gain_left;
  Budget b = total_;
  if (total_.evaluations > 0) {
    // Every later problem keeps at least one evaluation.
    const int left = total_.evaluations - evaluations_spent_;
    const int most = std::max(1, left - others_left);
    b.evaluations = std::clamp(int(std::lround(left * fraction)), 1, most);
  }
  if (total_.seconds > 0) {
    // A spent clock still lets a problem find one kernel (BudgetMeter's grace); 0 would be none.
    const double left = std::max(0.0, total_.seconds - seconds_spent_);
    b.seconds = std::max(1e-3, left * fraction);
  }
  return b;
}

void WorkloadBudget::spend(std::size_t i, int evaluations, double seconds) {
  done_.at(i) = true;
  evaluations_spent_ += evaluations;
  seconds_spent_ += seconds;
}

std::vector<CompiledInfo> SharingEvaluator::compile(const Problem& problem,
                                                    const std::vector<KernelConfig>& configs) {
  const std::string kind = std::string(1, to_char(problem.precision)) + to_char(problem.op_a) +
                           to_char(problem.op_b) + " ";
  auto find = [&](const std::string& key) {
    return std::lower_bound(
        memo_.known.begin(), memo_.known.end(), key,
        [](const auto& entry, const std::string& k) { return entry.first < k; });
  };
  std::vector<KernelConfig> fresh;
  std::vector<std::string> keys;
  for (const auto& c : configs) {
    keys.push_back(kind + c.id());
    const auto it = find(keys.back());
    if (it == memo_.known.end() || it->first != keys.back()) fresh.push_back(c);
  }
  if (!fresh.empty()) {
    const std::vector<CompiledInfo> made = inner_.compile(problem, fresh);
    for (size_t j = 0; j < fresh.size(); ++j) {
      const std::string key = kind + fresh[j].id();
      const auto it = find(key);
      if (it == memo_.known.end() || it->first != key) memo_.known.insert(it, {key, made.at(j)});
    }
    memo_.compiled += int(fresh.size());
  }
  memo_.shared += int(configs.size() - fresh.size());
  std::vector<CompiledInfo> out;
  for (const auto& key : keys) out.push_back(find(key)->second);
  return out;
}

}  // namespace gemmtune
