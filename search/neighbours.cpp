// Refinement moves: the configurations one parameter step away from a given one.
#include <algorithm>
#include <set>

#include "search/constraints.hpp"
#include "search/search.hpp"

namespace gemmtune {
namespace {

// The parameters refinement moves, in the order of their moves.
const std::vector<const TuningParameter*>& refined_parameters() {
  static const std::vector<const TuningParameter*> moved = [] {
    std::vector<const TuningParameter*> out;
    for (const TuningParameter& p : tuning_parameters())
      if (p.refine_rank > 0) out.push_back(&p);
    std::sort(out.begin(), out.end(),
              [](auto* a, auto* b) { return a->refine_rank < b->refine_rank; });
    return out;
  }();
  return moved;
}

}  // namespace

std::vector<KernelConfig> neighbours(const Problem& problem, const DeviceSpec& device,
                                     const KernelConfig& c, const SpaceDomain& domain) {
  const SpaceDomain dom = domain.for_precision(problem.precision);
  std::vector<KernelConfig> out;
  std::set<std::string> seen{c.id()};
  const detail::StageContext split_rules(problem, device, ConstraintOptions{}, dom);
  const int shared32_of_space = enumerates(dom.shared32, 0) ? 0 : 1;
  auto add = [&](KernelConfig n) {
    // Read layouts keep their width along the contiguous dimension; the other side follows.
    if (n.dim_xa > 0 && n.threads() % n.dim_xa == 0) n.dim_ya = n.threads() / n.dim_xa;
    if (n.dim_xb > 0 && n.threads() % n.dim_xb == 0) n.dim_yb = n.threads() / n.dim_xb;
    // The cp.async pipeline fixes what it does not use: layouts its copies can write (stored
    // order for vector copies), no register prefetch, zero-filled edges, two stages at least;
    // register staging has at most two.
    if (n.async_copy) {
      if (!async_copy_lands(n, problem, true)) n.smem_a_kmajor = stored_order_kmajor(problem, true);
      if (!async_copy_lands(n, problem, false))
        n.smem_b_kmajor = stored_order_kmajor(problem, false);
      n.prefetch = 0;
      n.edge = EdgeMode::Predicate;
      n.stages = std::max(2, n.stages);
    } else {
      n.stages = std::min(2, n.stages);
    }
    // VC1 would be VC0; SL1 SL0, with no vector loads left.
    if (n.vec_c && !n.has_vector_c_path(problem.precision, problem.ldc)) n.vec_c = 0;
    if (!n.has_shared32_path()) n.shared32 = 0;
    // A step onto vector loads takes the space's variant of them (SL1 only where SL0 is not).
    if (n.has_shared32_path() && !c.has_shared32_path()) n.shared32 = shared32_of_space;
    if (check_hard(problem, device, n)) return;
    // Split-K only where the space would have it (few tiles, enough K per split).
    if (!detail::split_k_fits(n, split_rules)) return;
    if (seen.insert(n.id()).second) out.push_back(n);
  };
  // One step either way along an ordered domain; every other value of an unordered one.
  auto step = [&](const TuningParameter& p, const std::vector<int>& values) {
    const int current = p.get(c);
    const auto it = std::find(values.begin(), values.end(), current);
    for (size_t i = 0; i < values.size(); ++i) {
      const bool adjacent = it == values.end() || !p.ordered ||
                            i + 1 == size_t(it - values.begin()) ||
                            i == size_t(it - values.begin()) + 1;
      if (!adjacent || values[i] == current) continue;
      KernelConfig n = c;
      p.set(n, values[i]);
      add(n);
    }
  };
  // The values refinement explores, and those an H, B or T problem's domain adds.
  for (const TuningParameter* p : refined_parameters())
    step(*p, p->refine_values.empty() ? dom.*p->domain
                                      : p->values_for(p->refine_values, problem.precision));
  return out;
}

}  // namespace gemmtune
