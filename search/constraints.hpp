// Internal to search: the per-stage tests shared by the enumeration and check_hard.
#pragma once

#include "search/search.hpp"

namespace gemmtune::detail {

// Everything a stage needs, resolved once per problem.
struct StageContext {
  const Problem& problem;
  const DeviceSpec& device;
  const ConstraintOptions& options;
  int min_threads = 0, max_threads = 0;
  double min_fmas_per_load = 0;
  std::int64_t tiles_at_64 = 0;
  // Whether the domain enumerates VC1: then VC0 is not a relevant variant where VC1 applies.
  bool vector_c_enumerated = false;
  // Whether it enumerates VC0 and VC1: then an mma kernel's VC1 is the twin the tuner measures.
  bool vector_c_both = false;
  // Whether the domain enumerates SL0 and SL1: then SL1 is the twin the tuner measures, not a
  // variant of the space (the model predicts the two alike).
  bool shared32_both = false;
  StageContext(const Problem& p, const DeviceSpec& d, const ConstraintOptions& o,
               const SpaceDomain& domain);
};

bool layout_divides(const KernelConfig& c, const Problem& p);
bool vector_aligned(const KernelConfig& c, const Problem& p);
bool shared_vector_ok(const KernelConfig& c, const Problem& p);
// The rules of c's family (its instructions on this device and problem; its warp tile) and of
// its main loop (the device and problem; the stages and shared layouts its fill path produces).
bool family_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d);
bool warp_tile_fits(const KernelConfig& c, const Problem& p);
bool main_loop_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d);
bool main_loop_layout_ok(const KernelConfig& c, const Problem& p);
bool family_layout_ok(const KernelConfig& c, const Problem& p);
int register_limit(const KernelConfig& c, const DeviceSpec& d);
// What estimate_registers makes of a raw estimate: rounded up, within [16, launch-bounds cap].
int clamp_registers(double raw, const KernelConfig& c);
double fmas_per_load(const KernelConfig& c);
bool tile_fits(const KernelConfig& c, const StageContext& ctx);  // includes split_k_fits
bool split_k_fits(const KernelConfig& c, const StageContext& ctx);
bool reads_coalesced(const KernelConfig& c, const Problem& p);
bool variants_relevant(const KernelConfig& c, const StageContext& ctx);
// Shared-memory wavefronts of one K step of one block, for the bank-conflict stage.
double smem_cost(const KernelConfig& c, const Problem& p);

// The variants the walk fixes at `level` (0 to 4; only 2, 3 and 4 hold any: the walk_level of
// tuning_parameters()), in its nesting order (walk_rank), outermost first. Throws
// std::logic_error where a variant with a domain declares no walk level.
const std::vector<const TuningParameter*>& walk_parameters(int level);
// Configurations under one tiling as the walk enumerates them: the product of its levels.
double walk_variant_count(const SpaceDomain& domain);

// visit(config, order, worker): called concurrently from the walk's workers (worker in
// [0, hardware_threads())); order is the configuration's place in the serial walk.
using OrderedVisit = std::function<void(const KernelConfig&, std::uint64_t, int)>;
// The walk behind enumerate_space, on every hardware thread.
Funnel walk_space(const Problem& problem, const DeviceSpec& device, const SpaceDomain& domain,
                  const ConstraintOptions& options, const OrderedVisit& visit);

}  // namespace gemmtune::detail
