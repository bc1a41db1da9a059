// Which kernel a call gets: stored best, nearest tuned shape, or the model's pick.
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune {

const char* to_string(DispatchSource s) {
  switch (s) {
    case DispatchSource::Stored:
      return "stored";
    case DispatchSource::NearestShape:
      return "nearest tuned shape";
    case DispatchSource::Model:
      return "model";
  }
  return "?";
}

namespace {
bool same_shape(const Problem& a, const Problem& b) {
  return a.precision == b.precision && a.op_a == b.op_a && a.op_b == b.op_b && a.m == b.m &&
         a.n == b.n && a.k == b.k && a.lda == b.lda && a.ldb == b.ldb && a.ldc == b.ldc &&
         a.batch == b.batch;
}
double shape_distance(const Problem& a, const Problem& b) {
  auto d = [](std::int64_t x, std::int64_t y) {
    return std::abs(std::log(double(x)) - std::log(double(y)));
  };
  return d(a.m, b.m) + d(a.n, b.n) + d(a.k, b.k) + d(a.batch, b.batch);
}
}  // namespace

DispatchChoice choose_kernel(const Problem& p, const DeviceSpec& d, const std::string& db_path) {
  std::unique_ptr<Database> db;
  if (std::filesystem::exists(db_path)) db = std::make_unique<Database>(db_path);
  if (db) {
    std::vector<std::pair<double, Problem>> near;
    for (const Problem& q : db->problems(d.name)) {
      if (q.precision != p.precision || q.op_a != p.op_a || q.op_b != p.op_b) continue;
      near.emplace_back(same_shape(p, q) ? -1.0 : shape_distance(p, q), q);
    }
    std::sort(near.begin(), near.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [distance, q] : near) {
      const auto best = db->best(d.name, q);
      if (!best || check_hard(p, d, best->config)) continue;  // a tuned kernel must be valid here
      return {best->config, distance < 0 ? DispatchSource::Stored : DispatchSource::NearestShape,
              q.shape_id(), ""};
    }
  }
  // The same store answers which calibration ranks, so a tune's recalibration reaches gemm().
  const ChosenCalibration calibration = choose_calibration("auto", d.name, db.get());
  const Ranking r = rank_space(p, d, 1, calibration.coefficients);
  if (r.top.empty())
    throw InputError("no kernel configuration can run " + p.shape_id() + " on " + d.name);
  return {r.top.front().config, DispatchSource::Model, "",
          calibration.warning.empty() ? calibration.description
                                      : calibration.description + ": " + calibration.warning};
}

}  // namespace gemmtune
