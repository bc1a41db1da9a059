// The funnel's stages: names, kinds, and the tests behind them.
#include "search/constraints.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gemmtune {

namespace {
constexpr const char* kStageNames[kStageCount] = {
    "layout_divides", "warp_multiple",  "max_threads",          "vector_alignment",
    "shared_memory",  "shared_vector",  "registers_per_thread", "registers_per_block",
    "thread_count",   "fmas_per_load",  "tile_fits_problem",    "coalesced_reads",
    "min_occupancy",  "bank_conflicts", "relevant_variants"};
}

const char* stage_name(Stage s) {
  return kStageNames[static_cast<int>(s)];
}

StageKind stage_kind(Stage s) {
  return static_cast<int>(s) <= static_cast<int>(Stage::RegistersPerBlock) ? StageKind::Hard
                                                                           : StageKind::Soft;
}

Stage parse_stage(std::string_view name) {
  for (int i = 0; i < kStageCount; ++i)
    if (name == kStageNames[i]) return static_cast<Stage>(i);
  std::vector<std::string> names(std::begin(kStageNames), std::end(kStageNames));
  throw InputError("unknown constraint '" + std::string(name) + "'; known: " + join(names, ", "));
}

namespace detail {

StageContext::StageContext(const Problem& p, const DeviceSpec& d, const ConstraintOptions& o,
                           const SpaceDomain& domain)
    : problem(p),
      device(d),
      options(o),
      vector_c_enumerated(enumerates(domain.vec_c, 1)),
      vector_c_both(enumerates(domain.vec_c, 0) && enumerates(domain.vec_c, 1)),
      shared32_both(enumerates(domain.shared32, 0) && enumerates(domain.shared32, 1)) {
  tiles_at_64 = ((p.m + 63) / 64) * ((p.n + 63) / 64) * p.batch;
  // Seed 004: small or batched problems want small blocks, many per SM; seed 001's rules
  // (many threads, high compute intensity) are for problems that fill the GPU many times.
  const bool small = std::max(p.m, p.n) <= 128 || tiles_at_64 < 2 * d.sm_count;
  const bool large = tiles_at_64 >= 8 * d.sm_count;
  min_threads = o.min_threads >= 0 ? o.min_threads : (small ? 32 : large ? 128 : 64);
  max_threads = o.max_threads >= 0 ? o.max_threads : (small ? 512 : 1024);
  const bool short_k = p.k <= 128;  // see SpaceDomain::short_k_min_fmas_per_load
  min_fmas_per_load = o.min_fmas_per_load >= 0 ? o.min_fmas_per_load
                      : small                  ? 4.0
                      : large && short_k       ? domain.short_k_min_fmas_per_load
                      : large                  ? 48.0
                                               : 24.0;
}

bool layout_divides(const KernelConfig& c, const Problem& p) {
  const int t = c.threads();
  if (c.blk_m % c.dim_x || c.blk_n % c.dim_y) return false;
  if (!warp_tile_fits(c, p)) return false;
  if (c.dim_xa * c.dim_ya != t || c.dim_xb * c.dim_yb != t) return false;
  const int ya = c.dim_ya, yb = c.dim_yb;
  const int a_rows = p.op_a == Op::N ? c.blk_m : c.blk_k;
  const int a_cols = p.op_a == Op::N ? c.blk_k : c.blk_m;
  const int b_rows = p.op_b == Op::N ? c.blk_k : c.blk_n;
  const int b_cols = p.op_b == Op::N ? c.blk_n : c.blk_k;
  return a_rows % (c.dim_xa * c.vec_a) == 0 && a_cols % ya == 0 &&
         b_rows % (c.dim_xb * c.vec_b) == 0 && b_cols % yb == 0;
}

// The family's and the main loop's own rules (core/families.cpp).
bool family_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d) {
  return family_rules_of(c).supported(c, p, d);
}

bool warp_tile_fits(const KernelConfig& c, const Problem& p) {
  return family_rules_of(c).warp_tile_fits(c, p);
}

bool main_loop_supported(const KernelConfig& c, const Problem& p, const DeviceSpec& d) {
  return main_loop_rules_of(c).supported(c, p, d);
}

bool main_loop_layout_ok(const KernelConfig& c, const Problem& p) {
  return main_loop_rules_of(c).layout_ok(c, p);
}

bool family_layout_ok(const KernelConfig& c, const Problem& p) {
  return family_rules_of(c).layout_ok(c, p);
}

