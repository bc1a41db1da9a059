// gemmtune search: the kernel space of a problem, the constraints that prune it (counted stage
// by stage, as the seeds' funnel), and the model's ranking of what survives.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "model/model.hpp"

namespace gemmtune {

// Whether a domain's list of values for one parameter holds v.
inline bool enumerates(const std::vector<int>& values, int v) {
  for (int x : values)
    if (x == v) return true;
  return false;
}

// Values each parameter takes. Tiling factors (the seeds' nine plus vector widths) are
// enumerated in full; variants multiply each tiling.
struct SpaceDomain {
  std::vector<int> blk_m{16, 32, 64, 96, 128, 192, 256};
  std::vector<int> blk_n{16, 32, 64, 96, 128, 192, 256};
  std::vector<int> blk_k{4, 8, 16, 32};
  std::vector<int> dim_x{4, 8, 16, 32, 64};
  std::vector<int> dim_y{4, 8, 16, 32, 64};
  std::vector<int> dim_xa{1, 2, 4, 8, 16, 32, 64, 128, 256};  // DIM_YA = threads / DIM_XA
  std::vector<int> dim_xb{1, 2, 4, 8, 16, 32, 64, 128, 256};  // DIM_YB = threads / DIM_XB
  std::vector<int> vec_a{1, 2, 4};
  std::vector<int> vec_b{1, 2, 4};
  // FP64 tensor cores: 1 m8n8k4 (sm_80+); 2, 3, 4 m16n8k4, m16n8k8, m16n8k16 (sm_90+)
  std::vector<int> mma{0, 1, 2, 3, 4};
  std::vector<int> async_copy{0, 1};  // 1: cp.async pipeline of ST stages (sm_80+)
  // Blocks per tile of C along K (0: no split). Only problems with few tiles of C keep a split
  // past the tile-fit stage, so large problems pay nothing for them.
  std::vector<int> split_k{0, 2, 4, 8, 16, 32, 64};
  // variants
  std::vector<int> stages{1, 2, 3, 4};  // 3 and 4 with the cp.async pipeline only
  std::vector<int> pad{0, 1, 2, 3, 4};  // 4: conflict-free transposed stores of 8-deep tiles
  std::vector<int> smem_a_kmajor{0, 1};
  std::vector<int> smem_b_kmajor{0, 1};
  std::vector<int> prefetch{0, 1, 2, 3};
  std::vector<int> unroll{0};  // partial unrolls {1, 2, 4, 8} are explored by local refinement
  std::vector<int> edge{0, 1};
  std::vector<int> raster{1, 8};
  std::vector<int> vec_s{1, 2, 4};
  std::vector<int> vec_c{0, 1};     // 1: C stored VS rows at a time (KernelConfig::vec_c)
  std::vector<int> shared32{0, 1};  // 1: fragment loads on 32-bit shared addresses (VS > 1)
  // The soft stage fmas_per_load's floor for large problems with K <= 128 ("auto" thresholds
  // only). A long K loop repays high intensity; a short one is a few steps, and the prologue and
  // C store weigh as much, so more, smaller blocks per SM may win (S 6144x6080x64: BM64_BN128,
  // 42.7 FMAs per load, 1.102x cuBLAS, pruned by a floor of 48).
  double short_k_min_fmas_per_load = 24;

  double tiling_count() const;
  double variant_count() const;

