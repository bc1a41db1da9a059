// gemmtune core: the problem, the kernel configuration and the device description.
// Nothing here needs a CUDA runtime; everything else in the library builds on these types.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gemmtune {

// Bad user input: sizes, names, ids, files. The message names the value and the rule it broke.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------- problem

// S, D, C, Z: BLAS's. H, B, T: FP16, BF16 and TF32 (FP32 storage, rounded to TF32) inputs on
// tensor cores, FP32 accumulation, FP32 C, alpha and beta.
enum class Precision : std::uint8_t { S, D, C, Z, H, B, T };
enum class Op : std::uint8_t { N, T, C };  // C = conjugate transpose (complex only)

char to_char(Precision p);
char to_char(Op op);
Precision parse_precision(std::string_view text);
Op parse_op(std::string_view text);
int element_bytes(Precision p);    // bytes of one element of A or B (complex counts both parts)
int c_element_bytes(Precision p);  // bytes of one element of C (and of alpha and beta)
int real_bytes(Precision p);       // bytes of one real component of C
bool is_complex(Precision p);
bool is_double(Precision p);
// H, B, T: inputs for tensor cores only, accumulated and stored in FP32.
bool is_reduced(Precision p);

// Real fused multiply-adds per complex or real multiply-add of the GEMM.
int fmas_per_madd(Precision p);

// How a batched call finds its matrices: a property of the call, not a tuning parameter. The
// kernel source is rendered for one (BATCH_MODE): Strided, matrix z at A + z * stride (a Problem's
// batch); PointerArray, device arrays of pointers, one shape for all; Variable, per-matrix sizes
// and leading dimensions in device arrays too.
enum class BatchKind : std::uint8_t { Strided, PointerArray, Variable };
const char* to_string(BatchKind kind);
// "strided", "pointer" (or "pointer-array"), "variable" (or "vbatched"); throws InputError
// listing them.
BatchKind parse_batch_kind(std::string_view text);

struct Scalar {
  double re = 1.0;
  double im = 0.0;
  bool operator==(const Scalar&) const = default;
};

// One GEMM call, BLAS convention: column-major, C(MxN) = alpha op(A) op(B) + beta C.
// Leading dimensions of 0 mean "packed" and are filled in by normalized().
struct Problem {
  Precision precision = Precision::S;
  Op op_a = Op::N;
  Op op_b = Op::N;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1;
  Scalar alpha{1.0, 0.0};
  Scalar beta{0.0, 0.0};

  // Rows of A and B as stored (before op).
  std::int64_t rows_a() const { return op_a == Op::N ? m : k; }
  std::int64_t cols_a() const { return op_a == Op::N ? k : m; }
  std::int64_t rows_b() const { return op_b == Op::N ? k : n; }
  std::int64_t cols_b() const { return op_b == Op::N ? n : k; }
  // Elements between consecutive matrices of a strided batch.
  std::int64_t stride_a() const { return lda * cols_a(); }
  std::int64_t stride_b() const { return ldb * cols_b(); }
  std::int64_t stride_c() const { return ldc * n; }

  double flops() const;  // real floating-point operations (2 per real FMA)
  double min_bytes()
      const;  // compulsory DRAM traffic: A, B read once, C written (and read if beta != 0)
  Problem normalized() const;    // fills packed leading dimensions, then validates
  void validate() const;         // throws InputError naming the bad field and the rule
  std::string shape_id() const;  // e.g. "s_nt_1000x1000x1000_b1"
  bool operator==(const Problem&) const = default;
};

// A packed problem (leading dimensions = rows), validated.
Problem make_problem(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int64_t batch = 1);

// Problems drawn at random with a fixed seed: M, N, K log-uniform over [min_size, max_size],
// every precision and op shape, a share of strided batches of small matrices, of padded odd
// leading dimensions and of beta = 1; each kept only if it would run under max_seconds at a
// fraction of the device's peak (sampling_seconds_estimate), so that one run stays short.
struct DeviceSpec;
inline constexpr double kSamplingPeakFraction = 0.5;
inline constexpr std::int64_t kSampledBatchMaxSize = 256;  // batched: sizes up to this
inline constexpr std::int64_t kSampledMaxBatch = 4096;
struct ProblemSampling {
  unsigned seed = 1;
  int count = 80;
  std::int64_t min_size = 16, max_size = 16384;
  double max_seconds = 0.05;
  double batched_share = 0.15, odd_ld_share = 0.15, beta_share = 0.2;
  std::vector<Precision> precisions{Precision::S, Precision::D, Precision::C, Precision::Z};
  void validate() const;  // throws InputError naming the bad field and its limit
};
double sampling_seconds_estimate(const Problem& p, const DeviceSpec& device);
std::vector<Problem> random_problems(const ProblemSampling& sampling, const DeviceSpec& device);
// The problem in the command line's option syntax ("--precision s --opa n ... --k 64"), packed
// leading dimensions, batch 1, alpha 1 and beta 0 left out.
std::string problem_options(const Problem& p);

