// gemmtune app: the command's jobs as library calls, shared by the CLI and the Python module.
// Each takes the command's options as a request and returns a result; callers only format it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::app {

// The problem options of every subcommand (--precision, --opa, ... --beta).
struct ProblemOptions {
  std::string precision = "s", op_a = "n", op_b = "n";
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, batch = 1;
  double alpha = 1.0, beta = 0.0;
  Problem problem() const;  // validated; throws InputError
};

// A built-in spec name, "local" for the GPU of this machine, or a path to a JSON spec.
DeviceSpec device_named(const std::string& gpu);

// The calibration to rank with (choose_calibration: "auto", "none" or a JSON file) for the store
// at db_path, which is opened only when it exists. A refused calibration in auto mode, or a store
// that cannot be read, is reported on stderr.
ChosenCalibration calibration_for(const std::string& db_path, const std::string& device_name,
                                  const std::string& source);

// Where measurements come from: a recording (replay) or the local GPU.
struct EvaluatorOptions {
  std::string replay;            // CSV of recorded attempts
  double replay_delay = 0;       // seconds each replayed measurement takes
  std::string gpu = "H100-SXM";  // the spec a replay is interpreted on
  int repetitions = 20;
  double timeout = 60;
  bool counters = false, energy = false;
};
// A replay answers only for the recorded attempts of p; throws InputError without a GPU.
std::unique_ptr<Evaluator> make_evaluator(const EvaluatorOptions& o, const Problem& p);

// ---------------------------------------------------------------- predict
struct PredictRequest {
  ProblemOptions problem;
  std::string gpu = "H100-SXM";
  int top = 10;
  std::string domain = "full";
  std::string db = Database::default_path(), calibration = "auto";
  bool shortlist = false;  // in the order tune measures: one configuration per tile family first
  // Predict these configuration ids, in this order, instead of ranking the space (each checked
  // against the hard constraints).
  std::vector<std::string> configs;
  // The model's first N compiled (NVRTC, no GPU) and ranked again with the compiler's registers;
  // 0: the estimate's order.
  int compiled_shortlist = 0;
  std::string cache = CompileCache::default_directory();  // cubins ("" none)
};
struct PredictResult {
  Problem problem;
  DeviceSpec device;
  ChosenCalibration calibration;
  bool calibrated = false;
  Ranking ranking;
  int compiled = 0;   // the space's configurations compiled (compiled_shortlist)
  int proven = 0;     // the calibration's proven kernels compiled beside them (with_proven)
  int ruled_out = 0;  // of those, failed to compile or spilled heavily: left out of the list
};
// Throws InputError when no configuration survives the constraints.
PredictResult predict(const PredictRequest& request);

// Ranked configurations compiled for the device's architecture (on every core, through the
// cache) and ordered again by rank_compiled; those it rules out follow in their old order.
struct CompiledCandidate {
  KernelConfig config;
  CompiledInfo info;
  bool ruled_out = false;
};
std::vector<CompiledCandidate> rank_with_compiler(const Problem& p, const DeviceSpec& d,
                                                  const std::vector<KernelConfig>& ranked,
                                                  const ModelCoefficients& k, BatchKind kind,
                                                  const CompileCache& cache);
// One ranked configuration as `predict --format json` lists it.
nlohmann::json to_json(const Ranked& r, int rank);
nlohmann::json to_json(const PredictResult& r);

// ---------------------------------------------------------------- space
struct SpaceRequest {
  ProblemOptions problem;
  std::string gpu = "H100-SXM";
  std::vector<std::string> disable;  // stage names
  std::string domain = "full";
  bool list = false;             // gather the surviving configurations too
  std::vector<std::string> why;  // configuration ids: where each leaves the space, if it does
};
// Where one configuration stands in the funnel: outside the domain (the first parameter whose
// value the domain does not enumerate), pruned by a stage (hard ones with their message), or kept.
struct SpacePlace {
  KernelConfig config;
  std::string stage;  // "domain", a stage name, or empty when the space keeps it
  bool hard = false;
  std::string reason;
};
struct SpaceResult {
  Problem problem;
  DeviceSpec device;
  Funnel funnel;
  std::vector<KernelConfig> configs;  // with list only
  std::vector<SpacePlace> places;     // one per requested why, in order
};
SpaceResult space(const SpaceRequest& request);
nlohmann::json to_json(const SpaceResult& r);

// ---------------------------------------------------------------- source, devices
struct SourceRequest {
  std::string config;
  ProblemOptions problem;  // sizes 0: a square 1024 problem for the checks
  std::string gpu = "H100-SXM";
  bool check = true;                   // refuse a configuration that breaks a hard constraint
  std::string batch_kind = "strided";  // the source's batch mode (parse_batch_kind)
};
std::string source(const SourceRequest& request);

