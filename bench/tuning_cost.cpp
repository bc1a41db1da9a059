// Benchmark: hybrid vs random vs exhaustive on recorded sweeps. Input: a CSV from
// `gemmtune export` holding exhaustive sweeps (`gemmtune sweep`) of one or more problems.
// For each problem: evaluations (and the recorded kernel time they cost) for the hybrid and
// for random search to reach 97% of the exhaustive best, the fraction of it the hybrid ends
// at, and the model's top-1 with zero measurements.
//   tuning_cost FILE.csv [--gpu H100-SXM] [--min-attempts 100] [--seeds 25]
//               [--domain compact] [--calibration FILE.json] [--budget 50 | --budget 5%]
// The hybrid gets --budget evaluations, or that percentage of the recorded space (after
// converging it restarts from its shortlist).
// The hybrid walks the domain the recording was swept over, so that it can only pick what the
// recording can answer.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {
int evaluations_to(const TuneResult& r, double target) {
  for (size_t i = 0; i < r.best_after.size(); ++i)
    if (r.best_after[i] <= target) return int(i) + 1;
  return -1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: tuning_cost FILE.csv [--gpu NAME] [--min-attempts N] [--seeds N]\n");
    return 2;
  }
  std::string gpu = "H100-SXM", domain = "compact", calibration;
  int min_attempts = 100, seeds = 25, budget = 50;
  double budget_percent = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--gpu"))
      gpu = argv[i + 1];
    else if (!std::strcmp(argv[i], "--min-attempts"))
      min_attempts = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seeds"))
      seeds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--budget") && std::strchr(argv[i + 1], '%'))
      budget_percent = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--budget"))
      budget = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--domain"))
      domain = argv[i + 1];
    else if (!std::strcmp(argv[i], "--calibration"))
      calibration = argv[i + 1];
  }
  try {
    const DeviceSpec device = find_builtin_device(gpu);
    ModelCoefficients coefficients;
    if (!calibration.empty()) coefficients = coefficients_from_file(calibration);
    CsvImportReport report;
    const auto by_problem =
        recordings_by_problem(read_attempts_csv(read_text_file(argv[1], "recording"), report));
    for (const auto& why : report.rejected) std::fprintf(stderr, "left out %s\n", why.c_str());
    std::printf("%-30s %7s %10s %10s %8s %10s %8s\n", "problem", "space", "hybrid97", "random97",
                "reached", "hyb_evals", "model1");
    for (const auto& [key, recording] : by_problem) {
      const Problem& problem = recording.problem;
      const std::vector<Evaluation>& recorded = recording.evaluations;
      if (int(recorded.size()) < min_attempts) continue;
      double best = std::numeric_limits<double>::infinity();
      for (const auto& e : recorded)
        if (e.ok() && e.time_s > 0) best = std::min(best, e.time_s);
      if (!(best < std::numeric_limits<double>::infinity())) continue;
      ReplayEvaluator replay(device, recorded);
      HybridOptions o;
      o.refine_rounds = 20;
      o.budget.evaluations =
          budget_percent > 0 ? int(double(recorded.size()) * budget_percent / 100) : budget;
      o.domain = SpaceDomain::named(domain);
      o.coefficients = coefficients;
      const TuneResult h = hybrid_tune(problem, replay, o);
      std::vector<KernelConfig> all;
      for (const auto& e : recorded) all.push_back(e.config);
      std::vector<int> random_evals;
      for (int s = 1; s <= seeds; ++s) {
        const int n = evaluations_to(random_search(problem, replay, all, unsigned(s)), best / 0.97);
        random_evals.push_back(n < 0 ? int(all.size()) : n);
      }
      std::sort(random_evals.begin(), random_evals.end());
      const double model1 =
          !h.history.empty() && h.history[0].ok() ? best / h.history[0].time_s : 0;
      std::printf("%-30s %7zu %10d %10d %8.3f %10d %8.3f\n", key.c_str(), recorded.size(),
                  evaluations_to(h, best / 0.97), random_evals[random_evals.size() / 2],
                  h.best ? best / h.best->time_s : 0.0, h.evaluations, model1);
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "tuning_cost: %s\n", e.what());
    return 2;
  }
  return 0;
}
