// Simulated efficiency of tuning over MPI ranks: a discrete-event model of rank 0's schedule
// (dist::simulated_makespan) over a workload of recorded problems, with per-measurement times
// taken from the H100 recordings and the scheduling overhead measured under mpirun.
//
//   mpi_efficiency --sweeps tests/data/h100_sweeps.csv
//                  --workload tests/data/h100_random_seed1.csv.gz
//                  --round-trip-ms X --rank0-ms Y [--problems 50] [--item-configs 16]
#include <CLI/CLI.hpp>
#include <Eigen/Dense>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "dist/dist.hpp"
#include "store/store.hpp"

namespace {

using namespace gemmtune;

std::vector<Attempt> read_csv(const std::string& path) {
  CsvImportReport report;
  return read_attempts_csv(read_text_file(path, "recording"), report);
}

// Problems in the order the recording first met them, each with its kernel times.
std::vector<std::pair<std::string, std::vector<double>>> by_problem(const std::vector<Attempt>& a) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  std::map<std::string, size_t> index;
  for (const auto& x : a) {
    const std::string key = x.problem.shape_id() + "_" + std::to_string(x.problem.lda);
    auto [it, added] = index.emplace(key, out.size());
    if (added) out.push_back({key, {}});
    out[it->second].second.push_back(x.status == "ok" ? x.median_s : 0.0);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simulated efficiency of tuning over MPI ranks"};
  std::string sweeps, workload;
  double round_trip_ms = 0, rank0_ms = 0;
  int problems = 50, item_configs = 16;
  std::vector<int> ranks{4, 16, 64};
  app.add_option("--sweeps", sweeps, "time-limited sampled sweeps (tests/data/h100_sweeps.csv)")
      ->required();
  app.add_option("--workload", workload, "recorded attempts of the workload's problems")
      ->required();
  app.add_option("--round-trip-ms", round_trip_ms, "measured: an item's round trip less its work")
      ->required();
  app.add_option("--rank0-ms", rank0_ms, "measured: rank 0's own time per item")->required();
  app.add_option("--problems", problems, "problems of the workload")->capture_default_str();
  app.add_option("--item-configs", item_configs, "configurations per item")->capture_default_str();
  app.add_option("--ranks", ranks, "rank counts (rank 0 schedules, the others measure)");
  CLI11_PARSE(app, argc, argv);
  try {
    // Each recorded sweep ran until its budget (30 s for its first 12 problems, 36 s after:
    // tests/data/README.md): budget / attempts is its wall time per measurement. Fitted as
    // fixed + per_kernel x kernel time (compile, verification and repetitions).
    const auto swept = by_problem(read_csv(sweeps));
    std::vector<double> per_measurement, kernel;
    for (size_t i = 0; i < swept.size(); ++i) {
      const auto& times = swept[i].second;
      if (times.size() >= 400) continue;  // the whole sample fit in the budget: no rate
      double mean = 0;
      for (double t : times) mean += t / double(times.size());
      per_measurement.push_back((i < 12 ? 30.0 : 36.0) / double(times.size()));
      kernel.push_back(mean);
    }
    Eigen::MatrixXd x(per_measurement.size(), 2);
    Eigen::VectorXd y(per_measurement.size());
    for (size_t i = 0; i < per_measurement.size(); ++i) {
      x(long(i), 0) = 1;
      x(long(i), 1) = kernel[i];
      y(long(i)) = per_measurement[i];
    }
    const Eigen::VectorXd fit = x.colPivHouseholderQr().solve(y);
    std::printf(
        "measurement wall time fitted on %zu recorded sweeps: %.3f s + %.1f x kernel time\n",
        per_measurement.size(), fit(0), fit(1));

    // The workload: each problem's recorded attempts swept in items of item_configs.
    const auto recorded = by_problem(read_csv(workload));
    if (int(recorded.size()) < problems)
      throw InputError("the workload has " + std::to_string(recorded.size()) + " problems, not " +
                       std::to_string(problems));
    std::vector<double> items;
    double work = 0;
    size_t measurements = 0;
    for (int p = 0; p < problems; ++p) {
      const auto& times = recorded[size_t(p)].second;
      for (size_t first = 0; first < times.size(); first += size_t(item_configs)) {
        double item = 0;
        for (size_t i = first; i < std::min(times.size(), first + size_t(item_configs)); ++i)
          item += fit(0) + fit(1) * times[i];
        items.push_back(item);
        work += item;
      }
      measurements += times.size();
    }
    std::printf("workload: %d problems, %zu measurements in %zu items, %.0f s on one GPU\n",
                problems, measurements, items.size(), work);
    for (int n : ranks) {
      const int workers = n - 1;
      const double makespan =
          dist::simulated_makespan(items, workers, round_trip_ms * 1e-3, rank0_ms * 1e-3);
      std::printf(
          "%d ranks (%d measuring): %.0f s, speed-up %.1f, efficiency %.1f%% per measuring rank, "
          "%.1f%% per rank\n",
          n, workers, makespan, work / makespan, 100 * work / (workers * makespan),
          100 * work / (n * makespan));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_efficiency: %s\n", e.what());
    return 1;
  }
  return 0;
}
