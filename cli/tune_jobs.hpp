// What tune and sweep do for one problem, shared by the serial command and its MPI ranks.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace gemmtune::cli {

struct TuneArgs {
  ProblemOptions problem;
  std::string problems_file;  // tune: every problem of the file in turn (one per line)
  std::string db = Database::default_path();
  EvaluatorOptions evaluator;
  std::string strategy = "hybrid";
  std::string domain = "full";
  std::string calibration = "auto";
  bool recalibrate = false;
  bool counters = false;  // with every measurement (tune)
  std::string objective = "time";
  int evaluations = 0;
  double seconds = 60;
  double cap_percent = 0;  // tune: at most this percentage of the pruned space measured
  int compile_top = 64, measure_top = 8;
  unsigned seed = 1;
  int limit = 0;
  int sample = 0;         // sweep: a uniformly random subset of this size (0: every configuration)
  int item_configs = 16;  // under mpirun: configurations per sweep work item
  double rank_timeout = 600;  // under mpirun: seconds of silence that lose a rank
};

EvaluatorOptions evaluator_options(const TuneArgs& a);
// The problem of the options, or those of --problems.
std::vector<Problem> tune_problems(const TuneArgs& a);
// The store's mark of a finished tune of p in a workload (so a rerun skips it).
std::string tune_step_key(const Problem& p, const std::string& device, const TuneArgs& a);

// The report of one tune or sweep, as the serial command prints it.
std::string report_text(const Problem& p, const TuneResult& r, const char* what);

// cuBLAS timed once for the problem on the evaluator's GPU and kept in the store beside the
// tuned kernels (nothing where the evaluator cannot time it: a replay).
void store_reference(Database& db, Evaluator& evaluator, const Problem& p);

// One problem's tune with the chosen strategy; coefficients rank the hybrid's space.
TuneResult tune_problem(const TuneArgs& a, const Problem& p, Evaluator& evaluator,
                        const ModelCoefficients& coefficients, const EvaluationSink& sink);

// Online refinement: refit on everything the store holds for this device (the new attempts
// included), starting from the current coefficients, so the next problem ranks with it.
void recalibrate(Database& db, const DeviceSpec& d, const TuneArgs& a);

// tune --problems: the workload's problems in turn under one budget, split by expected gain
// (weight x the model's predicted time of its pick), compiles shared, resumable; prints the
// workload's weighted total time.
void tune_workload(const TuneArgs& a);

// What a sweep measures: the space (or its seeded sample) less what the store has.
struct SweepPlan {
  std::vector<KernelConfig> to_measure;
  size_t space_size = 0, sampled = 0;
  int skipped = 0;
};
SweepPlan plan_sweep(const TuneArgs& a, const Problem& p, const Evaluator& evaluator,
                     const Database& db);
std::string sweep_header(const TuneArgs& a, const Problem& p, const SweepPlan& plan);

// Progress on stderr: a bar on a terminal, else a line every 25 measurements.
class SweepProgress {
 public:
  explicit SweepProgress(size_t total);
  void add(size_t done_now);
  void finish() const;

 private:
  size_t total_, done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Under mpirun with several ranks: tunes or sweeps over them and returns true. Returns false
// for a serial run (no mpirun, or one rank); throws InputError when mpirun started several
// ranks of a build without MPI.
bool run_distributed(const TuneArgs& a, bool sweep);

}  // namespace gemmtune::cli