  // "full" (the default above); "compact": the values that won on the H100 in the full space
  // plus one step either side, small enough (hundreds of configurations a problem) that an
  // exhaustive sweep is affordable; "tensor": the full domain's unsplit FP64 tensor-core
  // kernels, to be sampled. Throws InputError naming the known domains.
  static SpaceDomain named(const std::string& name);
};

enum class StageKind { Hard, Soft };

// The funnel's stages, in the order they are applied.
enum class Stage : int {
  LayoutDivides,       // hard: tile sizes divisible by compute and read layouts, all threads read
  WarpMultiple,        // hard: threads a multiple of the warp size
  MaxThreads,          // hard: threads <= the device's limit per block
  VectorAlignment,     // hard: vector loads <= 16 bytes, leading dimensions multiples of the width
  SharedMemory,        // hard: shared memory <= the opt-in limit per block
  SharedVector,        // hard: vector shared reads need K-major tiles, aligned rows, whole groups
  RegistersPerThread,  // hard: estimated registers <= the per-thread limit under launch bounds
  RegistersPerBlock,   // hard: estimated registers x threads <= the register file per block
  ThreadCount,         // soft: threads within [min, max] (seed 001: >= 256; seed 004: 32..512)
  FmasPerLoad,         // soft: FMAs per element loaded from global >= threshold (seed 001: 64)
  TileFitsProblem,     // soft: no more than half of a tile wasted along M, N or K; split-K
                       // only with few tiles and >= 4 K steps per split, none left empty
  CoalescedReads,      // soft: a row of reading threads covers 128 bytes or the whole tile row
  MinOccupancy,        // soft: active warps / max warps >= threshold
  BankConflicts,       // soft: shared layout and padding with the fewest wavefronts, least padding
  RelevantVariants,    // soft: edge mode only with ragged edges, rasterization only with many
                       // tiles, VC1 only where the kernel has a vector path for C, VC0 elsewhere
  Count
};
inline constexpr int kStageCount = static_cast<int>(Stage::Count);
const char* stage_name(Stage s);
StageKind stage_kind(Stage s);
Stage parse_stage(std::string_view name);  // throws InputError listing the stage names

struct ConstraintOptions {
  std::array<bool, kStageCount> enabled;
  // Thresholds of the soft stages. "auto" values (< 0) are chosen from the problem: a small or
  // batched problem (fewer than 2 tiles of 64x64 per SM) gets seed 004's rules (32..512
  // threads, small tiles), a large one (8 or more per SM) seed 001's spirit (many threads,
  // high compute intensity), and one in between something of each.
  int min_threads = -1, max_threads = -1;
  double min_fmas_per_load = -1;
  double min_occupancy = 0.125;
  ConstraintOptions() { enabled.fill(true); }
};

struct Funnel {
  double raw = 0;  // size of the unpruned space
  struct Row {
    Stage stage;
    double remaining;
  };
  std::vector<Row> rows;  // one per enabled stage, in order
  std::string to_table() const;
};

// Calls visit for each configuration that passes every enabled stage, in a fixed order, and
// returns the funnel. The raw space is never materialized: it is walked lazily, on every
// hardware thread, and only the survivors are gathered, then visited on the calling thread.
Funnel enumerate_space(const Problem& problem, const DeviceSpec& device, const SpaceDomain& domain,
                       const ConstraintOptions& options,
                       const std::function<void(const KernelConfig&)>& visit);

// The first enabled stage one configuration fails, or Stage::Count when it passes them all.
// The bank-conflict stage compares it with its siblings (other layouts and pads) in domain.
Stage first_failing_stage(const Problem& problem, const DeviceSpec& device,
                          const SpaceDomain& domain, const ConstraintOptions& options,
                          const KernelConfig& config);

std::vector<KernelConfig> pruned_space(const Problem& problem, const DeviceSpec& device,
                                       const SpaceDomain& domain = {},
                                       const ConstraintOptions& options = {});

// The first hard stage a configuration breaks, with a message naming the value and the limit.
struct Violation {
  Stage stage;
  std::string message;
};
std::optional<Violation> check_hard(const Problem& problem, const DeviceSpec& device,
                                    const KernelConfig& config);

struct Ranked {
  KernelConfig config;
  Prediction prediction;
};
struct Ranking {
  Funnel funnel;
  std::vector<Ranked> top;  // best first
  std::int64_t evaluated = 0;
  double seconds = 0;  // wall time of enumeration, pruning and prediction
};
// Predicts every configuration of the pruned space (on every hardware thread) and keeps the
// best top_k; equal predictions keep the enumeration's order.
Ranking rank_space(const Problem& problem, const DeviceSpec& device, int top_k,
                   const ModelCoefficients& coefficients = {}, const SpaceDomain& domain = {},
                   const ConstraintOptions& options = {});

// ---------------------------------------------------------------- tuning

// What measuring one configuration gave. status is "ok" or the failure class.
struct Evaluation {
  KernelConfig config;
  std::string status = "ok";
  std::string error;
  double time_s = 0;  // median
  double min_s = 0, max_s = 0;
  int repetitions = 0;
  double rel_error = 0;
  int registers = 0;  // from the compiler; 0 when unknown
  int spill_bytes = 0;
  double energy_j = 0;        // per run (NVML); 0 when not measured
  std::string counters_json;  // {"metric": value, ...}; "" when not collected
  bool ok() const { return status == "ok"; }
};

// What a strategy minimizes (seed 001: "the fastest, or the most energy efficient?").
enum class Objective { Time, Energy, Edp };
Objective parse_objective(const std::string& name);  // time, energy, edp; else InputError
// Seconds, joules, or joule-seconds; +inf for a failed attempt or one without the energy the
// objective needs.
double score(const Evaluation& e, Objective objective);

// What the compiler made of one configuration.
struct CompiledInfo {
  int registers = -1;   // per thread; -1: it failed to compile, 0: unknown
  int spill_bytes = 0;  // local-memory spill stores per thread
  bool ok() const { return registers >= 0; }
};

// Strategies see the GPU only through this. On a GPU it compiles and measures (profiler);
// in tests and --replay it answers from recorded measurements.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual const DeviceSpec& device() const = 0;
  // Compiles each configuration (ahead of measuring it) and says what the compiler made of it.
  virtual std::vector<CompiledInfo> compile(const Problem& problem,
                                            const std::vector<KernelConfig>& configs) = 0;
  // Verifies and times each configuration, in order.
  virtual std::vector<Evaluation> measure(const Problem& problem,
                                          const std::vector<KernelConfig>& configs) = 0;
  // Whether measure() can answer for this configuration (a replay knows only what it recorded).
  virtual bool can_evaluate(const KernelConfig&) const { return true; }
  // How many configurations compile side by side: a batch this size takes about as long as one.
  virtual int compile_width() const { return 1; }
};