// ---------------------------------------------------------------- kernel configuration

enum class EdgeMode : std::uint8_t { Predicate = 0, Redirect = 1 };

// Every parameter of the GEMM kernels (kernels/*.cuh). Read layouts are in the
// coordinates of the matrix as stored: DIM_XA threads run along A's leading (contiguous)
// dimension, DIM_YA along the other, so the same numbers mean coalesced reads for any op.
struct KernelConfig {
  int blk_m = 64, blk_n = 64, blk_k = 8;  // tile of C per block and depth of one K step
  int dim_x = 16, dim_y = 16;             // compute layout; thread owns THR_M x THR_N of C
  int dim_xa = 16, dim_ya = 16;           // read layout of the A tile
  int dim_xb = 16, dim_yb = 16;           // read layout of the B tile
  int vec_a = 1, vec_b = 1;               // elements per global load (1, 2, 4; <= 16 bytes)
  int smem_a_kmajor = 1;                  // A tile in shared as [K][M] (1) or [M][K] (0)
  int smem_b_kmajor = 1;                  // B tile in shared as [K][N] (1) or [N][K] (0)
  int pad = 0;                            // extra elements per shared row (bank conflicts)
  int prefetch = 0;                       // register prefetch: 0 none, 1 A, 2 B, 3 both
  int stages = 1;                         // shared buffers (2 = double buffering)
  // Inner-loop unroll factor, 0 = full. With cp.async, 0 also selects the main loop that reads
  // fragments (mma) or operands (SIMT) across the K step's barrier (fragments_cross_barrier()).
  int unroll = 0;
  EdgeMode edge = EdgeMode::Predicate;  // out-of-range handling along M and N
  int raster = 1;                       // block rasterization group along M (L2 reuse)
  int vec_s = 1;                        // shared-memory read width in the compute loop
  // Tensor cores: 1 mma.sync m8n8k4 (D, Z; sm_80+); 2, 3, 4 m16n8k4, m16n8k8, m16n8k16 (D, Z on
  // sm_90+; H, B: 3, 4 and T: 2, 3 on sm_80+; THR_M even). The DIM_X x DIM_Y grid is then a grid of
  // warps of 8 x 4 lanes (the mma's C layout): a warp owns (THR_M*8) x (THR_N*4) of C.
  int mma = 0;
  // 1: shared tiles filled by a STAGES-deep cp.async pipeline (sm_80+), no register staging.
  int async_copy = 0;
  // Split-K: 0 none, else 2..64 blocks share a tile of C, each a contiguous part of K, and add
  // their partial sums into C atomically after a pass that scales C by beta.
  int split_k = 0;
  // 1: the epilogue stores C VEC_S rows at a time where C is aligned for it (the unsplit SIMT
  // kernel with VEC_S > 1), or, in mma kernels, stages each warp's C through shared memory and
  // stores 16 bytes a lane (unsplit, real C); elsewhere VC1 is VC0. 0: the warp tile's own
  // layout, one element per store.
  int vec_c = 0;
  // 1: the compute loop's vector fragment loads take 32-bit shared addresses (ld.shared through
  // inline PTX) instead of the 64-bit ones NVRTC emits; only the SIMT kernel with VEC_S > 1 has
  // such loads (has_shared32_path()).
  int shared32 = 0;

