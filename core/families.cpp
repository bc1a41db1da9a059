// The kernel families and main loops, with the rules only they impose, declared once.
#include <iterator>
#include <utility>

#include "core/core.hpp"

namespace gemmtune {
namespace {

bool always(const KernelConfig&, const Problem&, const DeviceSpec&) {
  return true;
}
bool any_tile(const KernelConfig&, const Problem&) {
  return true;
}

// Which mma shapes a precision has on this device: FP64 m8n8k4 (sm_80+) and Hopper's m16n8kX;
// FP16 and BF16 m16n8k8, m16n8k16; TF32 m16n8k4, m16n8k8 (sm_80+).
bool mma_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d) {
  if (d.mma_fmas_per_sm(p.precision) <= 0) return false;
  if (is_double(p.precision)) return c.mma == 1 || d.cc_major >= 9;
  const std::array<int, 2> shapes = reduced_mma_shapes(p.precision);
  return c.mma == shapes[0] || c.mma == shapes[1];
}

// Warps of 8 x 4 lanes, each lane a column pair; m16 shapes pair rows; K in the mma's steps.
bool mma_tile_fits(const KernelConfig& c, const Problem& p) {
  if (!is_reduced(p.precision) && !is_double(p.precision)) return false;
  return c.dim_x % 8 == 0 && c.dim_y % 4 == 0 && c.thr_n() % 2 == 0 && c.blk_k % c.mma_k() == 0 &&
         c.thr_m() % (c.mma_rows() / 8) == 0;
}

// FP16, BF16 and TF32 fragments are read as words from k-contiguous shared rows (gt_load_words)
// of whole fragments, or by ldmatrix; k-major tiles (LA1, LB1) by ldmatrix.trans (H, B) or a
// TF32 word at a time.
bool mma_layout_ok(const KernelConfig& c, const Problem& p) {
  if (!is_reduced(p.precision)) return true;
  if ((c.blk_k + c.pad) % (c.mma_k() / 4) != 0) return false;
  return p.precision == Precision::T || (c.smem_a_kmajor == 0 && c.smem_b_kmajor == 0) ||
         fragments_by_ldmatrix(c, p.precision);
}

}  // namespace

std::array<int, 2> reduced_mma_shapes(Precision p) {
  return p == Precision::T ? std::array<int, 2>{2, 3} : std::array<int, 2>{3, 4};
}

bool fragments_by_ldmatrix(const KernelConfig& c, Precision p) {
  if (!c.mma || !is_reduced(p)) return false;
  // ldmatrix.trans moves 16-bit values: TF32 k-major tiles are read a word at a time.
  if (p == Precision::T && (c.smem_a_kmajor || c.smem_b_kmajor)) return false;
  // Eight rows of 16 bytes at a pitch of an odd count of 16 bytes fall on all 32 banks once;
  // each tile's pitch, and the k rows that k-major tiles leave to the other operand.
  const auto conflict_free = [&](int elements) {
    const int row_bytes = elements * element_bytes(p);
    return row_bytes % 16 == 0 && (row_bytes / 16) % 2 == 1;
  };
  const int k_row = c.blk_k + c.pad;
  return conflict_free(c.smem_a_kmajor ? c.blk_m + c.pad : k_row) &&
         conflict_free(c.smem_b_kmajor ? c.blk_n + c.pad : k_row) &&
         (c.blk_k + c.pad) * element_bytes(p) % 16 == 0;
}

namespace {

bool any_layout(const KernelConfig&, const Problem&) {
  return true;
}

// The SIMT kernels compute in the inputs' own type: not FP16, BF16 or TF32.
bool simt_supported(const KernelConfig&, const Problem& p, const DeviceSpec&) {
  return !is_reduced(p.precision);
}

// cp.async moves 4, 8 or 16 bytes and cannot conjugate on the way.
bool cp_async_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d) {
  auto size_ok = [&](int vec) {
    const int bytes = vec * element_bytes(p.precision);
    return bytes == 4 || bytes == 8 || bytes == 16;
  };
  return d.cc_major >= 8 && p.op_a != Op::C && p.op_b != Op::C && size_ok(c.vec_a) &&
         size_ok(c.vec_b);
}

bool cp_async_layout_ok(const KernelConfig& c, const Problem& p) {
  return c.stages >= 2 && async_copy_lands(c, p, true) && async_copy_lands(c, p, false) &&
         c.pad % c.vec_a == 0 && c.pad % c.vec_b == 0;
}

}  // namespace

