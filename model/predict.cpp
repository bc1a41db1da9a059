// The analytical time model. Per busiest SM: K iterations of (FMA or shared-memory work) with
// the global-load latency each iteration exposes, over rounds of co-resident blocks; globally:
// DRAM and L2 traffic with tile reuse. Every term is kept so predict can say why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "model/model.hpp"

namespace gemmtune {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// DRAM bytes for reading A and B: blocks that run together share panels through L2, so a
// window of concurrent tiles reads its rows of A and columns of B once.
double dram_ab_bytes(const Problem& p, const KernelConfig& c, std::int64_t tiles_m,
                     std::int64_t tiles_n, std::int64_t concurrent, double l2_bytes) {
  const double e = element_bytes(p.precision);
  const double a_bytes = double(p.m) * p.k * e, b_bytes = double(p.k) * p.n * e;
  const double compulsory = a_bytes + b_bytes;
  const double no_reuse = double(tiles_m * tiles_n) * double(p.k) * (c.blk_m + c.blk_n) * e;
  if (compulsory <= 0.5 * l2_bytes) return compulsory;  // both stay resident in L2
  const std::int64_t tiles = tiles_m * tiles_n;
  const std::int64_t window = std::max<std::int64_t>(1, std::min(tiles, concurrent));
  std::int64_t rows, cols;
  if (c.raster <= 1) {  // m fastest
    rows = std::min(tiles_m, window);
    cols = ceil_div(window, tiles_m);
  } else {  // groups of `raster` tile columns
    cols = std::min<std::int64_t>(c.raster, tiles_n);
    rows = std::min(tiles_m, ceil_div(window, cols));
  }
  const double windows = double(tiles) / double(window);
  double a_reads = windows * double(rows) * c.blk_m * double(p.k) * e;
  double b_reads = windows * double(cols) * c.blk_n * double(p.k) * e;
  if (a_bytes <= 0.5 * l2_bytes) a_reads = a_bytes;  // A alone stays in L2
  if (b_bytes <= 0.5 * l2_bytes) b_reads = b_bytes;
  return std::clamp(a_reads + b_reads, compulsory, std::max(compulsory, no_reuse));
}

}  // namespace

const char* to_string(TimeLimit limit) {
  switch (limit) {
    case TimeLimit::Compute:
      return "compute";
    case TimeLimit::SharedMemory:
      return "shared memory";
    case TimeLimit::Issue:
      return "issue";
    case TimeLimit::L2:
      return "L2";
    case TimeLimit::Dram:
      return "DRAM";
    case TimeLimit::Latency:
      return "latency";
    case TimeLimit::Store:
      return "C store";
    case TimeLimit::Launch:
      return "launch";
  }
  return "?";
}

// The trees were fitted on the corrected prediction: they read its terms (shares of time_s) as
// the fit saw them.

namespace {
void apply_learned_sum(const Problem& p, double sum, Prediction& r) {
  const double factor = std::exp(std::clamp(sum, -kCorrectionLogBound, kCorrectionLogBound));
  r.correction *= factor;
  r.time_s *= factor;
  r.gflops = p.flops() / r.time_s * 1e-9;
}
}  // namespace

void apply_learned_correction(const Problem& p, const KernelConfig& c, const TreeEnsemble& trees,
                              Prediction& r) {
  thread_local std::vector<float> features;
  learned_features(p, c, r, features);
  apply_learned_sum(p, trees.evaluate(features), r);
}

LearnedBounds learned_bounds(const TreeEnsemble& trees, const Problem& problem) {
  LearnedBounds b;
  learned_problem_features(problem, b.leading);
  b.tails = trees.least_tails(b.leading);
  return b;
}

bool apply_learned_correction_unless_above(const Problem& p, const std::vector<float>& features,
                                           const TreeEnsemble& trees, const LearnedBounds& bounds,
                                           double ceiling_s, Prediction& r, double least_sum) {
  // Far above the rounding of the sums and of the factor, so that a skip is never wrong.
  constexpr double kMargin = 1e-9;
  // At or past the bound, a sum above it is clamped to a factor that need not exceed the ceiling.
  double above = std::log(ceiling_s / r.time_s) + kMargin;
  if (!(above < kCorrectionLogBound)) above = std::numeric_limits<double>::infinity();
  if (least_sum > above) return false;
  const double sum = trees.evaluate_unless_above(features, bounds.tails, above);
  if (sum > above) return false;
  apply_learned_sum(p, sum, r);
  return true;
}