  int threads() const { return dim_x * dim_y; }
  int thr_m() const { return blk_m / dim_x; }
  int thr_n() const { return blk_n / dim_y; }
  // k and rows of C of one mma instruction (0 for SIMT kernels).
  int mma_k() const { return mma == 4 ? 16 : mma == 3 ? 8 : mma ? 4 : 0; }
  int mma_rows() const { return mma >= 2 ? 16 : mma ? 8 : 0; }
  int splits() const { return split_k > 1 ? split_k : 1; }
  // Whether the pipe (tensor or FMA) has the last step of a K step (one mma, or one k of the
  // SIMT outer product) to run while its barrier waits: cp.async kernels at UR0.
  bool fragments_cross_barrier() const { return async_copy && unroll == 0; }
  // Whether the kernel has a vector C store for this precision and ldc (VC1 takes it): the unsplit
  // kernel of a family with vector fragments, VS > 1, where ldc is a multiple of VS; or an
  // unsplit mma kernel of real C whose ldc is a multiple of 16 bytes and whose warps' staging (8
  // columns of each warp's rows) fits within its tiles' shared memory (without padding), as
  // epilogue.cuh tests it. Either path also needs C aligned for it at run time.
  bool has_vector_c_path(Precision p, std::int64_t ldc) const;
  // Whether SL1 means anything: the vector fragment loads (VS > 1) of a family that has them.
  bool has_shared32_path() const;
  // K of one split: whole K steps, so every split but the last starts on a step boundary.
  std::int64_t k_per_split(std::int64_t k) const {
    const std::int64_t steps = (k + blk_k - 1) / blk_k;
    return (steps + splits() - 1) / splits() * blk_k;
  }
  // Canonical text id:
  // "BM64_BN64_BK8_DX16_DY16_DXA16_DYA16_DXB16_DYB16_VA1_VB1_LA1_LB1_PD0_PF0_ST1_UR0_RS1_VS1_ED0".
  std::string id() const;
  static KernelConfig parse(std::string_view id);  // throws InputError; missing keys keep defaults
  bool operator==(const KernelConfig&) const = default;
};

// Column names and values in the seeds' CSV style (one column per tuning parameter).
std::vector<std::string> config_csv_header();
// Keys added after the first recordings (MM, AC, SK, VC, SL): absent from an id or a CSV they are
// 0.
bool config_key_optional(std::string_view key);
std::vector<int> config_csv_values(const KernelConfig& c);
// The same into `values` (cleared first), which a hot loop reuses.
void config_csv_values(const KernelConfig& c, std::vector<int>& values);

// ---------------------------------------------------------------- tuning parameters

// Whether a domain's list of values for one parameter holds v.
inline bool enumerates(const std::vector<int>& values, int v) {
  for (int x : values)
    if (x == v) return true;
  return false;
}

// Values each parameter takes, filled from the parameter table (tuning_parameters()). Tiling
// factors are enumerated in full; variants multiply each tiling.
struct SpaceDomain {
  std::vector<int> blk_m, blk_n, blk_k, dim_x, dim_y;
  std::vector<int> dim_xa, dim_xb;  // DIM_YA = threads / DIM_XA, DIM_YB = threads / DIM_XB
  std::vector<int> vec_a, vec_b, mma, async_copy, split_k;
  // variants
  std::vector<int> stages, pad, smem_a_kmajor, smem_b_kmajor, prefetch, unroll, edge, raster, vec_s,
      vec_c, shared32;
  // The soft stage fmas_per_load's floor for large problems with K <= 128 ("auto" thresholds
  // only). A long K loop repays high intensity; a short one is a few steps, and the prologue and
  // C store weigh as much, so more, smaller blocks per SM may win (S 6144x6080x64: BM64_BN128,
  // 42.7 FMAs per load, 1.102x cuBLAS, pruned by a floor of 48).
  double short_k_min_fmas_per_load = 24;

  SpaceDomain();  // the full domain
  double tiling_count() const;
  double variant_count() const;

  // "full" (the default); "wide": full with every value refinement steps to (partial unrolls and
  // rasters); "compact": the values that won on the H100 in the full space plus one
  // step either side, small enough (hundreds of configurations a problem) that an exhaustive
  // sweep is affordable; "tensor": the full domain's unsplit FP64 tensor-core kernels, to be
  // sampled. Throws InputError naming the known domains.
  static SpaceDomain named(const std::string& name);
  // This domain for a problem of precision p: for H, B and T, with each parameter's reduced
  // values added; else unchanged.
  SpaceDomain for_precision(Precision p) const;
};

// The kernel families (main loops) a parameter shapes, as bits.
enum KernelFamily : unsigned {
  kRegisterStagedSimt = 1,  // SIMT, tiles staged through registers
  kCpAsyncSimt = 2,         // SIMT, cp.async straight into shared memory
  kMma = 4,                 // tensor cores (mma.sync), either fill path
  kEveryFamily = 7,
};

// When a parameter's #define appears in the kernel source.
enum class MacroWhen {
  Always,
  Set,    // only when not 0, so kernels from before the parameter keep their source
  Split,  // only when above 1 (split-K)
};

