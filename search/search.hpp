// gemmtune search: the kernel space of a problem, the constraints that prune it (counted stage
// by stage, as the seeds' funnel), and the model's ranking of what survives.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/core.hpp"
#include "model/model.hpp"

namespace gemmtune {

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

// `ranked` (the space's shortlist, best first) followed by the calibration's proven kernels of
// the problem's precision that it lacks and the problem can run (check_hard), best predicted
// first, at most kProvenCandidates of them: the candidates a compiled shortlist ranks together
// (measured on the 41 H100 problems held out of the shipped fit, the pick of the space's first
// 128 and these 32 compiled reached a median 0.949 of each problem's best against 0.922 for the
// space's alone; bench/RESULTS.md).
constexpr int kProvenCandidates = 32;
std::vector<KernelConfig> with_proven(const Problem& problem, const DeviceSpec& device,
                                      const ModelCoefficients& coefficients,
                                      std::vector<KernelConfig> ranked);

// A variable-size batch's kernels ranked for its size distribution rather than for its largest
// matrix alone: candidates are the best of the space as a variable batch's kernel runs (no
// split-K, one element per global load of A and B) for the matrices at a quarter, half and three
// quarters of the batch's work and for `largest` (the maxima, which the launch covers: every
// candidate is valid for it), max(16, top_k) of each; each is scored as one launch: up to 64
// slices of the batch's non-empty matrices in work order, each slice's middle matrix predicted as
// a strided batch of all of them, weighed by the slice's share. prediction is the candidate's for
// `largest`, except time_s, the weighed score. Best first; throws InputError for top_k < 1 or no
// sizes.
std::vector<Ranked> rank_for_sizes(const Problem& largest, const std::vector<Problem>& sizes,
                                   const DeviceSpec& device, int top_k,
                                   const ModelCoefficients& coefficients = {},
                                   const SpaceDomain& domain = {});
// rank_for_sizes's score of one configuration (as the variable kernel runs it: the caller's to
// adapt), without its hard-constraint check; throws InputError for no sizes.
double time_for_sizes(const Problem& largest, const std::vector<Problem>& sizes,
                      const DeviceSpec& device, const KernelConfig& config,
                      const ModelCoefficients& coefficients = {});

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

// Predicted time with the compiler's registers, or nothing where the compiled kernel is not a
// candidate (it failed to compile, spilled heavily, or does not fit with its real registers).
std::optional<double> predict_compiled(const Problem& p, const DeviceSpec& d, const KernelConfig& c,
                                       const CompiledInfo& info, const ModelCoefficients& k);
// A candidate's standing (model.hpp): predict_compiled's time, behind every kernel that does not
// spill if it spills; nothing where it is not a candidate.
std::optional<CompiledStanding> compiled_standing(const Problem& p, const DeviceSpec& d,
                                                  const KernelConfig& c, const CompiledInfo& info,
                                                  const ModelCoefficients& k);
// Each candidate's standing and position in `configs`, best first (equal standings keep their
// order). `compiled` holds the compiler's word on each of `configs`, in order.
std::vector<std::pair<CompiledStanding, size_t>> compiled_ranking(
    const Problem& p, const DeviceSpec& d, const std::vector<KernelConfig>& configs,
    const std::vector<CompiledInfo>& compiled, const ModelCoefficients& k);
// The positions alone.
std::vector<size_t> compiled_order(const Problem& p, const DeviceSpec& d,
                                   const std::vector<KernelConfig>& configs,
                                   const std::vector<CompiledInfo>& compiled,
                                   const ModelCoefficients& k);
// The same configurations themselves.
std::vector<KernelConfig> rank_compiled(const Problem& p, const DeviceSpec& d,
                                        const std::vector<KernelConfig>& configs,
                                        const std::vector<CompiledInfo>& compiled,
                                        const ModelCoefficients& k);
// A compiled shortlist's length for a zero-run pick that compiles before it chooses (`measure`'s
// default, `predict --compiled-shortlist`, model_accuracy --registers shortlist): the model's
// first configurations, ranked with estimated registers, ranked again by rank_compiled. 16 picked
// no better than the estimate on the GPU; 128, chosen on 12 problems recorded nowhere (seed 11,
// pick median 0.960 against 0.901), held on 16 drawn after that choice (seed 13: 0.943 against
// 0.919 of the best measured, 2% faster in geometric mean; bench/RESULTS.md).
inline constexpr int kCompiledShortlist = 128;

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
  // The vendor library's (cuBLAS's) time for the problem, timed as the configurations are, for
  // comparison; none where nothing can time it (a replay).
  virtual std::optional<Evaluation> reference(const Problem&) { return std::nullopt; }
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

// What a tuning run may spend; each limit is off at 0, and the first one reached ends the run.
struct Budget {
  int evaluations = 0;  // measurements
  double seconds = 0;   // wall time from the run's start, ranking and compiling included
  // Measurements as a share of the pruned space: 0.05 is the 5% cap the tuning benchmarks hold
  // strategies to.
  double space_share = 0;
  // The tighter of evaluations and space_share for a space of this many configurations (0: none).
  int evaluation_limit(std::size_t space_size) const;
  bool limited() const { return evaluations > 0 || seconds > 0 || space_share > 0; }
};

// A budget being spent: a clock started with the run, and the evaluation limit once the space's
// size is known. What picks the next configuration (a strategy) never decides when to stop.
class BudgetMeter {
 public:
  explicit BudgetMeter(const Budget& budget, std::size_t space_size = 0);
  // Resolves the space share once the strategy knows how large the pruned space is.
  void set_space_size(std::size_t space_size);
  double elapsed() const;
  bool timed() const { return budget_.seconds > 0; }
  bool limited() const { return budget_.limited(); }
  int evaluation_limit() const { return evaluation_limit_; }
  // Why the run must stop before another measurement ("evaluation budget", "time budget"), or ""
  // while it may go on. A time budget that compiling used up must still leave the user a kernel:
  // until one has measured correctly, up to kGraceEvaluations go on past it.
  std::string stop_reason(int evaluations, bool have_kernel) const;
  static constexpr int kGraceEvaluations = 8;
  // Whether work expected to take `seconds` more still ends within `share` of the time budget
  // (always, without one).
  bool fits(double seconds, double share) const;

