// Each kernel family's and main loop's own terms of the model: the pipe its warp tile runs on and
// the instructions it issues per unit of k; how its main loop stages tiles and hides their loads.
// Everything else (waves, occupancy, shared-memory wavefronts, L2, DRAM, the C store) is every
// family's, in predict.cpp.
#include "model/model.hpp"

namespace gemmtune {
namespace {

WarpTileTerms simt_terms(const KernelConfig& c, Precision p, const DeviceSpec& d,
                         const BankProfile&) {
  // One FFMA (DFMA; four for a complex madd) per accumulator and k, and a scalar or VS-wide shared
  // read per fragment element.
  return {.fmas_per_clock = is_double(p) ? d.fp64_lanes_per_sm : d.fp32_lanes_per_sm,
          .math_instr = double(c.thr_m()) * c.thr_n() * fmas_per_madd(p),
          .fragment_instr = double(c.thr_m() + c.thr_n()) / c.vec_s};
}

WarpTileTerms mma_terms(const KernelConfig& c, Precision p, const DeviceSpec& d,
                        const BankProfile& bank) {
  // Hopper reaches its FP64 tensor peak only with the m16n8kX shapes; m8n8k4 runs at half of
  // it, the A100's rate per SM (measured on the H100: 28.3 vs 48.9 TFLOP/s, same tiles).
  // FP16/BF16 and TF32 run at their own rates, and on Hopper their shorter shape at 3/4 of the
  // longer's (bench/mma_peak.cu on the H100: FP16 m16n8k8 477 against m16n8k16 640 TFLOP/s,
  // TF32 m16n8k4 240 against m16n8k8 323); TF32 adds a rounding per fragment word.
  const int full = d.mma_fmas_per_sm(p);
  const bool shorter_shape = is_reduced(p) && c.mma == reduced_mma_shapes(p)[0];
  const int rate = c.mma == 1 && d.cc_major >= 9      ? full / 2
                   : shorter_shape && d.cc_major >= 9 ? full * 3 / 4
                                                      : full;
  // Per load of v TF32 values, v roundings: each operand's own vector (a k-major tile reads 1).
  const auto rounding = [&](int v) { return p == Precision::T ? 1.0 + v : 1.0; };
  // One mma covers rows x 8 x k of C, that is rows/4 x k of a lane's accumulator-k products; its
  // fragments are one element per lane and 4 k, read in 16-byte pairs where the shared layout
  // allows it (H, B, T: the profile's elements per load; TF32 rounds each 4-byte word).
  return {.fmas_per_clock = rate,
          .math_instr = double(c.thr_m()) * c.thr_n() * fmas_per_madd(p) *
                        (4.0 / (double(c.mma_rows()) * c.mma_k())),
          .fragment_instr =
              (rounding(bank.fragment_vector_a) * c.thr_m() / double(bank.fragment_vector_a) +
               rounding(bank.fragment_vector_b) * c.thr_n() / 2.0 / bank.fragment_vector_b) /
              4.0};
}

struct FamilyTerms {
  KernelFamily bit;
  WarpTileTerms (*terms)(const KernelConfig&, Precision, const DeviceSpec&, const BankProfile&);
};
constexpr FamilyTerms kFamilyTerms[] = {
    {kRegisterStagedSimt, simt_terms},
    {kCpAsyncSimt, simt_terms},
    {kMma, mma_terms},
};

}  // namespace

bool has_warp_tile_terms(KernelFamily family) {
  for (const FamilyTerms& f : kFamilyTerms)
    if (f.bit == family) return true;
  return false;
}

WarpTileTerms warp_tile_terms(const KernelConfig& c, Precision p, const DeviceSpec& d,
                              const BankProfile& bank) {
  const KernelFamily family = family_rules_of(c).bit;
  for (const FamilyTerms& f : kFamilyTerms)
    if (f.bit == family) return f.terms(c, p, d, bank);
  throw std::logic_error(std::string("the model has no terms for the ") + family_rules_of(c).name +
                         " family");
}

MainLoopTerms main_loop_terms(const KernelConfig& c) {
  // Register staging issues a shared store per element it loads and hides a whole K step's loads
  // only when both operands are prefetched; cp.async lands tiles without registers and keeps
  // STAGES - 1 steps in flight.
  if (main_loop_rules_of(c).async_copy)
    return {.staging_stores_per_element = 0.0, .steps_hiding_loads = double(c.stages - 1)};
  return {.staging_stores_per_element = 1.0, .steps_hiding_loads = c.prefetch == 3 ? 1.0 : 0.0};
}

}  // namespace gemmtune
