// Experiment: how many measured configurations of each problem the model predicts within 0.1% of
// its best prediction (ties), and whether any of the model's other terms orders the ties the way
// the measurements do (Spearman within the ties).
// Build (one line): g++ -std=c++20 -O2 -I. -I/usr/include/eigen3 exp/prediction_ties.cpp
//   -o /tmp/ties build/libgemmtune_store.a build/libgemmtune_search.a
//   build/libgemmtune_model.a build/libgemmtune_core.a -lnlopt -lsqlite3 -lpthread
//   /tmp/ties attempts.csv [more.csv ...]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "model/model.hpp"
#include "store/store.hpp"
using namespace gemmtune;

namespace {
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size(); ++i) r[order[i]] = double(i);
  return r;
}
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 4) return 0;
  const auto ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * s / (n * (n * n - 1));
}
}  // namespace

int main(int argc, char** argv) {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  std::map<std::string, std::vector<Attempt>> by_problem;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream text;
    text << in.rdbuf();
    CsvImportReport report;
    for (auto& a : read_attempts_csv(text.str(), report))
      if (a.status == "ok") by_problem[a.problem.shape_id()].push_back(a);
  }
  for (const auto& [id, list] : by_problem) {
    std::vector<double> measured, predicted, smem, issue, l2, dram, latency, occupancy;
    for (const auto& a : list) {
      const Prediction p = predict(a.problem, d, a.config, {}, a.registers);
      measured.push_back(a.median_s);
      predicted.push_back(p.time_s);
      smem.push_back(p.t_smem / p.t_compute);
      issue.push_back(p.t_issue / p.t_compute);
      l2.push_back(p.t_l2 / p.t_compute);
      dram.push_back(p.t_dram / p.t_compute);
      latency.push_back(p.t_latency / p.t_compute);
      occupancy.push_back(-p.occ.fraction);
    }
    const double best = *std::min_element(predicted.begin(), predicted.end());
    std::vector<size_t> ties;
    for (size_t i = 0; i < predicted.size(); ++i)
      if (predicted[i] <= best * 1.001) ties.push_back(i);
    auto in_ties = [&](const std::vector<double>& v) {
      std::vector<double> out;
      for (size_t i : ties) out.push_back(v[i]);
      return out;
    };
    const auto m = in_ties(measured);
    std::printf(
        "%-28s n=%4zu ties=%4zu  rho(measured, predicted) %5.2f | within the ties, rho with: "
        "smem %5.2f issue %5.2f l2 %5.2f dram %5.2f latency %5.2f -occupancy %5.2f\n",
        id.c_str(), list.size(), ties.size(), spearman(measured, predicted),
        spearman(m, in_ties(smem)), spearman(m, in_ties(issue)), spearman(m, in_ties(l2)),
        spearman(m, in_ties(dram)), spearman(m, in_ties(latency)), spearman(m, in_ties(occupancy)));
  }
}
