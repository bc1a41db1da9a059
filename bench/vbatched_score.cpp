// bench/vbatched_score: how well a variable batch's score (time_for_sizes, what rank_for_sizes and
// gemm_vbatched's first call rank by) orders kernels that were measured on the batch. Reads the
// logs of `vs_cublas --set batched` (its variable rows: the representative's kernel and the
// model's best for the sizes, each timed on the batch), draws the rows' sizes again as vs_cublas
// draws them, and scores every measured kernel with the shipped calibration of --gpu.
//   vbatched_score [--gpu H200] [--detail] LOG...   (--detail: every kernel's score and time)
// Per row: the kernels, the fraction of their pairs the score orders as measured, and the
// measured time of the score's first over the row's fastest.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"

using namespace gemmtune;

namespace {

// One row of a log: a precision and a variable batch, its kernels' measured medians.
struct Row {
  char precision = 's';
  std::int64_t count = 0, largest = 0;
  std::map<std::string, double> measured_us;  // configuration id -> median
};

// "s    var 5000 up to 128   gemmtune sizes #3   345.8 ... CONFIG": the kernels timed as
// "gemmtune variable" and "gemmtune sizes #N" (gemm_vbatched runs one of them again).
std::vector<Row> read_log(const std::string& path, std::vector<Row> rows) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the log '" + path + "'");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string prec, var, count, up, to, largest, tool, method;
    if (!(words >> prec >> var >> count >> up >> to >> largest >> tool >> method) || var != "var" ||
        tool != "gemmtune" || (method != "variable" && method != "sizes"))
      continue;
    if (method == "sizes") words >> method;  // "#N"
    double us = 0;
    std::string rest, config;
    if (!(words >> us)) continue;
    while (words >> rest)
      if (rest.rfind("BM", 0) == 0) config = rest;
    if (config.empty() || !(us > 0)) continue;
    Row key{prec[0], std::stoll(count), std::stoll(largest), {}};
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.precision == key.precision && r.count == key.count && r.largest == key.largest;
    });
    if (it == rows.end()) it = rows.insert(rows.end(), key);
    it->measured_us[config] = us;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string gpu = "H200";
  bool detail = false;
  std::vector<Row> rows;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gpu" && i + 1 < argc)
      gpu = argv[++i];
    else if (a == "--detail")
      detail = true;
    else
      rows = read_log(a, std::move(rows));
  }
  if (rows.empty()) throw InputError("no variable row with measured kernels in the logs given");
  const DeviceSpec device = find_builtin_device(gpu);
  const auto shipped = shipped_calibration(device.name);
  const ModelCoefficients k = shipped ? coefficients_from_json(shipped->json) : ModelCoefficients{};
  std::printf("%-4s %-20s %7s %11s %13s\n", "prec", "batch", "kernels", "pairs right",
              "first/fastest");
  double concordant_all = 0, pairs_all = 0;
  for (const Row& row : rows) {
    // The sizes vs_cublas drew for the row.
    const std::vector<MatrixShape> shapes =
        uniform_shapes(row.count, row.largest, row.largest, row.largest, 7);
    Problem call;
    call.precision = parse_precision(std::string(1, row.precision));
    call.batch = row.count;
    for (const MatrixShape& s : shapes) {
      call.m = std::max(call.m, s.m);
      call.n = std::max(call.n, s.n);
      call.k = std::max(call.k, s.k);
    }
    const Problem representative = batched_representative(call, BatchKind::Variable);
    const std::vector<Problem> sizes = matrix_problems(representative, shapes);
    std::vector<std::pair<double, double>> scored;  // score, measured
    for (const auto& [id, us] : row.measured_us) {
      const KernelConfig c = KernelConfig::parse(id);
      scored.push_back({time_for_sizes(representative, sizes, device, c, k), us});
      if (detail)
        std::printf("  %c %lld up to %lld: score %9.1f us, measured %9.1f us, %d per SM  %s\n",
                    row.precision, (long long)row.count, (long long)row.largest,
                    scored.back().first * 1e6, us,
                    predict(representative, device, c, k).occ.blocks_per_sm, id.c_str());
    }
    double concordant = 0, pairs = 0, fastest = scored.front().second;
    std::size_t first = 0;
    for (std::size_t i = 0; i < scored.size(); ++i) {
      fastest = std::min(fastest, scored[i].second);
      if (scored[i].first < scored[first].first) first = i;
      for (std::size_t j = i + 1; j < scored.size(); ++j) {
        pairs += 1;
        concordant += (scored[i].first < scored[j].first) == (scored[i].second < scored[j].second);
      }
    }
    concordant_all += concordant;
    pairs_all += pairs;
    const std::string batch =
        "var " + std::to_string(row.count) + " up to " + std::to_string(row.largest);
    std::printf("%-4c %-20s %7zu %11.3f %13.3f\n", row.precision, batch.c_str(), scored.size(),
                pairs > 0 ? concordant / pairs : 0.0, scored[first].second / fastest);
  }
  std::printf("all rows: %.3f of %.0f pairs ordered as measured\n",
              pairs_all > 0 ? concordant_all / pairs_all : 0.0, pairs_all);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "vbatched_score: %s\n", e.what());
  return 1;
}
