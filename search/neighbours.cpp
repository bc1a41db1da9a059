// Refinement moves: the configurations one parameter step away from a given one.
#include <algorithm>
#include <set>

#include "search/constraints.hpp"
#include "search/search.hpp"

namespace gemmtune {

std::vector<KernelConfig> neighbours(const Problem& problem, const DeviceSpec& device,
                                     const KernelConfig& c, const SpaceDomain& dom) {
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
      if (!detail::async_copy_lands(n, problem, true))
        n.smem_a_kmajor = detail::stored_order_kmajor(problem, true);
      if (!detail::async_copy_lands(n, problem, false))
        n.smem_b_kmajor = detail::stored_order_kmajor(problem, false);
      n.prefetch = 0;
      n.edge = EdgeMode::Predicate;
      n.stages = std::max(2, n.stages);
    } else {
      n.stages = std::min(2, n.stages);
    }
    if (n.vec_c && !n.has_vector_c_path(problem.ldc)) n.vec_c = 0;  // VC1 would be VC0
    if (!n.has_shared32_path()) n.shared32 = 0;                     // no vector loads left
    // A step onto vector loads takes the space's variant of them (SL1 only where SL0 is not).
    if (n.has_shared32_path() && !c.has_shared32_path()) n.shared32 = shared32_of_space;
    if (check_hard(problem, device, n)) return;
    // Split-K only where the space would have it (few tiles, enough K per split).
    if (!detail::split_k_fits(n, split_rules)) return;
    if (seen.insert(n.id()).second) out.push_back(n);
  };
  // One step either way along an ordered domain; every other value of an unordered one.
  auto step = [&](int KernelConfig::*member, const std::vector<int>& values, bool ordered) {
    const auto it = std::find(values.begin(), values.end(), c.*member);
    for (size_t i = 0; i < values.size(); ++i) {
      const bool adjacent = it == values.end() || !ordered ||
                            i + 1 == size_t(it - values.begin()) ||
                            i == size_t(it - values.begin()) + 1;
      if (!adjacent || values[i] == c.*member) continue;
      KernelConfig n = c;
      n.*member = values[i];
      add(n);
    }
  };
  step(&KernelConfig::blk_m, dom.blk_m, true);
  step(&KernelConfig::blk_n, dom.blk_n, true);
  step(&KernelConfig::blk_k, dom.blk_k, true);
  step(&KernelConfig::dim_x, dom.dim_x, true);
  step(&KernelConfig::dim_y, dom.dim_y, true);
  step(&KernelConfig::dim_xa, dom.dim_xa, true);
  step(&KernelConfig::dim_xb, dom.dim_xb, true);
  step(&KernelConfig::vec_a, dom.vec_a, true);
  step(&KernelConfig::vec_b, dom.vec_b, true);
  step(&KernelConfig::stages, dom.stages, true);
  step(&KernelConfig::mma, dom.mma, false);
  step(&KernelConfig::async_copy, dom.async_copy, false);
  step(&KernelConfig::split_k, dom.split_k, true);
  step(&KernelConfig::vec_c, dom.vec_c, false);
  step(&KernelConfig::shared32, dom.shared32, false);
  step(&KernelConfig::pad, {0, 1, 2, 3, 4}, true);
  step(&KernelConfig::smem_a_kmajor, {0, 1}, false);
  step(&KernelConfig::smem_b_kmajor, {0, 1}, false);
  step(&KernelConfig::prefetch, {0, 1, 2, 3}, false);
  step(&KernelConfig::unroll, {0, 1, 2, 4, 8}, false);
  step(&KernelConfig::raster, {1, 2, 4, 8, 16}, true);
  step(&KernelConfig::vec_s, {1, 2, 4}, true);
  KernelConfig e = c;
  e.edge = c.edge == EdgeMode::Predicate ? EdgeMode::Redirect : EdgeMode::Predicate;
  add(e);
  return out;
}

}  // namespace gemmtune