int stored_order_kmajor(const Problem& p, bool of_a) {
  // K-major A where A is M-contiguous (op N), K-major B where B is N-contiguous (op T).
  return of_a ? (p.op_a == Op::N ? 1 : 0) : (p.op_b == Op::N ? 0 : 1);
}

bool async_copy_lands(const KernelConfig& c, const Problem& p, bool of_a) {
  // A copy writes its VEC elements contiguously, so a vector copy keeps the stored order; a
  // one-element copy lands anywhere, so it can transpose (what an SGEMM NN pipeline needs for
  // vector shared reads of B).
  return of_a ? c.smem_a_kmajor == stored_order_kmajor(p, true) || c.vec_a == 1
              : c.smem_b_kmajor == stored_order_kmajor(p, false) || c.vec_b == 1;
}

namespace {

// Constant-initialized: the funnel looks rules up millions of times a walk.
constexpr MainLoopRules kMainLoops[] = {
    {.name = "register-staged",
     .async_copy = 0,
     .supported = always,
     // Registers stage one tile ahead: a second shared buffer at most.
     .layout_ok = [](const KernelConfig& c, const Problem&) { return c.stages <= 2; },
     .variant_relevant = [](const KernelConfig&) { return true; }},
    {.name = "cp.async multistage",
     .async_copy = 1,
     .supported = cp_async_supported,
     .layout_ok = cp_async_layout_ok,
     // No register prefetch, and edges zero-filled whatever ED says.
     .variant_relevant =
         [](const KernelConfig& c) { return c.prefetch == 0 && c.edge == EdgeMode::Predicate; }},
};

constexpr FamilyRules kFamilies[] = {
    {.name = "register-staged SIMT",
     .bit = kRegisterStagedSimt,
     .selects = [](const KernelConfig& c) { return c.mma == 0 && c.async_copy == 0; },
     .supported = simt_supported,
     .warp_tile_fits = any_tile,
     .layout_ok = any_layout,
     .vector_fragments = true},
    {.name = "cp.async SIMT",
     .bit = kCpAsyncSimt,
     .selects = [](const KernelConfig& c) { return c.mma == 0 && c.async_copy != 0; },
     .supported = simt_supported,
     .warp_tile_fits = any_tile,
     .layout_ok = any_layout,
     .vector_fragments = true},
    // mma fragments are single elements (or words of them: VS does not apply).
    {.name = "mma",
     .bit = kMma,
     .selects = [](const KernelConfig& c) { return c.mma != 0; },
     .supported = mma_supported,
     .warp_tile_fits = mma_tile_fits,
     .layout_ok = mma_layout_ok,
     .vector_fragments = false},
};

}  // namespace

std::span<const MainLoopRules> main_loop_rules() {
  return kMainLoops;
}

std::span<const FamilyRules> family_rules() {
  return kFamilies;
}

namespace {

// The tables' entries one by one, so that each rule is a direct call the compiler can inline.
template <std::size_t... I>
const FamilyRules* selected_family(const KernelConfig& c, std::index_sequence<I...>) {
  const FamilyRules* found = nullptr;
  (void)((kFamilies[I].selects(c) && (found = &kFamilies[I])) || ...);
  return found;
}

}  // namespace

const FamilyRules& family_rules_of(const KernelConfig& c) {
  const FamilyRules* f = selected_family(c, std::make_index_sequence<std::size(kFamilies)>());
  if (!f) throw std::logic_error("no kernel family runs " + c.id());
  return *f;
}

bool KernelConfig::has_vector_c_path(Precision p, std::int64_t ldc) const {
  if (splits() != 1) return false;
  if (mma) {
    if (is_complex(p)) return false;  // complex FP64: an element is 16 bytes already
    const int c_bytes = c_element_bytes(p);
    const int per_vector = 16 / c_bytes;
    const std::int64_t staging =
        std::int64_t(threads() / 32) * 8 * (thr_m() * 8 + per_vector) * c_bytes;
    const std::int64_t tiles = std::int64_t(stages) * (blk_m + blk_n) * blk_k * element_bytes(p);
    return ldc % per_vector == 0 && staging <= tiles;
  }
  return vec_s > 1 && ldc % vec_s == 0 && family_rules_of(*this).vector_fragments;
}

bool KernelConfig::has_shared32_path() const {
  return vec_s > 1 && family_rules_of(*this).vector_fragments;
}

const MainLoopRules& main_loop_rules_of(const KernelConfig& c) {
  for (const MainLoopRules& m : kMainLoops)
    if ((m.async_copy != 0) == (c.async_copy != 0)) return m;
  throw std::logic_error("no main loop runs " + c.id());
}

}  // namespace gemmtune
