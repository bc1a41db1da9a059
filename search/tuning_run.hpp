// Internal to search: what the strategies share.
#pragma once

#include <set>
#include <string>

#include "search/search.hpp"

namespace gemmtune::detail {

// Measures configurations for a strategy one at a time: each at most once, only while the budget
// lasts, keeping the history and the best by the objective and handing every evaluation to the
// sink.
struct TuningRun {
  const Problem& problem;
  Evaluator& evaluator;
  BudgetMeter meter;
  const EvaluationSink& sink;
  Objective objective = Objective::Time;
  TuneResult result{};
  std::set<std::string> measured{};

  // Whether the budget is spent; if so, records what stopped the run.
  bool exhausted();
  // Returns false when the budget is spent; a configuration measured before costs nothing.
  bool measure(const KernelConfig& c);
  bool was_measured(const KernelConfig& c) const { return measured.count(c.id()) > 0; }
  TuneResult finish();
};

}  // namespace gemmtune::detail