bool shared_vector_ok(const KernelConfig& c, const Problem& p) {
  if (c.vec_s == 1) return true;
  if (!family_rules_of(c).vector_fragments) return false;
  return (c.vec_s == 2 || c.vec_s == 4) && c.vec_s * element_bytes(p.precision) <= 16 &&
         c.smem_a_kmajor == 1 && c.smem_b_kmajor == 1 && c.pad % c.vec_s == 0 &&
         c.thr_m() % c.vec_s == 0 && c.thr_n() % c.vec_s == 0;
}

bool vector_aligned(const KernelConfig& c, const Problem& p) {
  const int e = element_bytes(p.precision);
  return c.vec_a * e <= 16 && c.vec_b * e <= 16 && p.lda % c.vec_a == 0 && p.ldb % c.vec_b == 0;
}

int register_limit(const KernelConfig& c, const DeviceSpec& d) {
  // Under __launch_bounds__(threads) ptxas keeps a block within the register file: beyond this
  // it spills.
  return std::min(d.max_regs_per_thread, (d.regs_per_block / std::max(1, c.threads())) & ~7);
}

int clamp_registers(double raw, const KernelConfig& c) {
  return std::clamp(int(std::ceil(raw)), 16, register_cap(c.threads()));
}

double fmas_per_load(const KernelConfig& c) {
  return double(c.blk_m) * c.blk_n / double(c.blk_m + c.blk_n);
}

bool split_k_fits(const KernelConfig& c, const StageContext& ctx) {
  if (c.splits() == 1) return true;
  // Split-K pays an extra pass over C and atomic sums: only where the tiles leave at least half
  // of the SMs idle, into at most 4 blocks per SM, with at least 4 K steps per split and no
  // split left empty.
  const Problem& p = ctx.problem;
  const std::int64_t tiles =
      ((p.m + c.blk_m - 1) / c.blk_m) * ((p.n + c.blk_n - 1) / c.blk_n) * p.batch;
  const int sms = ctx.device.sm_count;
  return 2 * tiles <= sms && tiles * c.splits() <= 4 * sms && c.k_per_split(p.k) >= 4 * c.blk_k &&
         c.k_per_split(p.k) * (c.splits() - 1) < p.k;
}

bool tile_fits(const KernelConfig& c, const StageContext& ctx) {
  const Problem& p = ctx.problem;
  auto round16 = [](std::int64_t x) { return (x + 15) / 16 * 16; };
  if (!split_k_fits(c, ctx)) return false;
  return c.blk_m < 2 * round16(p.m) && c.blk_n < 2 * round16(p.n) &&
         c.blk_k < 2 * std::max<std::int64_t>(4, (p.k + 3) / 4 * 4);
}

bool reads_coalesced(const KernelConfig& c, const Problem& p) {
  const int e = element_bytes(p.precision);
  const int a_rows = p.op_a == Op::N ? c.blk_m : c.blk_k;
  const int b_rows = p.op_b == Op::N ? c.blk_k : c.blk_n;
  return c.dim_xa * c.vec_a * e >= std::min(128, a_rows * e) &&
         c.dim_xb * c.vec_b * e >= std::min(128, b_rows * e);
}

bool variants_relevant(const KernelConfig& c, const StageContext& ctx) {
  const Problem& p = ctx.problem;
  if (!main_loop_rules_of(c).variant_relevant(c)) return false;
  if (c.edge == EdgeMode::Redirect && p.m % c.blk_m == 0 && p.n % c.blk_n == 0) return false;
  // VC1 is VC0 again where the kernel has no vector C store (SIMT at VS 1, complex mma, a split
  // kernel adding into C an element at a time, ldc not a multiple of the vector). In SIMT kernels
  // VC1's whole-sector stores never lose to VC0's scattered ones in the model (and won every
  // SGEMM shape on the H100), so VC0 goes when the domain enumerates VC1. The mma kernels' staged
  // store writes the same sectors in fewer requests: on the H200 3-5% faster where C dominates
  // (skinny K), 2-3% slower on TF32 with K = 128, 12-16% where staging took the registers past
  // 128. The model cannot tell the two apart, so where the domain has both the space keeps VC0
  // (what the recordings measured) and tuning measures the VC1 twin of its best.
  const bool vector_path = c.has_vector_c_path(p.precision, p.ldc);
  if (c.vec_c && !vector_path) return false;
  if (c.mma) {
    if (c.vec_c && ctx.vector_c_both) return false;
  } else if (!c.vec_c && vector_path && ctx.vector_c_enumerated) {
    return false;
  }
  // SL0 and SL1 (64- or 32-bit shared addresses for the vector fragment loads) issue about as
  // many instructions, scheduled differently: of 54 twins near the top of H100 tunes SL1 was
  // over 2% faster for 22 and over 2% slower for 8. The model
  // cannot tell them apart, so where the domain has both the space keeps SL0 (what the recorded
  // sweeps measured) and tuning measures the SL1 twin of its best (search/hybrid.cpp).
  if (c.shared32 && ctx.shared32_both) return false;
  if (c.raster > 1) {
    const std::int64_t tiles_m = (p.m + c.blk_m - 1) / c.blk_m;
    const std::int64_t tiles_n = (p.n + c.blk_n - 1) / c.blk_n;
    if (tiles_n < 2 * c.raster || tiles_m * tiles_n < 2 * ctx.device.sm_count) return false;
  }
  return true;
}