Prediction predict(const Problem& p, const DeviceSpec& d, const KernelConfig& c,
                   const ModelCoefficients& k, int regs_from_compiler) {
  Prediction r;
  r.registers_from_compiler = regs_from_compiler > 0;
  r.registers = r.registers_from_compiler
                    ? regs_from_compiler
                    : estimate_registers(c, p.precision, default_register_model(p.precision));
  r.smem_bytes = shared_bytes(c, p.precision);
  r.occ = occupancy(d, c.threads(), r.registers, r.smem_bytes);
  if (r.occ.blocks_per_sm == 0)
    throw InputError("configuration " + c.id() + " cannot run on " + d.name + ": " +
                     std::to_string(c.threads()) + " threads, " + std::to_string(r.registers) +
                     " registers, " + std::to_string(r.smem_bytes) +
                     " bytes of shared memory leave no block resident (limited by " +
                     to_string(r.occ.limit) + ")");

  const double clock_hz = d.sm_clock_mhz * 1e6;
  const double e = element_bytes(p.precision), ec = c_element_bytes(p.precision);
  const int fpm = fmas_per_madd(p.precision);
  const BankProfile bank = bank_profile(c, p.precision, p.op_a, p.op_b);
  const WarpTileTerms warp = warp_tile_terms(c, p.precision, d, bank);
  const MainLoopTerms loop = main_loop_terms(c);
  const int lanes = warp.fmas_per_clock;
  if (lanes <= 0) {
    const auto [cores, field] = p.precision == Precision::T ? std::pair{"TF32", "tf32"}
                                : is_reduced(p.precision)   ? std::pair{"FP16/BF16", "fp16"}
                                                            : std::pair{"FP64", "fp64"};
    throw InputError("configuration " + c.id() + " needs " + cores + " tensor cores, which " +
                     d.name + " lacks (" + field + "_mma_per_sm = 0)");
  }
  const std::int64_t tiles_m = ceil_div(p.m, c.blk_m), tiles_n = ceil_div(p.n, c.blk_n);
  // Blocks: with split-K, splits() of them per tile of C, each over k_per_split of K.
  const int splits = c.splits();
  r.tiles = tiles_m * tiles_n * p.batch * splits;
  const std::int64_t k_tiles = ceil_div(c.k_per_split(p.k), c.blk_k);
  const int warps_per_block = (c.threads() + d.warp_size - 1) / d.warp_size;
  const int blocks = r.occ.blocks_per_sm;

  // One block, one K step, cycles of the whole SM.
  const double fma_iter = double(c.blk_m) * c.blk_n * c.blk_k * fpm / lanes;
  const double loads_a = double(c.blk_m) * c.blk_k / c.threads();
  const double loads_b = double(c.blk_n) * c.blk_k / c.threads();
  const double smem_iter = warps_per_block * warp_smem_wavefronts_per_step(c, bank);
  // Every warp instruction takes an issue slot: one per clock in each of 4 sub-partitions.
  // FFMA and scalar LDS compete for them, which caps SIMT GEMM below the FMA peak.
  const double fma_instr = warp.math_instr;
  const double lds_instr = warp.fragment_instr;
  const double load_instr = loads_a / c.vec_a + loads_b / c.vec_b;
  const double loop_instr =
      c.unroll == 0 ? 0.0 : double(c.blk_k) / c.unroll * k.loop_instr_per_step;
  const double issue_iter =
      warps_per_block *
      (c.blk_k * (fma_instr + lds_instr) + load_instr * k.instr_per_global_load +
       loop.staging_stores_per_element * (loads_a + loads_b) + loop_instr + 4.0 * c.stages) /
      4.0;
  const double work_iter = std::max({fma_iter / k.fma_efficiency, smem_iter / k.smem_efficiency,
                                     issue_iter / k.issue_efficiency});
  // Barriers per K step whose wait leaves the pipes idle: none where the last step runs across
  // it (on the H100 that took one-block-per-SM D tiles from 0.795 to 0.914 of cuBLAS).
  const double syncs = c.fragments_cross_barrier() ? 0.0 : c.stages == 1 ? 2.0 : 1.0;
  // Global-load latency left after the work that overlaps it: the main loop's steps in flight.
  const double overlap = loop.steps_hiding_loads * work_iter;
  const double exposed = std::max(0.0, k.mem_latency_cycles - overlap);
  // The epilogue's C traffic moves in 32-byte sectors; a thread layout that scatters a warp's
  // elements over many sectors multiplies it (skinny-K problems are dominated by it).
  const bool reads_c = p.beta.re != 0.0 || p.beta.im != 0.0;
  // Split-K blocks add into C atomically: a read and a write of each element in L2.
  const bool adds_into_c = reads_c || splits > 1;
  const double store_bytes_block = double(c.blk_m) * c.blk_n / 32.0 *
                                   c_store_sectors_per_warp(c, p) * 32.0 * (adds_into_c ? 2 : 1);
  const double store_cycles_block = store_bytes_block / k.store_bytes_per_clock_sm;
  // A round of b co-resident blocks: they share the SM's pipes, and while one waits on its
  // loads the others issue; few warps in all cannot keep the pipes busy.
  // The first step's loads are the prologue; only the k_tiles - 1 loads after it can be hidden or
  // exposed, so a block of one K step gains nothing from prefetch. Co-resident blocks do not stay
  // in step: a block starts when another ends, and its prologue waits while the others compute,
  // so a round of b blocks exposes 1/b of a latency (held out on the recorded sweeps: median
  // regret 1.088 -> 1.050, Spearman 0.915 -> 0.920 against a whole latency per round).
  auto round_cycles = [&](int b) {
    const double issue = std::min(1.0, double(b * warps_per_block) / k.warps_to_saturate);
    auto per_iter = [&](double exposed_latency) {
      return std::max(b * work_iter / issue, work_iter + exposed_latency + syncs * k.sync_cycles);
    };
    const double epilogue = k.epilogue_cycles_per_elem * c.thr_m() * c.thr_n() * fpm;
    return double(k_tiles - 1) * per_iter(exposed) + per_iter(0.0) + k.mem_latency_cycles / b +
           epilogue + b * store_cycles_block;
  };
  const std::int64_t busiest = ceil_div(r.tiles, d.sm_count);
  const std::int64_t full_rounds = busiest / blocks;
  const int last = int(busiest % blocks);
  const double sm_cycles =
      double(full_rounds) * round_cycles(blocks) + (last ? round_cycles(last) : 0.0);
  const double sm_time = sm_cycles / clock_hz;
  r.wave_efficiency = double(r.tiles) / double(busiest * d.sm_count);

  r.fmas_per_tensor_instr = c.mma_rows() * 8 * c.mma_k();
  // Executed: the splits together run K's steps once (the last split may be shorter).
  r.fma_count = double(tiles_m * tiles_n * p.batch) * c.blk_m * c.blk_n *
                double(ceil_div(p.k, c.blk_k)) * c.blk_k * fpm;
  r.t_compute = double(busiest) * k_tiles * fma_iter / k.fma_efficiency / clock_hz;
  r.t_smem = double(busiest) * k_tiles * smem_iter / k.smem_efficiency / clock_hz;
  r.t_issue = double(busiest) * k_tiles * issue_iter / k.issue_efficiency / clock_hz;
  r.t_latency = std::max(0.0, sm_time - std::max({r.t_compute, r.t_smem, r.t_issue}));
  r.smem_wavefronts = double(r.tiles) * k_tiles * smem_iter;

  r.t_store = double(busiest) * store_cycles_block / clock_hz;
  const double c_elems = double(p.m) * p.n * p.batch;
  // DRAM sees C once each way (plus the split-K pass that scales it first); L2 sees every
  // split's read-modify-write.
  const double c_bytes = c_elems * ec * ((reads_c ? 2 : 1) + (splits > 1 ? 1 : 0));
  const double c_l2_bytes = splits > 1 ? c_elems * ec * 2 * splits : c_bytes;
  r.l2_bytes = double(r.tiles) * double(k_tiles) * c.blk_k * (c.blk_m + c.blk_n) * e + c_l2_bytes;
  const std::int64_t concurrent = std::int64_t(blocks) * d.sm_count;
  r.dram_bytes =
      p.batch * dram_ab_bytes(p, c, tiles_m, tiles_n, concurrent, double(d.l2_bytes)) + c_bytes;
  r.t_l2 = r.l2_bytes / (k.l2_bytes_per_clock_sm * d.sm_count * clock_hz);
  r.t_dram = r.dram_bytes / (d.dram_bandwidth_gbs * 1e9 * k.dram_efficiency);
  // Split-K launches a pass that scales C by beta (reads it unless beta is 0, writes it) first.
  r.t_launch = k.launch_us * 1e-6 * (splits > 1 ? 2 : 1);
  r.t_split_pass = splits > 1 ? c_elems * ec * (reads_c ? 2 : 1) /
                                    (d.dram_bandwidth_gbs * 1e9 * k.dram_efficiency)
                              : 0.0;

  const double body = std::max({sm_time, r.t_l2, r.t_dram}) + r.t_split_pass;
  r.time_s = body + r.t_launch;
  if (!k.correction.empty() && linear_correction_applies(p.precision)) {
    const auto f = correction_features(c, r);
    const bool fp64 = is_double(p.precision);
    const bool tensor_core = c.mma > 0;
    const double gate = tensor_core ? 0.0 : short_loop_gate(p);
    double log_factor = k.correction.offset + (fp64 ? k.correction.offset_fp64 : 0.0) +
                        (tensor_core ? k.correction.tensor_core_level : 0.0) +
                        gate * k.correction.short_loop_level;
    for (size_t j = 0; j < f.size(); ++j)
      log_factor += f[j] * (k.correction.all[j] + (fp64 ? k.correction.fp64[j] : 0.0) +
                            (tensor_core ? k.correction.tensor_core[j] : 0.0) +
                            gate * k.correction.short_loop[j]);
    r.correction = std::exp(std::clamp(log_factor, -kCorrectionLogBound, kCorrectionLogBound));
    r.time_s *= r.correction;
  }
  if (const TreeEnsemble& trees = k.trees_for(p.precision); !trees.empty())
    apply_learned_correction(p, c, trees, r);
  r.gflops = p.flops() / r.time_s * 1e-9;
  if (r.t_launch > body) {
    r.limit = TimeLimit::Launch;
  } else if (body == r.t_dram) {
    r.limit = TimeLimit::Dram;
  } else if (body == r.t_l2) {
    r.limit = TimeLimit::L2;
  } else if (r.t_latency > std::max({r.t_compute, r.t_smem, r.t_issue})) {
    r.limit = r.t_store > 0.5 * r.t_latency ? TimeLimit::Store : TimeLimit::Latency;
  } else if (r.t_issue >= std::max(r.t_compute, r.t_smem)) {
    r.limit = TimeLimit::Issue;
  } else {
    r.limit = r.t_smem > r.t_compute ? TimeLimit::SharedMemory : TimeLimit::Compute;
  }
  return r;
}

std::string Prediction::why() const {
  char buf[400];
  const int n = std::snprintf(
      buf, sizeof buf,
      "%s-bound: FMA %.1f us, shared %.1f us, issue %.1f us, latency %.1f us (C store %.1f us), "
      "L2 %.1f us, DRAM %.1f us; occupancy %.0f%% (%d blocks/SM, %s), waves %.2f",
      to_string(limit), t_compute * 1e6, t_smem * 1e6, t_issue * 1e6, t_latency * 1e6,
      t_store * 1e6, t_l2 * 1e6, t_dram * 1e6, occ.fraction * 100, occ.blocks_per_sm,
      to_string(occ.limit), wave_efficiency);
  int used = n;
  if (t_split_pass > 0 && used > 0 && size_t(used) < sizeof buf)
    used += std::snprintf(buf + used, sizeof buf - size_t(used), "; split-K pass over C %.1f us",
                          t_split_pass * 1e6);
  // The terms above are the analytical model's; the calibrated time is theirs times this.
  if (correction != 1.0 && used > 0 && size_t(used) < sizeof buf)
    std::snprintf(buf + used, sizeof buf - size_t(used), "; calibrated correction x%.2f",
                  correction);
  return buf;
}

}  // namespace gemmtune