 private:
  Budget budget_;
  int evaluation_limit_ = 0;
  std::chrono::steady_clock::time_point start_;
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

// What every strategy is given. The model-driven ones read all of options; the others its
// budget, domain and constraints.
struct TuneRequest {
  const Problem& problem;
  Evaluator& evaluator;
  HybridOptions options{};
  unsigned seed = 1;  // of the strategies that draw at random
  EvaluationSink sink{};
};

// A strategy found by name (tune --strategy): what picks the configurations to measure. The
// budget, in the request, decides when it stops.
struct Strategy {
  std::string_view name;
  std::string_view summary;
  bool uses_model;  // ranks with the calibrated model (so the caller loads a calibration)
  TuneResult (*tune)(const TuneRequest& request);
};
// Every strategy, the default (hybrid) first.
const std::vector<Strategy>& strategies();
// Throws InputError naming the unknown strategy and listing the known ones.
const Strategy& find_strategy(std::string_view name);

// ---------------------------------------------------------------- workloads

// One budget spent over a workload's problems, tuned one after another. Each problem gets the
// share of what is left in proportion to its expected gain (weight x the model's predicted time)
// among the problems still to tune, so what a finished problem leaves unused passes on.
class WorkloadBudget {
 public:
  // Throws InputError for a gain that is not finite and > 0, or fewer evaluations than problems
  // (each needs one).
  WorkloadBudget(const Budget& total, std::vector<double> gains);
  // Problem i's budget, given what is left now; the space share stays a per-problem cap.
  Budget share(std::size_t i) const;
  // Problem i is finished, having spent this much.
  void spend(std::size_t i, int evaluations, double seconds);
  // Time spent on the workload's own work (ranking for the gains).
  void spend_overhead(double seconds) { seconds_spent_ += seconds; }
  int evaluations_spent() const { return evaluations_spent_; }
  double seconds_spent() const { return seconds_spent_; }

 private:
  Budget total_;
  std::vector<double> gains_;
  std::vector<bool> done_;
  int evaluations_spent_ = 0;
  double seconds_spent_ = 0;
};

// What the compiler made of each configuration, shared by the problems of a workload: a kernel's
// source depends on the configuration, precision and ops only, never on the sizes.
struct CompileMemo {
  std::vector<std::pair<std::string, CompiledInfo>> known;  // sorted by key
  int compiled = 0;  // configurations the evaluators compiled
  int shared = 0;    // requests answered from the memo
};

// An evaluator that asks its inner one to compile only what the memo lacks.
class SharingEvaluator : public Evaluator {
 public:
  SharingEvaluator(Evaluator& inner, CompileMemo& memo) : inner_(inner), memo_(memo) {}
  const DeviceSpec& device() const override { return inner_.device(); }
  std::vector<CompiledInfo> compile(const Problem& problem,
                                    const std::vector<KernelConfig>& configs) override;
  std::vector<Evaluation> measure(const Problem& problem,
                                  const std::vector<KernelConfig>& configs) override {
    return inner_.measure(problem, configs);
  }
  bool can_evaluate(const KernelConfig& c) const override { return inner_.can_evaluate(c); }
  int compile_width() const override { return inner_.compile_width(); }

 private:
  Evaluator& inner_;
  CompileMemo& memo_;
};

// A deployable kernel set: which candidate kernels to ship so that a workload, each problem
// running its best member, takes the least weighted total time.
struct KernelSet {
  std::vector<std::size_t> members;  // candidate indices, in the order chosen
  std::vector<std::size_t> choice;   // per problem: the member it runs
  double total = 0;                  // sum of weight x time of the member run
};
// times[p][c]: problem p's time with candidate c (+inf: c cannot run p). Greedy: each step adds
// the candidate that lowers the total most, then swaps members for other candidates while that
// lowers it, so the total never grows with size and size = problems reaches every problem's
// best. Fewer members when more lower nothing. Throws InputError for size < 1, no problem, rows
// of unequal length, a weight that is not finite and > 0, or a problem no candidate runs.
KernelSet choose_kernel_set(const std::vector<double>& weights,
                            const std::vector<std::vector<double>>& times, int size);

// Neighbours of a configuration: one parameter moved one step in its domain (unroll also
// visits {1, 2, 4, 8}), kept only if they pass the hard constraints.
std::vector<KernelConfig> neighbours(const Problem& problem, const DeviceSpec& device,
                                     const KernelConfig& c, const SpaceDomain& domain);

}  // namespace gemmtune
