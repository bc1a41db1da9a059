// gemmtune model: resources -> occupancy -> time estimate, with every term kept so that a
// ranking can say why. Pure functions of (Problem, DeviceSpec, KernelConfig, coefficients).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/core.hpp"

namespace gemmtune {

// ---------------------------------------------------------------- occupancy

enum class OccupancyLimit : std::uint8_t { Warps, Registers, SharedMemory, Blocks, None };
const char* to_string(OccupancyLimit limit);

struct Occupancy {
  int blocks_per_sm = 0;  // 0: the block cannot run at all on this device
  int warps_per_sm = 0;
  double fraction = 0;  // active warps / maximum warps per SM
  OccupancyLimit limit = OccupancyLimit::None;
  int limit_by_warps = 0, limit_by_regs = 0, limit_by_smem = 0, limit_by_blocks = 0;
  int allocated_regs_per_block = 0;
  std::int64_t allocated_smem_per_block = 0;  // includes the per-block reservation
};

// CUDA's own calculator (cuda_occupancy.h) fed from DeviceSpec. smem_bytes is the kernel's
// dynamic shared memory; the opt-in limit applies, as the runner raises it for large tiles.
// Throws InputError when the device or the kernel is outside the calculator's inputs.
Occupancy occupancy(const DeviceSpec& device, int threads_per_block, int regs_per_thread,
                    std::int64_t smem_bytes);

// ---------------------------------------------------------------- resources

// Shared memory the template allocates for one configuration: exact.
std::int64_t shared_bytes(const KernelConfig& c, Precision p);

// Shared-memory wavefronts one warp instruction needs (1 = conflict-free), from the addresses
// of the first warp: compute-loop reads of A and B, and the stores that fill the tiles.
struct BankProfile {
  // Wavefronts of one warp-wide shared read or store instruction (store_a/b: of the fill).
  double read_a = 1, read_b = 1, store_a = 1, store_b = 1;
  // Fill store instructions per element of A and of B: 1 (the FP32 and FP64 kinds' count, as
  // calibrated), or 1/VEC where a store counts a lane's whole vector (H, B, T).
  double stores_per_element_a = 1, stores_per_element_b = 1;
  int fragment_vector_a = 1, fragment_vector_b = 1;  // mma_fragment_vector of A and B
};
BankProfile bank_profile(const KernelConfig& c, Precision p, Op op_a, Op op_b);

// Elements per shared read of an mma fragment of A (or B): 2 where a lane's k values are
// contiguous and 16-byte aligned (m16n8k8/k16 on an M-major A or N-major B tile of D), else 1;
// H, B, T: mma_k / 4 (a lane's k, as words), or 16 bytes where ldmatrix reads them
// (fragments_by_ldmatrix).
int mma_fragment_vector(const KernelConfig& c, Precision p, bool of_a);

// A family's own terms (model/family_terms.cpp): the pipe its warp tile runs on, in FMAs per
// clock per SM, and per thread and unit of k its math and shared fragment-read instructions.
struct WarpTileTerms {
  int fmas_per_clock = 0;
  double math_instr = 0;
  double fragment_instr = 0;
};
// Throws std::logic_error for a family without terms.
WarpTileTerms warp_tile_terms(const KernelConfig& c, Precision p, const DeviceSpec& d,
                              const BankProfile& bank);
bool has_warp_tile_terms(KernelFamily family);
// A main loop's own terms: shared stores it issues per element of a tile it loads, and the K
// steps of work that hide a step's global loads.
struct MainLoopTerms {
  double staging_stores_per_element = 0;
  double steps_hiding_loads = 0;
};
MainLoopTerms main_loop_terms(const KernelConfig& c);

// Shared-memory wavefronts one warp issues in one K step: compute-loop reads plus tile stores.
double warp_smem_wavefronts_per_step(const KernelConfig& c, const BankProfile& bank);

// Registers per thread before compiling: a linear model of the live values of the template,
// fitted by least squares on compiled samples (fit_register_model).
struct RegisterModel {
  // base, accumulators, operand fragments, prefetch buffers, load staging, per-stage address
  std::array<double, 6> coef{};
  double stated_error = 0;  // the estimate is within this many registers on the fit samples
};
// The fitted estimator for a precision's kernels: one for S, D, C, Z, one for H, B, T (whose
// fragments are packed words and whose accumulators are FP32 whatever the inputs).
const RegisterModel& default_register_model(Precision p);
std::array<double, 6> register_features(const KernelConfig& c, Precision p);
// The linear model's value before rounding and clamping: it may exceed the cap (a likely spill).
double raw_register_estimate(const KernelConfig& c, Precision p, const RegisterModel& model);
int estimate_registers(const KernelConfig& c, Precision p, const RegisterModel& model);
// Registers per thread ptxas may use under __launch_bounds__(threads).
int register_cap(int threads);

struct RegisterSample {
  KernelConfig config;
  Precision precision = Precision::S;
  Op op_a = Op::N, op_b = Op::N;
  int registers = 0;     // as ptxas reported
  bool spilled = false;  // then `registers` is the cap it hit, not the kernel's demand
};
// Least squares (Eigen) over compiled samples; stated_error is the largest residual seen.
RegisterModel fit_register_model(const std::vector<RegisterSample>& samples);

// ---------------------------------------------------------------- time

// What the analytical terms miss and measurements show (the ILP of small thread tiles, how a
// layout or pipeline depth really behaves on one GPU): log(measured / predicted) as a linear
// function of named features of the configuration and of the prediction's own terms. The
// calibration fits it (weighted ridge regression, Eigen) after the coefficients; all zero, the
// default, leaves the analytical model as it is.
constexpr int kCorrectionFeatureCount = 37;
struct LogTimeCorrection {
  double offset = 0;                                   // keeps the absolute scale
  double offset_fp64 = 0;                              // added for D and Z
  std::array<double, kCorrectionFeatureCount> all{};   // every precision
  std::array<double, kCorrectionFeatureCount> fp64{};  // added to `all` for D and Z
  // Added for tensor-core kernels (MM > 0): their level against the SIMT kernels of the same
  // problem, and their own weights. Fitted in one group with the SIMT kernels' weights, the
  // tensor-core sweeps pulled FP64 SIMT rankings below the uncalibrated model's.
  double tensor_core_level = 0;
  std::array<double, kCorrectionFeatureCount> tensor_core{};
  // Added in proportion to short_loop_gate(problem): with a few K steps the prologue and the C
  // store dominate and the features act otherwise (a larger thread tile costs more than it
  // saves); without them, held-out skinny-K rankings fell below the uncalibrated model's.
  std::array<double, kCorrectionFeatureCount> short_loop{};
  double short_loop_level = 0;  // times the gate, like the weights: the level's slope in it
  bool empty() const;
  bool operator==(const LogTimeCorrection&) const = default;
};

// The smallest box holding a group of feature rows: per feature, the least and the greatest value
// (NaN, once a row's value is NaN).
struct FeatureBox {
  std::vector<float> lo, hi;
  void clear() { lo.clear(), hi.clear(); }
  void include(const std::vector<float>& row);
};

// A tree ensemble fitted by XGBoost on log(measured / predicted), over learned_feature_names():
// added to the log time after the linear correction. Evaluated here from XGBoost's JSON model
// (kept in `json`, so a calibration file round-trips), without XGBoost at run time.
class TreeEnsemble {
 public:
  TreeEnsemble();
  ~TreeEnsemble();
  TreeEnsemble(const TreeEnsemble&);
  TreeEnsemble& operator=(const TreeEnsemble&);
  // Throws InputError for a text that is not an XGBoost JSON model of these features.
  static TreeEnsemble from_xgboost_json(const std::string& text);
  // XGBoost's JSON model without the per-tree arrays evaluation never reads (gains, hessians,
  // parents, base weights, categories): less than half the text, read in less than half the time.
  static std::string compact_xgboost_json(const std::string& text);
  bool empty() const { return !trees_; }
  double evaluate(const std::vector<float>& features) const;  // 0 when empty
  // For each tree t, the least the trees from t on can add to a row whose leading features are
  // `leading` (the problem's, say), and one more entry, 0, after the last tree.
  std::vector<double> least_tails(const std::vector<float>& leading) const;
  // evaluate(), except that once the sum is certain to exceed `above` (least_tails of the row's
  // leading features bound the trees not yet walked) it stops and returns a bound above `above`.
  double evaluate_unless_above(const std::vector<float>& features, const std::vector<double>& tails,
                               double above) const;
  // The least evaluate() of any row inside the box: per tree, the least leaf a row of the box can
  // reach. 0 when empty.
  double least_within(const FeatureBox& box) const;
  std::size_t tree_count() const;
  bool operator==(const TreeEnsemble& o) const { return json == o.json; }
  std::string json;  // "" when empty

