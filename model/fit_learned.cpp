// Fits the learned correction with XGBoost (its C API): regression trees on log(measured /
// predicted), each problem weighing the same and, inside one, the configurations near its best
// weighing most, as they decide what the model picks.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "model/model.hpp"

namespace gemmtune {
namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": " + XGBGetLastError());
}

struct MatrixHandle {
  DMatrixHandle h = nullptr;
  ~MatrixHandle() {
    if (h) XGDMatrixFree(h);
  }
};
struct BoosterHandleOwner {
  BoosterHandle h = nullptr;
  ~BoosterHandleOwner() {
    if (h) XGBoosterFree(h);
  }
};

}  // namespace

TreeEnsemble fit_learned_correction(const DeviceSpec& device,
                                    const std::vector<CalibrationSample>& samples,
                                    const ModelCoefficients& base,
                                    const LearnedCorrectionOptions& options) {
  ModelCoefficients plain = base;
  plain.learned = {};
  std::map<std::string, double> best;
  std::map<std::string, int> count;
  for (const auto& s : samples) {
    if (!(s.time_s > 0)) continue;
    const std::string key = problem_key(s.problem);
    auto [it, fresh] = best.emplace(key, s.time_s);
    if (!fresh) it->second = std::min(it->second, s.time_s);
    ++count[key];
  }
  if (best.size() < 2)
    throw InputError("the learned correction needs measurements of 2 or more problems, not " +
                     std::to_string(best.size()));
  const std::size_t width = learned_feature_names().size();
  std::vector<float> data, labels, weights, row;
  for (const auto& s : samples) {
    const auto r = predict_measured(device, s, plain);
    if (!r) continue;
    learned_features(s.problem, s.config, *r, row);
    data.insert(data.end(), row.begin(), row.end());
    labels.push_back(float(std::log(s.time_s / r->time_s)));
    const std::string key = problem_key(s.problem);
    const double behind = std::log(s.time_s / best[key]);
    weights.push_back(
        float((1 + options.fast_weight * std::exp(-behind / options.fast_scale)) / count[key]));
  }
  MatrixHandle m;
  check(XGDMatrixCreateFromMat(data.data(), labels.size(), width, NAN, &m.h), "XGDMatrix");
  check(XGDMatrixSetFloatInfo(m.h, "label", labels.data(), labels.size()), "labels");
  check(XGDMatrixSetFloatInfo(m.h, "weight", weights.data(), weights.size()), "weights");
  std::vector<const char*> names;
  for (const auto& n : learned_feature_names()) names.push_back(n.c_str());
  check(XGDMatrixSetStrFeatureInfo(m.h, "feature_name", names.data(), names.size()), "names");
  BoosterHandleOwner b;
  check(XGBoosterCreate(&m.h, 1, &b.h), "XGBooster");
  const std::pair<const char*, std::string> params[] = {
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(options.max_depth)},
      {"eta", std::to_string(options.learning_rate)},
      {"subsample", std::to_string(options.subsample)},
      {"colsample_bytree", std::to_string(options.colsample)},
      {"min_child_weight", std::to_string(options.min_child_weight)},
      {"seed", "0"},
      {"nthread", std::to_string(hardware_threads())},
      {"verbosity", "0"}};
  for (const auto& [key, value] : params)
    check(XGBoosterSetParam(b.h, key, value.c_str()), "parameter");
  for (int i = 0; i < options.rounds; ++i)
    check(XGBoosterUpdateOneIter(b.h, i, m.h), "training round");
  bst_ulong length = 0;
  const char* buffer = nullptr;
  check(XGBoosterSaveModelToBuffer(b.h, R"({"format": "json"})", &length, &buffer), "save");
  return TreeEnsemble::from_xgboost_json(std::string(buffer, length));
}

}  // namespace gemmtune
