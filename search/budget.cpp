// The tuning budget: time, evaluations and a share of the space, spent by one run.
#include <cmath>

#include "search/search.hpp"

namespace gemmtune {

int Budget::evaluation_limit(std::size_t space_size) const {
  if (evaluations < 0 || seconds < 0 || space_share < 0 || space_share > 1)
    throw InputError("budget of " + std::to_string(evaluations) + " evaluations, " +
                     std::to_string(seconds) + " s, " + std::to_string(space_share) +
                     " of the space: each must be >= 0 and the share <= 1");
  if (space_share <= 0) return evaluations;
  // The epsilon keeps a share that is exact in decimal (5% of 2,000) from rounding down.
  const int share = std::max(1, int(std::floor(double(space_size) * space_share + 1e-9)));
  return evaluations > 0 ? std::min(evaluations, share) : share;
}

BudgetMeter::BudgetMeter(const Budget& budget, std::size_t space_size)
    : budget_(budget),
      evaluation_limit_(budget.evaluation_limit(space_size)),
      start_(std::chrono::steady_clock::now()) {}

void BudgetMeter::set_space_size(std::size_t space_size) {
  evaluation_limit_ = budget_.evaluation_limit(space_size);
}

double BudgetMeter::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string BudgetMeter::stop_reason(int evaluations, bool have_kernel) const {
  if (evaluation_limit_ > 0 && evaluations >= evaluation_limit_) return "evaluation budget";
  if (timed() && elapsed() >= budget_.seconds && (have_kernel || evaluations >= kGraceEvaluations))
    return "time budget";
  return "";
}

bool BudgetMeter::fits(double seconds, double share) const {
  return !timed() || elapsed() + seconds <= share * budget_.seconds;
}

}  // namespace gemmtune
