// Measuring within a budget, and how an evaluation scores under each objective.
#include <limits>

#include "search/tuning_run.hpp"

namespace gemmtune {

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

namespace detail {

bool TuningRun::exhausted() {
  const std::string reason = meter.stop_reason(result.evaluations, result.best.has_value());
  if (reason.empty()) return false;
  result.stopped_by = reason;
  return true;
}

bool TuningRun::measure(const KernelConfig& c) {
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

TuneResult TuningRun::finish() {
  result.seconds = meter.elapsed();
  return std::move(result);
}

}  // namespace detail
}  // namespace gemmtune