 private:
  struct Trees;
  std::shared_ptr<const Trees> trees_;
};

// Coefficients the calibration fits; defaults are first-principles guesses for any NVIDIA GPU.
// A kernel measured among the fastest of a recorded problem (proven_kernels). The zero-run
// ranking that compiles its shortlist weighs a problem's proven kernels of its precision beside
// the space's first (search's with_proven): the recordings' winners hold values and pairings the
// estimate ranks deep or the domain leaves to refinement.
struct ProvenKernel {
  Precision precision = Precision::S;
  KernelConfig config;
  bool operator==(const ProvenKernel&) const = default;
};

struct ModelCoefficients {
  double fma_efficiency = 0.92;          // of the FMA pipe peak, when the pipe is the limit
  double smem_efficiency = 0.90;         // of shared-memory wavefront throughput
  double issue_efficiency = 0.95;        // of one warp instruction per clock per sub-partition
  double instr_per_global_load = 3;      // load, address and predicate per global load
  double loop_instr_per_step = 3;        // counter, compare, branch per un-unrolled K step
  double dram_efficiency = 0.85;         // of theoretical DRAM bandwidth
  double l2_bytes_per_clock_sm = 48;     // sustained L2 -> SM bytes per clock per SM
  double mem_latency_cycles = 700;       // global load latency an iteration must cover
  double sync_cycles = 40;               // one __syncthreads with its drain
  double warps_to_saturate = 8;          // warps per SM below which issue falls off linearly
  double launch_us = 3.0;                // launch and tail
  double epilogue_cycles_per_elem = 2;   // per C element and thread, store and scale
  double store_bytes_per_clock_sm = 16;  // L1 -> L2 sector traffic of the C stores (and loads)
  LogTimeCorrection correction;          // fitted on measurements; not one of the 13 below
  TreeEnsemble learned;                  // fitted after the correction, on what it leaves
  // The FP16, BF16 and TF32 problems' own trees, fitted on every precision's samples, with
  // `learned` then on the S, D, C and Z samples alone (LearnedCorrectionOptions::by_family).
  // Empty: `learned` ranks every precision.
  TreeEnsemble learned_reduced;
  // Kernels proven fast on the measurements the calibration was fitted on.
  std::vector<ProvenKernel> proven;
  // The trees that correct a problem of this precision.
  const TreeEnsemble& trees_for(Precision p) const {
    return is_reduced(p) && !learned_reduced.empty() ? learned_reduced : learned;
  }
  bool operator==(const ModelCoefficients&) const = default;
};

// The scalar coefficients as a vector, in the order of coefficient_names(), with the bounds the
// calibration keeps them in (physically meaningful, so a fit cannot run away). from_array leaves
// the correction empty.
constexpr int kCoefficientCount = 13;
const std::array<const char*, kCoefficientCount>& coefficient_names();
std::array<double, kCoefficientCount> to_array(const ModelCoefficients& k);
ModelCoefficients from_array(const std::array<double, kCoefficientCount>& v);
std::array<double, kCoefficientCount> coefficient_lower_bounds();
std::array<double, kCoefficientCount> coefficient_upper_bounds();

// The version of the model's terms and correction features a calibration is fitted for: raise it
// whenever a change makes calibrations fitted before it rank wrongly. Every calibration JSON
// records it as "model_version"; one without it was written before versions were recorded.
constexpr int kModelVersion = 2;
// What a calibration without "model_version" and with an unknown correction feature counts as.
constexpr int kUnversionedModelVersion = 1;

// Writes "model_version": kModelVersion with the coefficients.
std::string coefficients_to_json(const ModelCoefficients& k);
// Throws InputError naming a missing, unknown or out-of-bounds coefficient. A calibration of
// another model version, or one without a version whose correction names an unknown feature, is
// refused with a message naming both versions, as "<origin> was fitted for model version 1, this
// gemmtune's model is version 2".
ModelCoefficients coefficients_from_json(const std::string& text,
                                         const std::string& origin = "the calibration");
// The same, read from a file (`gemmtune calibrate -o`), the path as origin; throws InputError
// naming an unreadable path.
ModelCoefficients coefficients_from_file(const std::string& path);

// The calibration shipped in the binary (calibrations/<spec name>.json, embedded at build time)
// for a device named by its built-in spec name ("H100-SXM", or an alias find_builtin_device
// takes) or by the name the CUDA driver reports for it ("NVIDIA H100 80GB HBM3"); nullopt for a
// device without one.
struct ShippedCalibration {
  std::string spec_name;  // the built-in spec it was recorded on
  std::string json;
};
std::optional<ShippedCalibration> shipped_calibration(std::string_view device_name);
// The built-in spec names that have a shipped calibration, sorted.
std::vector<std::string> shipped_calibration_names();

// 32-byte sectors one warp's store of 32 elements of C touches, from the thread layout (DIM_X
// threads along M, VEC_S consecutive rows each, stored one at a time or with VC1 at once): 4
// when a warp writes 128 contiguous bytes of FP32.
double c_store_sectors_per_warp(const KernelConfig& c, const Problem& p);

enum class TimeLimit : std::uint8_t {
  Compute,
  SharedMemory,
  Issue,
  L2,
  Dram,
  Latency,
  Store,
  Launch
};
const char* to_string(TimeLimit limit);

struct Prediction {
  double time_s = 0;
  double gflops = 0;
  Occupancy occ;
  int registers = 0;  // per thread, estimated or from the compiler
  bool registers_from_compiler = false;
  std::int64_t smem_bytes = 0;
  // Terms, seconds. time_s = max(sm_time, dram, l2) + split pass + launch; sm_time includes
  // compute or shared (whichever binds), exposed latency and the wave tail.
  double t_compute = 0, t_smem = 0, t_issue = 0, t_l2 = 0, t_dram = 0, t_latency = 0, t_launch = 0;
  double t_store = 0;  // C stores (and loads with beta != 0) at the sector rate, not overlapped
  double t_split_pass = 0;     // split-K: the pass that scales C by beta before the atomic sums
  std::int64_t tiles = 0;      // blocks launched: tiles of C x batch x split-K factor
  double wave_efficiency = 0;  // tiles / (blocks of the busiest SM x SMs)
  double fma_count = 0;  // real FMA instructions executed (per thread lane), padded tiles included
  int fmas_per_tensor_instr = 0;  // FMAs of one warp-wide mma (0: SIMT kernel)
  double dram_bytes = 0, l2_bytes = 0, smem_wavefronts = 0;
  TimeLimit limit = TimeLimit::Compute;
  double correction = 1;    // factor the calibrated correction applied to the terms' time
  std::string why() const;  // one line: the limiting term and the numbers behind it
};

// Both corrections are bounded: beyond a factor of e^2 (7.4) on a configuration unlike its
// training data a fit is more likely wrong than the terms it corrects.
inline constexpr double kCorrectionLogBound = 2.0;
// Whether a precision's kernels are in the fit of the analytical coefficients and the linear
// correction, and whether the linear correction applies to them. The FP16, BF16 and TF32 kernels'
// terms are still several times off: fitted together, their samples pulled the FP32 and FP64
// coefficients to their bounds. Those kernels run on the coefficients fitted without them and on
// the learned trees, which every precision's samples fit.
inline bool linear_correction_applies(Precision p) {
  return !is_reduced(p);
}

// The learned part of predict(): multiplies the prediction (made with everything else) by the
// trees' bounded factor.
void apply_learned_correction(const Problem& problem, const KernelConfig& config,
                              const TreeEnsemble& trees, Prediction& prediction);
// What a ranking of one problem's configurations computes once for the learned correction.
struct LearnedBounds {
  std::vector<float> leading;  // learned_problem_features
  std::vector<double> tails;   // the trees' least_tails for them
};
LearnedBounds learned_bounds(const TreeEnsemble& trees, const Problem& problem);
// apply_learned_correction() to a row of learned_features() computed from the uncorrected
// prediction, unless the corrected time is certain to exceed ceiling_s: then returns false as
// soon as that is known, without walking the remaining trees, and leaves the prediction as it was.
// `least_sum`, a bound already known on the trees' sum for this row (a group's), is checked
// before any tree is walked.
bool apply_learned_correction_unless_above(
    const Problem& problem, const std::vector<float>& features, const TreeEnsemble& trees,
    const LearnedBounds& bounds, double ceiling_s, Prediction& prediction,
    double least_sum = -std::numeric_limits<double>::infinity());

// regs_from_compiler < 0: use the estimate. Throws InputError if the block cannot run.
Prediction predict(const Problem& problem, const DeviceSpec& device, const KernelConfig& config,
                   const ModelCoefficients& coefficients = {}, int regs_from_compiler = -1);

// Where a compiled kernel stands in a ranking that knows what the compiler made of it: one that
// spills to local memory follows every one that does not, then the faster predicted first. The
// model has no local-memory term; over the 247 recorded problems of both GPUs (every precision)
// a kernel without spills ran within 1% of the best on 246, the other within 9.3%, while picks
// that spilled were the worst zero-run picks on problems recorded nowhere.
struct CompiledStanding {
  bool spills = false;
  double time_s = 0;
  // A kernel with spill_bytes of spill stores per thread, predicted at time_s.
  static CompiledStanding of(int spill_bytes, double time_s) { return {spill_bytes > 0, time_s}; }
  auto operator<=>(const CompiledStanding&) const = default;
};

// ---------------------------------------------------------------- calibration

// The correction's features, named, and their values for one prediction made without it.
const std::array<const char*, kCorrectionFeatureCount>& correction_feature_names();
// How far a problem's K loop is from amortizing its prologue and C store: 1 for K <= 16, falling
// as 16 / K. It scales the correction's short-loop weights.
double short_loop_gate(const Problem& p);
std::array<double, kCorrectionFeatureCount> correction_features(const KernelConfig& c,
                                                                const Prediction& uncorrected);

// The learned correction's features: the problem's, the configuration's parameters (its CSV
// columns) and the uncorrected prediction's terms. Fills `out` (reused, so the hot loop does not
// allocate).
const std::vector<std::string>& learned_feature_names();
void learned_features(const Problem& p, const KernelConfig& c, const Prediction& uncorrected,
                      std::vector<float>& out);
// The leading features alone: those of the problem, the same for every configuration.
void learned_problem_features(const Problem& p, std::vector<float>& out);
// learned_features() after the leading ones, `leading`, computed once for the problem.
void learned_features(const std::vector<float>& leading, const Problem& p, const KernelConfig& c,
                      const Prediction& uncorrected, std::vector<float>& out);

// One measured configuration: what the calibration fits and the quality report ranks.
struct CalibrationSample {
  Problem problem;
  KernelConfig config;
  int registers = -1;  // the compiler's count; -1: use the estimate
  double time_s = 0;   // measured median
  // The spec of the GPU it was measured on, so that recordings of several GPUs fit together;
  // null: the device the fit or the ranking is given.
  std::shared_ptr<const DeviceSpec> device;
  // Drawn from the domain (a recorder's sample step: the uncalibrated model's top and uniform
  // draws), not found by a tune's search, whose neighbourhood is dense with near-ties.
  bool drawn = false;
  int spill_bytes = 0;  // the compiler's spill stores per thread, where known
};
// The spec a sample is predicted on: its own, else `given`.
inline const DeviceSpec& sample_device(const CalibrationSample& s, const DeviceSpec& given) {
  return s.device ? *s.device : given;
}

// The prediction a fit compares with a sample's measurement: none for a sample without a time
// or one the device cannot run by the model's resources (it says nothing about the others).
std::optional<Prediction> predict_measured(const DeviceSpec& device, const CalibrationSample& s,
                                           const ModelCoefficients& coefficients);

struct CalibrationOptions {
  int max_evaluations = 3000;  // of the loss, by the optimizer
  double max_seconds = 50;
  bool fit_correction = true;  // the LogTimeCorrection after the coefficients
  bool fit_learned = true;     // then the tree ensemble, on what the correction leaves
  // Below either (counting S, D, C and Z samples), the start's correction and trees are kept and
  // the coefficients are fitted under them.
  int min_correction_samples = 500;
  int min_correction_problems = 3;
};

// Cross-validation's fit of one fold: the coefficients alone (the correction is fitted after
// them), stopped by a count of evaluations rather than by the clock, so that a fold's figures
// do not depend on how busy the machine was (a 50 s limit gave shortlist top-10 78% on one run
// and 83% on another of the same code).
inline CalibrationOptions fold_fit_options() {
  CalibrationOptions o;
  o.fit_correction = false;
  o.max_evaluations = 600;
  o.max_seconds = 3600;
  return o;
}

struct CalibrationResult {
  ModelCoefficients coefficients;
  // Mean over problems of var(log(predicted / measured)) + mean(log(...))^2 / 4.
  // loss_coefficients: after the coefficients, before the correction.
  double loss_before = 0, loss_coefficients = 0, loss_after = 0;
  int evaluations = 0;
  double seconds = 0;
  // The optimizer stopped at max_seconds, not at max_evaluations or convergence: the fit then
  // depends on how fast the machine ran, and a rerun on the same data can differ.
  bool stopped_by_clock = false;
  // samples: every measured one (the trees'); correction_samples and problems: those the
  // coefficients and the linear correction rest on (linear_correction_applies).
  std::size_t samples = 0, correction_samples = 0, problems = 0;
  bool correction_refitted = false;  // else the start's correction was kept
};

// Fits the coefficients to the samples with NLopt (BOBYQA, bounded by
// coefficient_lower_bounds/upper_bounds, on the log-time loss above: mostly the spread within
// each problem, which decides rankings, a little the absolute scale), starting from start, then
// the correction on what they leave (fit_log_time_correction) when the options' minimum data is
// there; with less, the coefficients are fitted under start's correction, which is kept. The
// coefficients and the linear correction are fitted on the samples linear_correction_applies to,
// the trees on all. Throws InputError when there is nothing to fit (no sample with a positive
// time, or none of an S, D, C or Z kernel).
CalibrationResult calibrate(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                            const ModelCoefficients& start = {},
                            const CalibrationOptions& options = {});

// Each recorded problem's configurations measured within kProvenWithin of its fastest, at most
// kProvenPerProblem of them (fastest first), once per precision and configuration, in the order
// of the problems' keys, then those of `also` not repeated; sorted by precision (as a calibration
// file reads them back). What `calibrate` keeps as the calibration's proven kernels, `also` its
// start's.
constexpr double kProvenWithin = 0.03;
constexpr int kProvenPerProblem = 8;
std::vector<ProvenKernel> proven_kernels(const std::vector<CalibrationSample>& samples,
                                         const std::vector<ProvenKernel>& also = {});

// Cross-validation's fit of one fold: the coefficients (fold_fit_options), then the correction
// on what they leave.
ModelCoefficients fit_fold(const DeviceSpec& device, const std::vector<CalibrationSample>& train);

// The correction that best explains log(measured / predicted by `base` without its
// correction) within each problem: ridge regression on the features centred per problem, each
// problem weighing the same and, inside one, configurations near its best weighing most (they
// decide what tuning picks). Throws InputError when no problem has 2 usable samples.
LogTimeCorrection fit_log_time_correction(const DeviceSpec& device,
                                          const std::vector<CalibrationSample>& samples,
                                          const ModelCoefficients& base);

struct LearnedCorrectionOptions {
  int rounds = 150;
  int max_depth = 6;
  double learning_rate = 0.15;
  // Weight of a configuration at its problem's best against one far behind it (1), and how fast
  // it falls with log(time / best); each problem's weights sum alike.
  double fast_weight = 100, fast_scale = 0.05;
  // Row and feature sampling per tree, and the least weight a leaf may hold (XGBoost's
  // subsample, colsample_bytree, min_child_weight): regularization against the few problems.
  double subsample = 1, colsample = 1, min_child_weight = 1;
  // Trees grown per round on their own row and feature samples and averaged (XGBoost's
  // num_parallel_tree), to steady the pick among near-ties; held out, 4 ranked no better than 1.
  int parallel_trees = 1;
  // Weight of a pairwise ranking loss beside the regression (0: regression only; 1 ranked
  // held-out problems best of 0, 1, 5 and 20): inside each problem, pairs drawn at random
  // (rank_pairs per configuration, each round) cost log(1 + exp((L_fast - L_slow) / rank_sigma))
  // on their corrected log times L. Each pair weighs rank_spread of its problem's mean
  // regression weight plus (1 - rank_spread) of the faster row's fast-end weight: at 0 the fast
  // end is ordered, not only fitted; at 1 the whole recording is. rank 3 with rank_spread 1
  // ranked held-out problems' whole recordings better (Spearman +0.02 to +0.03) but picked no
  // better, and worse on problems in no fit: off by default.
  double rank_weight = 1, rank_sigma = 0.1, rank_spread = 0;
  // Share of each row's pairs drawn among its single steps (configurations of its problem that
  // differ from it in one tuning parameter) instead of the whole problem: such pairs show one
  // parameter's effect with the rest held, the steps a tune's refinement takes.
  double rank_step = 0;
  // Fraction of each problem's weighted mean label taken off its labels before the fit: at 1 the
  // trees learn only how a problem's configurations differ from one another (the linear
  // correction keeps the problem's level). Held out by problem it picked worse (pick median
  // 0.935-0.943 against 0.951-0.955 on most folds), and the neighbours' kernels for a shape
  // between tuned ones compare worse on its absolute times: off by default.
  double center = 0;
  int rank_pairs = 16;
  // Features the trees may not split on (names of learned_feature_names()).
  std::vector<std::string> excluded_features;
  // fit_learned_trees: the S, D, C and Z problems' trees fitted without the FP16, BF16 and TF32
  // samples, which keep trees of their own. Held out by problem it ranked a little better (pick
  // median 0.949 -> 0.954 over 186 problems), but the H200 calibration fitted so picked worse on
  // 15 problems recorded nowhere (median 0.947 -> 0.916 of a 60 s tune; bench/RESULTS.md): off.
  bool by_family = false;
  // Weight of the samples measured on the GPU the fit is for, against every other GPU's (1: each
  // problem alike wherever it was measured). Held out on the H200's 48 problems, 3 and 10 picked
  // worse than 1 (pick median 0.953 -> 0.942, 0.932; bench/RESULTS.md): 1.
  double own_device_weight = 1;
};
// XGBoost regression trees on log(measured / predicted by base without its learned part), in
// the compact form that calibrations keep. Throws InputError with fewer than 2 problems.
TreeEnsemble fit_learned_correction(const DeviceSpec& device,
                                    const std::vector<CalibrationSample>& samples,
                                    const ModelCoefficients& base,
                                    const LearnedCorrectionOptions& options = {});
// Replaces k's trees with ones fitted on what k without them leaves: with options.by_family and 2
// or more problems both of FP16, BF16 or TF32 and of the other precisions, learned_reduced on all
// the samples and learned on those of S, D, C and Z; otherwise learned on all and learned_reduced
// empty. Throws InputError with fewer than 2 problems.
void fit_learned_trees(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                       ModelCoefficients& k, const LearnedCorrectionOptions& options = {});
// The same fit as XGBoost's whole JSON model (which XGBoost itself can load).
std::string fit_learned_model_json(const DeviceSpec& device,
                                   const std::vector<CalibrationSample>& samples,
                                   const ModelCoefficients& base,
                                   const LearnedCorrectionOptions& options = {});

// How well the model ranks the measured configurations of one problem.
struct RankQuality {
  std::string problem;  // shape id
  std::size_t samples = 0;
  double spearman = 0, kendall = 0;
  // The same over the configurations drawn from the domain (CalibrationSample::drawn), where a
  // problem holds at least kMinDrawnForRank of them; how the model ranks the domain as a whole.
  std::optional<double> drawn_spearman, drawn_kendall;
  // Whether the model's top 1 / 5 / 10 holds a configuration within 3% of the best measured.
  bool top1 = false, top5 = false, top10 = false;
  // The same for the first 10 of the shortlist tune measures first (shortlist_order).
  bool shortlist10 = false;
  double regret = 0;  // measured time of the model's top-1 / best measured (>= 1)
  // TenSet's peak scores: best measured / measured time of the model's top-1 (1 / regret), and
  // best measured / fastest measured of the model's top 5; in (0, 1], 1 when the pick is best.
  double pick_fraction = 0, top5_fraction = 0;
  // The same over the first 5 of the shortlist (what `tune --evaluations 5` measures).
  double short5_fraction = 0;
};
struct QualityReport {
  std::vector<RankQuality> problems;  // in the order problems first appear in the samples
  double median_spearman = 0, median_kendall = 0, median_regret = 0;
  // Over the problems with a drawn_spearman (drawn_problems of them).
  double median_drawn_spearman = 0, median_drawn_kendall = 0;
  std::size_t drawn_problems = 0;
  double top1_rate = 0, top5_rate = 0, top10_rate = 0;  // fraction of problems
  double shortlist10_rate = 0;
  // Over problems; p10 is the 10th percentile (linear between the two nearest ranks), the
  // figure a user meets on one problem in ten.
  double median_pick_fraction = 0, p10_pick_fraction = 0;
  double median_top5_fraction = 0, p10_top5_fraction = 0;
  double median_short5_fraction = 0, p10_short5_fraction = 0;
};
// The fewest drawn configurations a problem needs for RankQuality's drawn correlations.
inline constexpr std::size_t kMinDrawnForRank = 20;
// The order in which tune measures a ranked list: the best-predicted configuration of each tile
// family (BM, BN, BK, DX, DY) first, in predicted order, then the others in predicted order.
// The model's errors are alike within a family, so one miss does not fill the shortlist.
// `configs` must already be sorted by predicted time; returns indices into it.
std::vector<std::size_t> shortlist_order(const std::vector<const KernelConfig*>& configs);
// Fills the medians and rates from report.problems (after merging folds, for instance).
void summarize(QualityReport& report);
// The class a problem belongs to for held-out reporting, such as "s-square", "d-skinny-k",
// "s-rectangular" (the LU shapes), "s-odd", "s-transposed".
std::string problem_class(const Problem& p);
// Problems with fewer than 3 samples are left out (no ranking to speak of). Each problem is
// one problem_key: a shape recorded with two leading dimensions is two rankings.
// compiled_shortlist > 0 ranks as a zero-run pick that compiles before it chooses: every
// configuration by its estimated registers, then the first compiled_shortlist of them again by
// their CompiledStanding (each sample's `registers` and `spill_bytes`); the correlations stay the
// estimate's.
QualityReport rank_quality(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                           const ModelCoefficients& coefficients, int compiled_shortlist = 0);

// The q-quantile (0 <= q <= 1) of values, linear between the two nearest ranks (NumPy's
// default); 0 for none.
double quantile(std::vector<double> values, double q);

// The full identity of a problem for holding it out: its shape id, then the leading dimensions
// where they are not packed and beta where it is not zero, so a packed beta = 0 problem's key is
// its shape id.
std::string problem_key(const Problem& p);
// "SPEC:" for a sample with its own spec, else "": what tells apart one shape's samples from two
// GPUs wherever samples are grouped by problem.
std::string sample_gpu_prefix(const CalibrationSample& s);
// A sample's ranking: its problem_key after sample_gpu_prefix, so that one shape recorded on two
// GPUs is two rankings.
std::string sample_key(const CalibrationSample& s);

// Each problem of the samples (by problem_key) to a fold in [0, k): the sorted keys shuffled
// with std::mt19937(seed), the i-th to fold i mod k, so the assignment depends on the set of
// problems and the seed only, not on the order of the rows. Throws InputError naming k when it
// is below 2 or above the number of problems.
std::map<std::string, int> k_fold_problems(const std::vector<CalibrationSample>& samples, int k,
                                           std::uint32_t seed);

// One fold of a cross-validation by problem: its problems ranked by the uncalibrated model and
// by the coefficients fitted on the other folds.
struct FoldQuality {
  int fold = 0;
  std::size_t train_samples = 0, held_samples = 0;
  double fit_seconds = 0;
  QualityReport uncalibrated, calibrated;
};
struct ProblemCrossValidation {
  std::vector<FoldQuality> folds;
  QualityReport uncalibrated, calibrated;  // pooled over the held-out problems of every fold
};
// How a fold's coefficients are fitted on its training samples: fit_fold, or another to compare.
using FoldFit = ModelCoefficients (*)(const DeviceSpec&, const std::vector<CalibrationSample>&);
// Fits on every fold of `folds` (k_fold_problems) but `fold` and ranks the fold's problems.
// compiled_shortlist: as rank_quality's.
FoldQuality evaluate_fold(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                          const std::map<std::string, int>& folds, int fold, FoldFit fit = fit_fold,
                          int compiled_shortlist = 0);
// The folds' problems together, summarized.
ProblemCrossValidation pool_folds(std::vector<FoldQuality> folds);
// k-fold cross-validation over problems: k_fold_problems, then evaluate_fold for each fold.
ProblemCrossValidation cross_validate_problems(const DeviceSpec& device,
                                               const std::vector<CalibrationSample>& samples, int k,
                                               std::uint32_t seed, FoldFit fit = fit_fold);

}  // namespace gemmtune