// One tuning parameter, declared once: ids and CSV columns, the kernel's #defines, the space's
// domains and counts, and refinement's steps iterate the table of these.
struct TuningParameter {
  const char* token = "";  // in ids and CSV columns: "BM"
  int (*get)(const KernelConfig&) = nullptr;
  void (*set)(KernelConfig&, int) = nullptr;
  const char* macro = "";  // the kernel source's #define
  MacroWhen macro_when = MacroWhen::Always;
  // Place among the source's #defines: kernels keep the source they always had, since cached
  // cubins are keyed by it.
  int source_rank = 0;
  // A token added after the first recordings: printed only when not 0, 0 when an id or a CSV
  // lacks it.
  bool optional = false;
  // The values a configuration may hold, checked where an id is read and by the hard
  // constraints, and what they mean, for the errors of both.
  bool (*valid)(int) = nullptr;
  const char* meaning = "";
  // Values per named domain (compact and tensor: empty means as full); the SpaceDomain member
  // that holds them, nullptr for a parameter that follows from others (DYA, DYB).
  std::vector<int> SpaceDomain::*domain = nullptr;
  std::vector<int> full{}, compact{}, tensor{};
  // Values every domain adds for H, B and T problems (SpaceDomain::for_precision): deeper K
  // steps and wider padding, which 16-bit fragments need and the FP32/FP64 spaces were never
  // fitted on.
  std::vector<int> reduced{};
  // values, with the reduced ones appended for a problem of precision H, B or T.
  std::vector<int> values_for(std::vector<int> values, Precision p) const;
  bool tiling = false;  // enumerated in full per tiling (else a variant of one)
  // Refinement: an ordered parameter steps to a neighbouring value, another to every other
  // value, over refine_values (empty: the domain's); refine_rank orders the moves (0: none).
  bool ordered = false;
  std::vector<int> refine_values{};
  int refine_rank = 0;
  // A variant's place in the space walk (search/space.cpp): walk_level, the level that fixes it
  // (2: with the shared layout; 3: with the registers; 4: the last, the relevant variants);
  // walk_rank, its loop's nesting among the variants, outermost first.
  int walk_level = 0;
  int walk_rank = 0;
  // The member the walk stores a variant's values into directly, where it is an int: set is an
  // indirect call, too dear in the walk's innermost loops. nullptr: the walk calls set.
  int KernelConfig::*walk_member = nullptr;
  unsigned families = kEveryFamily;  // KernelFamily bits
  // The one value a variable-size batch's kernel takes, unset where any will do: no split-K (its
  // matrices share no K), one element per global load of A and B (their leading dimensions
  // differ by matrix).
  std::optional<int> variable_batch{};
};
// In the canonical order of ids and CSV columns.
const std::vector<TuningParameter>& tuning_parameters();
// Throws InputError naming the token and listing the known ones.
const TuningParameter& tuning_parameter(std::string_view token);
// A chosen configuration as a variable-size batch's kernel runs it, and the space of such kernels
// (each parameter's variable_batch value).
KernelConfig variable_batch_config(KernelConfig c);
SpaceDomain variable_batch_domain(SpaceDomain domain);

// ---------------------------------------------------------------- device description

struct DeviceSpec {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_mhz = 0;        // boost clock the FMA peak is quoted at
  double dram_bandwidth_gbs = 0;  // GB/s (1e9 bytes), theoretical
  std::int64_t l2_bytes = 0;
  int fp32_lanes_per_sm = 0;  // FP32 FMA per clock per SM
  int fp64_lanes_per_sm = 0;  // FP64 FMA per clock per SM (SIMT pipe, not tensor cores)
  int fp64_mma_per_sm = 0;    // FP64 FMA per clock per SM on tensor cores (0: none)
  // FP16/BF16 and TF32 FMA per clock per SM through mma.sync (0: none). Hopper's wgmma runs
  // faster; these are the warp-level instruction's rates.
  int fp16_mma_per_sm = 0;
  int tf32_mma_per_sm = 0;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  std::int64_t smem_per_sm = 0;
  std::int64_t smem_per_block = 49152;  // default limit without opt-in
  std::int64_t smem_per_block_optin = 0;
  std::int64_t smem_reserved_per_block = 0;
  int max_threads_per_sm = 2048;
  int max_threads_per_block = 1024;
  int max_blocks_per_sm = 32;
  int warp_size = 32;
  int smem_banks = 32;
  double smem_bytes_per_clock = 128;  // per SM

  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
  double peak_gflops(Precision p) const;  // FMA or tensor peak in GFLOP/s for that precision
  // The tensor-core rate a precision's mma kernels run at: fp64_mma_per_sm for D and Z,
  // fp16_mma_per_sm for H and B, tf32_mma_per_sm for T; 0 for S and C.
  int mma_fmas_per_sm(Precision p) const;
  void validate() const;  // throws InputError naming the bad field
  bool operator==(const DeviceSpec&) const = default;
};

