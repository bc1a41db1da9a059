// The strategies by name: what tune --strategy and the application layer choose from.
#include "search/search.hpp"

namespace gemmtune {
namespace {

// The pruned space as the evaluator can run it, and the budget with its space share resolved
// against the whole pruned space (what the 5% cap means), not against what the evaluator knows.
struct Runnable {
  std::vector<KernelConfig> configs;
  Budget budget;
};
Runnable runnable_space(const TuneRequest& r) {
  const std::vector<KernelConfig> space =
      pruned_space(r.problem, r.evaluator.device(), r.options.domain, r.options.constraints);
  Runnable out{{}, r.options.budget};
  for (const auto& c : space)
    if (r.evaluator.can_evaluate(c)) out.configs.push_back(c);
  out.budget.evaluations = out.budget.evaluation_limit(space.size());
  out.budget.space_share = 0;
  return out;
}

TuneResult tune_hybrid(const TuneRequest& r) {
  return hybrid_tune(r.problem, r.evaluator, r.options, r.sink);
}

TuneResult tune_random(const TuneRequest& r) {
  Runnable space = runnable_space(r);
  return random_search(r.problem, r.evaluator, std::move(space.configs), r.seed, space.budget,
                       r.sink);
}

TuneResult tune_sweep(const TuneRequest& r) {
  const Runnable space = runnable_space(r);
  return sweep(r.problem, r.evaluator, space.configs, space.budget, r.sink);
}

}  // namespace

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> all{
      {"hybrid", "model shortlist, compile, re-rank with real registers, measure, refine", true,
       tune_hybrid},
      {"random", "the pruned space in a random order (--seed)", false, tune_random},
      {"sweep", "the pruned space in the model-free enumeration order", false, tune_sweep},
  };
  return all;
}

const Strategy& find_strategy(std::string_view name) {
  std::vector<std::string> names;
  for (const Strategy& s : strategies()) {
    if (s.name == name) return s;
    names.emplace_back(s.name);
  }
  throw InputError("strategy '" + std::string(name) + "' is not one of " + join(names, ", "));
}

}  // namespace gemmtune