// The built-in specs, each as `devices --json` prints it, with peak_gflops per precision
// ({"s": ..., "d": ..., "c": ..., "z": ...}).
nlohmann::json devices();

// The counters stored with an attempt of `config` (a JSON object of metric values, as profile
// and tune --counters store them) beside the model's figures for it (profile's comparison):
// rows of quantity, metrics, counter (null when the counters lack it) and model. The model
// predicts with the compiler's registers when registers > 0, ranked as predict would.
nlohmann::json counters_beside_model(const Problem& problem, const std::string& gpu,
                                     const std::string& config, const nlohmann::json& counters,
                                     int registers, const std::string& db,
                                     const std::string& calibration);

// ---------------------------------------------------------------- the store as rows
// Every attempt of the store (of one device, of one problem, when given), oldest first: the
// columns of `export --format json` plus the problem's own (precision, op_a, op_b, m, n, k,
// batch, alpha, beta) and `config`'s parameters are left in the id.
nlohmann::json attempt_rows(const std::string& db_path, const std::string& device = "",
                            const std::optional<Problem>& problem = {});
// The fastest ok attempt of each problem, in the same columns.
nlohmann::json best_rows(const std::string& db_path, const std::string& device = "");
// The reference timings (cuBLAS's, timed by tune, sweep, record and measure), oldest first:
// device, problem (shape id), lda, ldb, ldc, library, time_s, gflops, created_at and the
// problem's own fields as attempt_rows has them.
nlohmann::json reference_rows(const std::string& db_path, const std::string& device = "");
// Imports a CSV (`export`'s columns) or a JSON array (`export --format json`'s rows) of attempts
// into the store, creating it if needed. Throws InputError when no row is valid.
CsvImportReport import_attempts(const std::string& db_path, const std::string& path);

// ---------------------------------------------------------------- workloads and kernel sets
// One problem of a workload and how often it runs.
struct WorkloadEntry {
  Problem problem;
  double weight = 1;
};

struct KernelSetRequest {
  std::vector<WorkloadEntry> workload;
  int size = 5;
  std::string db = Database::default_path(), gpu = "H100-SXM", calibration = "auto";
  int candidates = 16;          // per problem: its fastest measured kernels, plus the model's pick
  std::string domain = "full";  // of the model's pick
  // Per problem, the model's pick when a previous call ranked it (KernelSetResult::model_picks;
  // none: no configuration of the space runs it); empty: each problem is ranked.
  std::vector<std::optional<KernelConfig>> model_picks;
};
// A time of a problem with a kernel: measured (the store's fastest median), or the calibrated
// model's prediction scaled by the problem's median measured/predicted ratio.
struct KernelTime {
  double seconds = 0;
  bool predicted = false;
};
struct KernelSetRow {
  WorkloadEntry entry;
  std::optional<KernelConfig> kernel;  // the member it runs; none when no member can run it
  KernelTime time;
  KernelConfig best_kernel;  // its own best among all candidates
  KernelTime best;
  std::vector<KernelTime> members;  // each member's time here (infinite: it cannot run it)
  double loss() const { return kernel ? time.seconds / best.seconds : 0; }
};
struct KernelSetResult {
  DeviceSpec device;
  ChosenCalibration calibration;
  std::size_t candidates = 0;
  std::vector<KernelConfig> members;     // in the order chosen
  std::vector<int> serves;               // per member: the problems that run it
  std::vector<KernelSetRow> rows;        // per problem, in the workload's order
  double total_s = 0, best_total_s = 0;  // weighted: with the set, each problem at its own best
  int uncovered = 0;                     // problems no member runs (left out of total_s)
  std::vector<std::optional<KernelConfig>> model_picks;  // per problem, for a later call
};
// The kernels (configurations) that minimise the workload's weighted total time on the store's
// measurements of gpu and the model's predictions for pairs never measured; a kernel that breaks
// a hard constraint of a problem, or whose every attempt on it failed, is not a choice for it.
// Throws InputError for a missing store, a size < 1, an empty workload, or a problem neither the
// store nor the model's space can run.
KernelSetResult kernel_set(const KernelSetRequest& request);
nlohmann::json to_json(const KernelSetResult& r);
// What the set's figures rest on that only the model gives: per problem (the workload's order),
// the members it could run and its own best where their times are predicted, no repeats.
std::vector<std::vector<KernelConfig>> predicted_pairs(const KernelSetResult& r);

}  // namespace gemmtune::app