// Built-in table; lookup is case-insensitive and ignores '-', '_' and spaces.
const std::vector<DeviceSpec>& builtin_devices();
std::vector<std::string> builtin_device_names();
DeviceSpec find_builtin_device(std::string_view name);  // throws InputError listing known names
// The built-in spec a device name means (a spec name, an alias, or the driver's name for the
// part, such as "NVIDIA H100 80GB HBM3"), or "" for none.
std::string spec_name_of(std::string_view device_name);

std::string device_to_json(const DeviceSpec& d);
DeviceSpec device_from_json(const std::string& json_text);  // throws InputError
DeviceSpec load_device_file(const std::string& path);       // throws InputError
// The whole file as text, inflated where it is gzip-compressed (the first bytes say); throws
// InputError naming `what` and the path when it cannot be read or is a broken gzip file.
std::string read_text_file(const std::string& path, const std::string& what = "file");

// ---------------------------------------------------------------- kernel families

// A main loop (how tiles reach shared memory) and its rules, declared once: the funnel's stages
// read them (search), and kernels/ adds the files of its source.
struct MainLoopRules {
  const char* name = "";
  int async_copy = 0;  // the AC value that selects it
  // Whether the device and the problem admit it at all.
  bool (*supported)(const KernelConfig&, const Problem&, const DeviceSpec&) = nullptr;
  // Whether its fill path can produce the stage count and shared layouts.
  bool (*layout_ok)(const KernelConfig&, const Problem&) = nullptr;
  // Whether the variant parameters it ignores hold the one value kept for them.
  bool (*variant_relevant)(const KernelConfig&) = nullptr;
};

// A kernel family (how a warp computes its tile) and its rules, declared once likewise.
struct FamilyRules {
  const char* name = "";
  KernelFamily bit = kRegisterStagedSimt;  // as TuningParameter::families names it
  bool (*selects)(const KernelConfig&) = nullptr;
  // Whether the device and the problem admit its instructions at all.
  bool (*supported)(const KernelConfig&, const Problem&, const DeviceSpec&) = nullptr;
  // Whether its warp tile fits the thread layout and the block tile.
  bool (*warp_tile_fits)(const KernelConfig&, const Problem&) = nullptr;
  // Whether its fragment reads work on the shared layouts and padding (LA, LB, PD).
  bool (*layout_ok)(const KernelConfig&, const Problem&) = nullptr;
  // Whether its fragments may be read VS > 1 elements at a time (and then on 32-bit addresses,
  // SL, or stored VS rows at a time, VC).
  bool vector_fragments = false;
};

// Exactly one family and one main loop select any configuration; a family runs with the main
// loops whose AC values it lists in its parameters (AC for FP64 mma and cp.async SIMT).
std::span<const FamilyRules> family_rules();
std::span<const MainLoopRules> main_loop_rules();
const FamilyRules& family_rules_of(const KernelConfig& c);       // throws std::logic_error
const MainLoopRules& main_loop_rules_of(const KernelConfig& c);  // throws std::logic_error
// The mma.sync shapes (MM values) of FP16 and BF16 (m16n8k8, m16n8k16: 3, 4) and of TF32
// (m16n8k4, m16n8k8: 2, 3), the shorter first.
std::array<int, 2> reduced_mma_shapes(Precision p);
// Whether the mma family reads a precision's FP16, BF16 or TF32 fragments with ldmatrix (one
// instruction for four 8 x 8 matrices of 16-bit values) instead of 32-bit words: where every
// shared row starts on 16 bytes and 8 consecutive rows fall on distinct 16-byte bank groups, so
// its reads are conflict-free (16-bit values: PD8 at BK32 or BK64; TF32: PD4). The kernel and the
// model follow this rule.
bool fragments_by_ldmatrix(const KernelConfig& c, Precision p);
// The cp.async loop's landing rule: the shared layout (LA for of_a, else LB) that keeps A's or
// B's stored order, and whether c's copies can write the layout it chose.
int stored_order_kmajor(const Problem& p, bool of_a);
bool async_copy_lands(const KernelConfig& c, const Problem& p, bool of_a);

// Helpers shared by the text parsers.
std::int64_t parse_int(std::string_view text, std::string_view what);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Threads of this machine (at least 1).
int hardware_threads();
// Runs body(index, worker) for every index in [0, count) on `threads` workers (0: one per
// hardware thread), worker in [0, threads); the calling thread is worker 0. Rethrows the first
// exception a task threw, after every worker has stopped.
void parallel_for(std::size_t count, const std::function<void(std::size_t, int)>& body,
                  int threads = 0);

}  // namespace gemmtune
