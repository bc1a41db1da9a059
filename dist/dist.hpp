// gemmtune dist: tuning spread over MPI ranks. Rank 0 hands out work items one at a time to
// whichever rank is free and collects what they return; the other ranks evaluate. A rank that
// dies or stops answering loses only the item it holds, which goes to another rank.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/search.hpp"

namespace gemmtune::dist {

// The number of ranks mpirun started this process among (OpenMPI's environment), 1 without
// mpirun. Read before MPI is initialized, so a serial run never touches MPI.
int launched_ranks();
// This process's rank among those on its node (0 without mpirun).
int launched_local_rank();
// Whether mpirun was told to keep the job alive when a rank dies (the MCA parameters
// orte_enable_recovery 1 and orte_abort_on_non_zero_status 0 of OpenMPI 4, passed on to ranks
// in their environment). Without them OpenMPI ends the whole job with the first lost rank.
bool survives_lost_ranks();

// MPI for the life of the object: initialized in the constructor, finalized in the destructor.
// Errors are returned, not fatal, so a dead peer does not abort the survivors. OpenMPI's
// finalize can wait forever on a rank that died: after finalize_timeout_s the process ends with
// exit_code (the work is stored by then).
class World {
 public:
  World();
  ~World();
  double finalize_timeout_s = 10;
  int exit_code = 0;
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

struct Options {
  // A rank silent for this long (no result, no request) is lost: its item goes to another
  // rank. A worker that hears nothing from rank 0 for this long, or makes no progress, exits.
  double rank_timeout_s = 600;
  // Rank 0 hands out no item after this many seconds (0: no limit); those left are not done.
  double hand_out_s = 0;
};

// Every rank calls it first. Workers send `identity` (build commit, command line, device) to
// rank 0; rank 0 compares each with its own and answers every rank with `setup` (what all
// ranks must share, as the model calibration) or a refusal. A refusal names both identities,
// or is rank 0's own `setup_error` (a store it cannot write); every rank throws InputError with
// it before anything is measured. Workers return rank 0's setup.
std::string handshake(const World& world, const std::string& identity,
                      const std::optional<std::string>& setup_error, const std::string& setup,
                      const Options& options = {});

// What a worker sent back for one item: its results in order, a summary, and the seconds the
// worker spent on it (the rest of the item's round trip is scheduling overhead).
struct ItemOutcome {
  std::vector<std::string> results;
  std::string summary;
  int rank = 0;
  double work_s = 0;
};

struct LostRank {
  int rank = 0;
  std::string why;
};

struct ScheduleReport {
  int items = 0;
  std::vector<LostRank> lost;
  int reassigned = 0;  // items handed again after their rank was lost
  double seconds = 0;  // wall time of the schedule
  // Medians per item: the round trip minus the worker's own time (what a worker waits), and
  // rank 0's own handling (hand-out, receipt, the done callback: what rank 0 serializes).
  double round_trip_overhead_ms = 0;
  double rank0_ms = 0;
  double worker_busy_s = 0;  // summed over items
  int workers = 0;
  double efficiency() const;  // worker time / (workers x wall time)
};

// Rank 0: hands out the payloads (in order, to whichever worker is free) and calls done(i,
// outcome) once per item, in the order they finish. Throws when every worker is lost with
// items left, and (after stopping the workers) what done() or a worker's handler threw.
ScheduleReport schedule(const World& world, const std::vector<std::string>& payloads,
                        const std::function<void(size_t, ItemOutcome&&)>& done,
                        const Options& options = {});

// A worker's handler for one payload: emit each result as it comes (rank 0 hears the rank is
// alive from it), return the summary.
using Emit = std::function<void(const std::string&)>;
using Handler = std::function<std::string(const std::string& payload, const Emit& emit)>;

// Ranks 1..N-1: runs payloads until rank 0 says stop. Returns the number of items served. A
// handler that throws fails the item: rank 0 stops the run with the message.
int serve(const World& world, const Handler& handler, const Options& options = {});

// An evaluation as text, and back (what results carry between ranks).
std::string evaluation_to_text(const Evaluation& e);
Evaluation evaluation_from_text(const std::string& text);

// Discrete-event model of schedule(): items of the given durations handed in order to whichever
// of `workers` ranks is free first; each item costs its worker `round_trip_s` more and rank 0
// `rank0_s` of its own time, one item at a time. Returns the makespan.
double simulated_makespan(const std::vector<double>& item_seconds, int workers, double round_trip_s,
                          double rank0_s);

}  // namespace gemmtune::dist