// Answers from recorded evaluations of one problem. A configuration never recorded is an error
// (InputError naming it), so a replayed strategy cannot silently measure nothing. delay_s: each
// measurement takes that long, as a GPU would, so that schedules can be timed without one.
class ReplayEvaluator : public Evaluator {
 public:
  ReplayEvaluator(DeviceSpec device, std::vector<Evaluation> recorded, double delay_s = 0);
  const DeviceSpec& device() const override { return device_; }
  std::vector<CompiledInfo> compile(const Problem& problem,
                                    const std::vector<KernelConfig>& configs) override;
  std::vector<Evaluation> measure(const Problem& problem,
                                  const std::vector<KernelConfig>& configs) override;
  const std::vector<Evaluation>& recorded() const { return recorded_; }
  bool can_evaluate(const KernelConfig& c) const override;

 private:
  const Evaluation& find(const KernelConfig& c) const;
  DeviceSpec device_;
  std::vector<Evaluation> recorded_;
  std::vector<std::pair<std::string, size_t>> index_;  // sorted by id
  double delay_s_ = 0;
};

struct Budget {
  int evaluations = 0;  // 0: no limit
  double seconds = 0;   // 0: no limit
};

struct TuneResult {
  std::optional<Evaluation> best;
  int evaluations = 0;              // configurations measured
  int compiled = 0;                 // configurations compiled (hybrid)
  std::vector<double> best_after;   // best time after each evaluation (inf until one is ok)
  std::vector<Evaluation> history;  // every evaluation, in order
  double seconds = 0;
  std::string stopped_by;  // "space exhausted", "evaluation budget", "time budget", "converged"
};

using EvaluationSink = std::function<void(const Evaluation&)>;  // e.g. the store, after each one

// Every configuration given, in order (the caller drops what the store already has).
TuneResult sweep(const Problem& problem, Evaluator& evaluator,
                 const std::vector<KernelConfig>& configs, const Budget& budget = {},
                 const EvaluationSink& sink = {});

// Uniformly random order over the configurations given, without repetition.
TuneResult random_search(const Problem& problem, Evaluator& evaluator,
                         std::vector<KernelConfig> configs, unsigned seed,
                         const Budget& budget = {}, const EvaluationSink& sink = {});

struct HybridOptions {
  int compile_top = 64;   // model's top configurations compiled
  int measure_top = 8;    // of those, re-ranked with real registers, measured first
  int refine_rounds = 8;  // coordinate-descent passes around the best measured
  Budget budget{};
  ModelCoefficients coefficients{};
  SpaceDomain domain{};
  ConstraintOptions constraints{};
  // The model ranks by time whatever the objective; measurements are compared by it.
  Objective objective = Objective::Time;
};
// The hybrid: rank by the model, compile the top k, re-rank with the compiler's registers,
// measure the best few, then refine by coordinate descent over neighbouring parameter values
// (seed 003), each neighbourhood ordered by the model; stops at the budget.
TuneResult hybrid_tune(const Problem& problem, Evaluator& evaluator,
                       const HybridOptions& options = {}, const EvaluationSink& sink = {});

// Neighbours of a configuration: one parameter moved one step in its domain (unroll also
// visits {1, 2, 4, 8}), kept only if they pass the hard constraints.
std::vector<KernelConfig> neighbours(const Problem& problem, const DeviceSpec& device,
                                     const KernelConfig& c, const SpaceDomain& domain);

}  // namespace gemmtune
