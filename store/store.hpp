// gemmtune store: every attempt, with its status, timings and resources, in one SQLite file
// (WAL). Writes are transactional: a killed run loses at most the attempt in flight.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/core.hpp"
#include "search/search.hpp"

namespace gemmtune {

// 2 added the attempts' strategy, run and elapsed_s, and the reference timings; a version 1
// store is migrated when opened.
inline constexpr int kStoreSchemaVersion = 2;

// One measured (or failed) configuration on one problem and device.
struct Attempt {
  std::string device;  // DeviceSpec::name
  Problem problem;
  KernelConfig config;
  std::string status = "ok";  // ok, compile_error, launch_error, execute_error, wrong, timeout
  std::string error;
  double median_s = 0, min_s = 0, max_s = 0;
  int repetitions = 0;
  double gflops = 0;
  double rel_error = 0;
  int registers = 0, spill_bytes = 0;
  std::int64_t smem_bytes = 0;
  double energy_j = 0;        // 0 when not measured
  std::string counters_json;  // "" when not collected
  double predicted_s = 0;     // the model's time when the attempt was made
  std::string created_at;     // filled by the store
  // The tuning run that made it ("" and none for attempts stored before runs were kept, or
  // imported without them): the strategy that chose it (hybrid, random, sweep, sample,
  // profile...), the run's id, and the seconds from the run's start to this result.
  std::string strategy, run;
  std::optional<double> elapsed_s;
};

// A vendor library's time for a problem (cuBLAS, timed in the same run as the tuned kernels),
// so that tuned results can be compared with it.
struct Reference {
  std::string device;
  Problem problem;
  std::string library = "cublas";
  double time_s = 0;  // median
  double gflops = 0;
  std::string created_at;  // filled by the store
};
nlohmann::json reference_json(const Reference& r);

// The attempt to store for one evaluation (GFLOP/s, shared memory and the model's time filled in).
Attempt attempt_from(const Evaluation& e, const Problem& problem, const DeviceSpec& device);
// One tuning run's mark on its attempts: the strategy, an id unique to the run, and the seconds
// since the run began (when it was made).
class TuningRun {
 public:
  explicit TuningRun(std::string strategy);
  const std::string& id() const { return id_; }
  // attempt_from, stamped with this run.
  Attempt attempt(const Evaluation& e, const Problem& problem, const DeviceSpec& device) const;

 private:
  std::string strategy_, id_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The other way: what a replay answers for a recorded attempt.
Evaluation evaluation_from(const Attempt& a);

// Recorded attempts of one problem, as a ReplayEvaluator answers them.
struct Recording {
  Problem problem;
  std::vector<Evaluation> evaluations;
};
// Attempts grouped per problem, keyed by shape id and lda ("s_nn_4096x4096x4096_b1_4096").
std::map<std::string, Recording> recordings_by_problem(const std::vector<Attempt>& attempts);

// The strategy a recorder stamps on the configurations it draws from the domain (not found by a
// search): their samples are CalibrationSample::drawn.
inline constexpr std::string_view kDrawnStrategy = "sample";
// What the calibration fits: the ok attempts with a time, with the compiler's registers.
std::vector<CalibrationSample> calibration_samples(const std::vector<Attempt>& attempts);

struct CsvImportReport {
  int imported = 0;
  std::vector<std::string> rejected;         // "line N: reason"
  std::vector<std::string> unknown_columns;  // in the header, read by nothing (another tool's?)
};

// One attempt as export --format json writes it (counters as collected, or as stored text if
// that no longer parses).
nlohmann::json attempt_json(const Attempt& a);

class Database {
 public:
  // Opens or creates; a store of an older schema version is migrated in place, its rows kept.
  // Throws InputError when the file is not a gemmtune store, is of a newer or unknown schema
  // version (never overwritten), or cannot be read.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  static std::string default_path();  // $GEMMTUNE_DB or ~/.local/share/gemmtune/gemmtune.db

  void save_device(const DeviceSpec& d);
  std::optional<DeviceSpec> device(const std::string& name) const;

  void add(const Attempt& a);                          // one transaction
  void add_all(const std::vector<Attempt>& attempts);  // one transaction for all
  // Attempts of a problem on a device (all problems when problem is empty), oldest first.
  std::vector<Attempt> attempts(const std::string& device,
                                const std::optional<Problem>& problem = {}) const;
  std::vector<Problem> problems(const std::string& device) const;
  bool has(const std::string& device, const Problem& p, const KernelConfig& c) const;
  // The fastest ok attempt of exactly this problem.
  std::optional<Attempt> best(const std::string& device, const Problem& p) const;

  void add_reference(const Reference& r);
  // Reference timings (of one device, all when empty; of one problem when given), oldest first.
  std::vector<Reference> references(const std::string& device = "",
                                    const std::optional<Problem>& problem = {}) const;

  // Finished steps of a resumable job (a recording's per-problem tune, say), each with a note,
  // so that a rerun skips them.
  void mark_step(const std::string& key, const std::string& note);
  std::optional<std::string> step(const std::string& key) const;

  void save_calibration(const std::string& device, const std::string& json);
  std::optional<std::string> calibration(const std::string& device) const;
  struct StoredCalibration {
    std::string json;
    std::string created_at;  // UTC, as "2026-11-22T10:15:00Z"
  };
  // The latest calibration saved for the device.
  std::optional<StoredCalibration> latest_calibration(const std::string& device) const;

  // A consistent copy of the whole store (SQLite's online backup), while others may write it.
  // Throws InputError naming a path that cannot be written.
  void backup_to(const std::string& path) const;

  // Seeds' CSV: one row per attempt: inputs, status, error, time, GFLOP/s (and the rest).
  std::string export_csv(const std::string& device = "") const;
  std::string export_json(const std::string& device = "") const;
  std::string export_references_json(const std::string& device = "") const;
  CsvImportReport import_csv(const std::string& text);  // bad rows reported, good rows kept

  // For tests of crash safety: runs f inside a transaction that is then abandoned, as a
  // process killed mid-write would leave it.
  void abandoned_transaction_for_test(const std::vector<Attempt>& attempts);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Every row of an attempts CSV (header first): good rows returned, bad ones reported.
std::vector<Attempt> read_attempts_csv(const std::string& text, CsvImportReport& report);
// Every recording's attempts together as calibration samples, so that a configuration measured in
// two files (a recording and the model's measured picks) is one sample at the median of its
// times; each file's unreadable rows are reported on stderr and left out.
std::vector<CalibrationSample> recorded_samples(const std::vector<std::string>& paths);

std::string csv_header();
std::string to_csv_row(const Attempt& a);
Attempt parse_csv_row(const std::string& line,
                      const std::vector<std::string>& header);  // throws InputError

// The calibration a ranking uses. source "none": the uncalibrated model; a JSON file: that file
// (throws InputError when it cannot be read or is refused, as for another model version);
// "auto": the store's latest calibration for the device when `store` (may be null) has one, else
// the one shipped for it (shipped_calibration), else none. In auto mode a refused calibration
// leaves the model uncalibrated and `warning` says why.
struct ChosenCalibration {
  ModelCoefficients coefficients;
  // One line on where the coefficients came from: "shipped calibration for H100-SXM (model
  // v2)", "store calibration of 2026-11-22 10:15:00 UTC for ... (model v2)", "file X (model
  // v2)", "none".
  std::string description;
  std::string warning;  // "" unless auto mode refused a calibration
};
ChosenCalibration choose_calibration(const std::string& source, const std::string& device_name,
                                     const Database* store);

}  // namespace gemmtune