double smem_cost(const KernelConfig& c, const Problem& p) {
  return warp_smem_wavefronts_per_step(c, bank_profile(c, p.precision, p.op_a, p.op_b));
}

}  // namespace detail

std::optional<Violation> check_hard(const Problem& p, const DeviceSpec& d, const KernelConfig& c) {
  using namespace detail;
  auto fail = [](Stage s, std::string msg) {
    return std::optional<Violation>(Violation{s, std::string(stage_name(s)) + ": " + msg});
  };
  for (const TuningParameter& t : tuning_parameters())
    if (const int v = t.get(c); !t.valid(v))
      return fail(Stage::LayoutDivides, std::string(t.token) + std::to_string(v) +
                                            " is out of range in " + c.id() + ": " + t.token +
                                            " must be " + t.meaning);
  if (!main_loop_supported(c, p, d))
    return fail(Stage::LayoutDivides,
                "AC1 (cp.async) needs compute capability 8.0 or later (" + d.name + " is " +
                    d.arch() + "), op n or t (got " + to_char(p.op_a) + to_char(p.op_b) +
                    ") and copies of 4, 8 or 16 bytes (VA " + std::to_string(c.vec_a) + ", VB " +
                    std::to_string(c.vec_b) + " of " + std::to_string(element_bytes(p.precision)) +
                    "-byte elements)");
  if (!family_supported(c, p, d)) {
    const char prec = char(std::tolower(to_char(p.precision)));
    std::string why;
    if (is_reduced(p.precision)) {
      std::vector<std::string> numbers, names;
      for (int mm : reduced_mma_shapes(p.precision)) {
        KernelConfig shape;
        shape.mma = mm;
        numbers.push_back("MM" + std::to_string(mm));
        names.push_back("m16n8k" + std::to_string(shape.mma_k()));
      }
      why = std::string("precision ") + prec + " runs on tensor cores only, with " +
            join(numbers, " or ") + " (" + join(names, ", ") + "), and needs a device with them (" +
            d.name + " has fp16_mma_per_sm " + std::to_string(d.fp16_mma_per_sm) +
            ", tf32_mma_per_sm " + std::to_string(d.tf32_mma_per_sm) + "); got MM" +
            std::to_string(c.mma);
    } else if (c.mma != 0 && !is_double(p.precision))
      why = "MM" + std::to_string(c.mma) + " needs precision d, z, h, b or t (got " + prec + ")";
    else
      why = "MM" + std::to_string(c.mma) + " needs FP64 tensor cores" +
            (c.mma >= 2 ? " with m16n8 shapes (sm_90 and later)" : "") + ", which " + d.name +
            " (" + d.arch() + ") lacks at full rate";
    return fail(Stage::LayoutDivides, why);
  }
  if (!warp_tile_fits(c, p))
    return fail(Stage::LayoutDivides,
                "MM" + std::to_string(c.mma) + " (tensor cores) needs DX a multiple of 8 (" +
                    std::to_string(c.dim_x) + "), DY of 4 (" + std::to_string(c.dim_y) +
                    "), an even thread tile along N (" + std::to_string(c.thr_n()) +
                    ") and for MM2-4 along M (" + std::to_string(c.thr_m()) +
                    "), and BK a multiple of the mma's k, " + std::to_string(c.mma_k()) + " (" +
                    std::to_string(c.blk_k) + ")");
  if (p.batch * c.splits() > 65535)
    return fail(Stage::LayoutDivides, "batch " + std::to_string(p.batch) + " x SK " +
                                          std::to_string(c.splits()) +
                                          " blocks along z exceeds the grid limit of 65535");
  if (!layout_divides(c, p))
    return fail(Stage::LayoutDivides,
                "tile " + std::to_string(c.blk_m) + "x" + std::to_string(c.blk_n) + "x" +
                    std::to_string(c.blk_k) + " is not divisible by the compute layout " +
                    std::to_string(c.dim_x) + "x" + std::to_string(c.dim_y) +
                    " or the read layouts (DXA " + std::to_string(c.dim_xa) + " x VA " +
                    std::to_string(c.vec_a) + ", DXB " + std::to_string(c.dim_xb) + " x VB " +
                    std::to_string(c.vec_b) + ") for op " + to_char(p.op_a) + to_char(p.op_b) +
                    ", or a read layout (DXA x DYA = " + std::to_string(c.dim_xa * c.dim_ya) +
                    ", DXB x DYB = " + std::to_string(c.dim_xb * c.dim_yb) + ") is not all " +
                    std::to_string(c.threads()) + " threads");
  if (c.threads() % d.warp_size)
    return fail(Stage::WarpMultiple, std::to_string(c.threads()) +
                                         " threads is not a multiple of the warp size " +
                                         std::to_string(d.warp_size));
  if (c.threads() > d.max_threads_per_block)
    return fail(Stage::MaxThreads, std::to_string(c.threads()) + " threads exceeds the limit of " +
                                       std::to_string(d.max_threads_per_block) + " per block");
  if (!vector_aligned(c, p))
    return fail(Stage::VectorAlignment,
                "vector widths VA " + std::to_string(c.vec_a) + ", VB " + std::to_string(c.vec_b) +
                    " need <= 16 bytes per load and lda (" + std::to_string(p.lda) + "), ldb (" +
                    std::to_string(p.ldb) + ") divisible by them");
  const std::int64_t smem = shared_bytes(c, p.precision);
  if (smem > d.smem_per_block_optin)
    return fail(Stage::SharedMemory, std::to_string(smem) +
                                         " bytes of shared memory exceeds the opt-in limit of " +
                                         std::to_string(d.smem_per_block_optin) + " per block");
  if (!shared_vector_ok(c, p))
    return fail(Stage::SharedVector,
                "shared reads of " + std::to_string(c.vec_s) +
                    " elements need K-major A and B tiles (LA1, LB1), padding a multiple of " +
                    std::to_string(c.vec_s) + ", thread tiles " + std::to_string(c.thr_m()) + "x" +
                    std::to_string(c.thr_n()) + " divisible by it and <= 16 bytes");
  if (c.shared32 && !c.has_shared32_path())
    return fail(Stage::SharedVector,
                "SL1 (32-bit shared addresses) applies to the vector "
                "fragment loads of SIMT kernels: it needs VS > 1 and MM0 (got " +
                    c.id() + ")");
  if (!main_loop_layout_ok(c, p))
    return fail(Stage::SharedVector,
                c.async_copy
                    ? "AC1 (cp.async) vector copies land in stored order: it needs LA" +
                          std::to_string(stored_order_kmajor(p, true)) + " or VA1, LB" +
                          std::to_string(stored_order_kmajor(p, false)) + " or VB1 for op " +
                          to_char(p.op_a) + to_char(p.op_b) +
                          ", padding divisible by VA and VB, and ST 2..4 (got " + c.id() + ")"
                    : "ST" + std::to_string(c.stages) +
                          ": more than 2 stages needs the cp.async pipeline (AC1)");
  if (!family_layout_ok(c, p))
    return fail(Stage::SharedVector,
                "precision " + std::string(1, char(std::tolower(to_char(p.precision)))) +
                    " reads mma fragments as words of k-contiguous shared rows, BK + PD a "
                    "multiple of " +
                    std::to_string(c.mma_k() / 4) +
                    "; FP16 and BF16 read k-major tiles (LA1, LB1) by ldmatrix.trans only, which "
                    "needs every shared pitch an odd count of 16 bytes (got " +
                    c.id() + ")");
  const double regs = raw_register_estimate(c, p.precision, default_register_model(p.precision));
  if (regs > register_limit(c, d))
    return fail(Stage::RegistersPerThread, "about " + std::to_string(int(std::ceil(regs))) +
                                               " registers per thread exceeds the limit of " +
                                               std::to_string(register_limit(c, d)) + " for " +
                                               std::to_string(c.threads()) +
                                               " threads (it would spill)");
  if (regs * c.threads() > d.regs_per_block)
    return fail(Stage::RegistersPerBlock, "about " + std::to_string(int(regs * c.threads())) +
                                              " registers per block exceeds " +
                                              std::to_string(d.regs_per_block));
  return std::nullopt;
}

}  // namespace gemmtune
