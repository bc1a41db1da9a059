// Shared by the experiments that judge rankings held out by problem class (miss_analysis,
// shortlist_variants, correction_cv): reading recorded samples, each fold's calibration (cached
// under /tmp/folds, valid while predict's terms are unchanged: delete it after changing them),
// and each held-out problem's measured and predicted times in predicted order.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "store/store.hpp"

namespace gemmtune::exp {

inline std::vector<CalibrationSample> read_samples(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  CsvImportReport report;
  return calibration_samples(read_attempts_csv(text.str(), report));
}

inline std::map<std::string, std::vector<CalibrationSample>> by_class(
    const std::vector<CalibrationSample>& samples) {
  std::map<std::string, std::vector<CalibrationSample>> out;
  for (const auto& s : samples) out[problem_class(s.problem)].push_back(s);
  return out;
}

inline std::vector<CalibrationSample> all_but(const std::vector<CalibrationSample>& samples,
                                              const std::string& fold) {
  std::vector<CalibrationSample> out;
  for (const auto& s : samples)
    if (problem_class(s.problem) != fold) out.push_back(s);
  return out;
}

// The fold's NLopt coefficients and correction, fitted on every other class; cached.
inline ModelCoefficients fold_coefficients(const DeviceSpec& d,
                                           const std::vector<CalibrationSample>& samples,
                                           const std::string& fold) {
  const char* dir = std::getenv("GEMMTUNE_FOLDS");  // another model's folds beside these
  const std::string folds = dir ? dir : "/tmp/folds", cache = folds + "/" + fold + ".json";
  if (std::filesystem::exists(cache)) return coefficients_from_file(cache);
  const ModelCoefficients k = fit_fold(d, all_but(samples, fold));
  std::filesystem::create_directories(folds);
  std::ofstream(cache) << coefficients_to_json(k);
  return k;
}

// One held-out problem: its samples, measured and predicted times (1e30 where the model
// refuses), the indices in predicted order (stable), and the best measured time.
struct HeldOutProblem {
  std::string id;
  std::vector<const CalibrationSample*> list;
  std::vector<double> pred, meas;
  std::vector<size_t> order;
  double best = 0;
};

inline std::vector<double> predicted_times(const DeviceSpec& d,
                                           const std::vector<const CalibrationSample*>& list,
                                           const ModelCoefficients& k) {
  std::vector<double> out;
  for (const auto* s : list) {
    double t = 1e30;
    try {
      t = predict(s->problem, d, s->config, k, s->registers).time_s;
    } catch (const InputError&) {
    }
    out.push_back(t);
  }
  return out;
}

inline std::vector<HeldOutProblem> held_out_problems(const DeviceSpec& d,
                                                     const std::vector<CalibrationSample>& held,
                                                     const ModelCoefficients& k) {
  std::map<std::string, std::vector<const CalibrationSample*>> by_problem;
  for (const auto& s : held) by_problem[s.problem.shape_id()].push_back(&s);
  std::vector<HeldOutProblem> out;
  for (auto& [id, list] : by_problem) {
    HeldOutProblem p;
    p.id = id;
    p.list = list;
    p.pred = predicted_times(d, list, k);
    for (const auto* s : list) p.meas.push_back(s->time_s);
    p.best = *std::min_element(p.meas.begin(), p.meas.end());
    p.order.resize(list.size());
    std::iota(p.order.begin(), p.order.end(), 0);
    std::stable_sort(p.order.begin(), p.order.end(),
                     [&](size_t a, size_t b) { return p.pred[a] < p.pred[b]; });
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gemmtune::exp
