// Fits the learned correction with XGBoost (its C API): regression trees on log(measured /
// predicted), each problem weighing the same and, inside one, the configurations near its best
// weighing most, as they decide what the model picks.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>

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

// The training rows as the ranking loss needs them: each problem's rows, and each row's label
// (log measured / predicted), regression weight and log predicted time; with rank_step, each
// row's single steps (the rows of its problem whose configurations differ in one parameter).
struct TrainingRows {
  std::vector<std::vector<int>> members;
  std::vector<double> log_predicted;
  std::vector<std::vector<int>> steps;
  const std::vector<float>* label = nullptr;
  const std::vector<float>* weight = nullptr;
};

// Each row's single steps inside its problem: rows sharing every tuning parameter but one, which
// they hold at another value.
std::vector<std::vector<int>> single_steps(const std::vector<std::vector<int>>& members,
                                           const std::vector<KernelConfig>& configs) {
  std::vector<std::vector<int>> steps(configs.size());
  const auto& parameters = tuning_parameters();
  for (const auto& group : members)
    for (std::size_t p = 0; p < parameters.size(); ++p) {
      std::map<std::vector<int>, std::vector<int>> alike;  // the other parameters' values
      for (const int i : group) {
        std::vector<int> key;
        key.reserve(parameters.size());
        for (std::size_t q = 0; q < parameters.size(); ++q)
          if (q != p) key.push_back(parameters[q].get(configs[std::size_t(i)]));
        alike[std::move(key)].push_back(i);
      }
      for (const auto& [key, rows] : alike)
        for (const int a : rows)
          for (const int b : rows)
            if (parameters[p].get(configs[std::size_t(a)]) !=
                parameters[p].get(configs[std::size_t(b)]))
              steps[std::size_t(a)].push_back(b);
    }
  return steps;
}

// Measured times closer than this (log ratio) are one time within the timing noise: no pair.
constexpr double kRankTie = 0.02;

// Boosts with the regression's gradient plus the pairwise logistic loss's (RankNet), pairs
// drawn afresh each round from a fixed seed.
void boost_with_ranking(BoosterHandle booster, DMatrixHandle m, const TrainingRows& rows,
                        const LearnedCorrectionOptions& o) {
  const std::vector<float>& label = *rows.label;
  const std::vector<float>& weight = *rows.weight;
  const std::size_t n = label.size();
  std::vector<float> grad(n), hess(n);
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> share(0, 1);
  for (int round = 0; round < o.rounds; ++round) {
    bst_ulong length = 0;
    const float* margin = nullptr;
    check(XGBoosterPredict(booster, m, 1, 0, 1, &length, &margin), "prediction");
    for (std::size_t i = 0; i < n; ++i) {
      grad[i] = weight[i] * (margin[i] - label[i]);
      hess[i] = weight[i];
    }
    for (const auto& group : rows.members) {
      if (group.size() < 2) continue;
      std::uniform_int_distribution<std::size_t> pick(0, group.size() - 1);
      const double scale = o.rank_weight / double(o.rank_pairs);
      double mean_weight = 0;
      for (const int i : group) mean_weight += weight[i];
      mean_weight /= double(group.size());
      for (const int a : group)
        for (int r = 0; r < o.rank_pairs; ++r) {
          const auto& steps = o.rank_step > 0 ? rows.steps[std::size_t(a)] : group;
          const bool step = o.rank_step > 0 && !steps.empty() && share(rng) < o.rank_step;
          const int b =
              step ? steps[std::uniform_int_distribution<std::size_t>(0, steps.size() - 1)(rng)]
                   : group[pick(rng)];
          // log measured time = label + log predicted; the faster of the two should stay ahead.
          const double ta = label[a] + rows.log_predicted[a];
          const double tb = label[b] + rows.log_predicted[b];
          if (std::abs(ta - tb) < kRankTie) continue;
          const int fast = ta < tb ? a : b, slow = ta < tb ? b : a;
          const double d =
              (rows.log_predicted[fast] + margin[fast] - rows.log_predicted[slow] - margin[slow]) /
              o.rank_sigma;
          const double p = 1 / (1 + std::exp(-d));
          // Both weights hold the problem's share: the faster row's its fast end too, the
          // problem's mean weight none, so that spread pairs weigh alike across the recording.
          const double w =
              scale * ((1 - o.rank_spread) * weight[fast] + o.rank_spread * mean_weight);
          const double g = w * p / o.rank_sigma,
                       h = w * p * (1 - p) / (o.rank_sigma * o.rank_sigma);
          grad[fast] += float(g);
          grad[slow] -= float(g);
          hess[fast] += float(h);
          hess[slow] += float(h);
        }
    }
    check(XGBoosterBoostOneIter(booster, m, grad.data(), hess.data(), n), "training round");
  }
}

}  // namespace

TreeEnsemble fit_learned_correction(const DeviceSpec& device,
                                    const std::vector<CalibrationSample>& samples,
                                    const ModelCoefficients& base,
                                    const LearnedCorrectionOptions& options) {
  return TreeEnsemble::from_xgboost_json(
      TreeEnsemble::compact_xgboost_json(fit_learned_model_json(device, samples, base, options)));
}

void fit_learned_trees(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                       ModelCoefficients& k, const LearnedCorrectionOptions& options) {
  k.learned_reduced = {};
  std::vector<CalibrationSample> others;
  std::set<std::string> reduced_problems, other_problems;
  if (options.by_family)
    for (const auto& s : samples) {
      const bool r = is_reduced(s.problem.precision);
      if (!r) others.push_back(s);
      if (s.time_s > 0) (r ? reduced_problems : other_problems).insert(sample_key(s));
    }
  const bool apart = reduced_problems.size() >= 2 && other_problems.size() >= 2;
  if (apart) k.learned_reduced = fit_learned_correction(device, samples, k, options);
  k.learned = fit_learned_correction(device, apart ? others : samples, k, options);
}

std::string fit_learned_model_json(const DeviceSpec& device,
                                   const std::vector<CalibrationSample>& samples,
                                   const ModelCoefficients& base,
                                   const LearnedCorrectionOptions& options) {
  ModelCoefficients plain = base;
  plain.learned = plain.learned_reduced = {};
  std::map<std::string, double> best;
  std::map<std::string, int> count;
  for (const auto& s : samples) {
    if (!(s.time_s > 0)) continue;
    const std::string key = sample_key(s);
    auto [it, fresh] = best.emplace(key, s.time_s);
    if (!fresh) it->second = std::min(it->second, s.time_s);
    ++count[key];
  }
  if (best.size() < 2)
    throw InputError("the learned correction needs measurements of 2 or more problems, not " +
                     std::to_string(best.size()));
  if (options.parallel_trees < 1)
    throw InputError("the learned correction needs parallel_trees >= 1, not " +
                     std::to_string(options.parallel_trees));
  if (options.rank_weight > 0 && !(options.rank_sigma > 0 && options.rank_pairs >= 1))
    throw InputError("the ranking loss needs rank_sigma > 0 and rank_pairs >= 1, not " +
                     std::to_string(options.rank_sigma) + " and " +
                     std::to_string(options.rank_pairs));
  if (!(options.own_device_weight > 0 && std::isfinite(options.own_device_weight)))
    throw InputError("the learned correction's own_device_weight must be finite and > 0, not " +
                     std::to_string(options.own_device_weight));
  if (!(options.rank_spread >= 0 && options.rank_spread <= 1))
    throw InputError("the ranking loss's rank_spread is a share from 0 to 1, not " +
                     std::to_string(options.rank_spread));
  if (!(options.rank_step >= 0 && options.rank_step <= 1))
    throw InputError("the ranking loss's rank_step is a share from 0 to 1, not " +
                     std::to_string(options.rank_step));
  const std::size_t width = learned_feature_names().size();
  // An excluded feature is missing in every row, so no split can gain from it.
  std::vector<bool> excluded(width, false);
  for (const auto& name : options.excluded_features) {
    const auto& names = learned_feature_names();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw InputError("the learned correction has no feature '" + name + "' (" +
                       join(names, ", ") + ")");
    excluded[std::size_t(it - names.begin())] = true;
  }
  std::vector<float> data, labels, weights, row;
  TrainingRows rows;
  std::vector<KernelConfig> configs;
  std::map<std::string, int> group_of;
  for (const auto& s : samples) {
    const auto r = predict_measured(device, s, plain);
    if (!r) continue;
    learned_features(s.problem, s.config, *r, row);
    for (std::size_t f = 0; f < width; ++f)
      if (excluded[f]) row[f] = NAN;
    data.insert(data.end(), row.begin(), row.end());
    labels.push_back(float(std::log(s.time_s / r->time_s)));
    const std::string key = sample_key(s);
    const double behind = std::log(s.time_s / best[key]);
    const double own = sample_device(s, device).name == device.name ? options.own_device_weight : 1;
    weights.push_back(float(
        own * (1 + options.fast_weight * std::exp(-behind / options.fast_scale)) / count[key]));
    const auto [g, fresh] = group_of.emplace(key, int(rows.members.size()));
    if (fresh) rows.members.emplace_back();
    rows.members[g->second].push_back(int(rows.log_predicted.size()));
    rows.log_predicted.push_back(std::log(r->time_s));
    configs.push_back(s.config);
  }
  if (options.rank_weight > 0 && options.rank_step > 0)
    rows.steps = single_steps(rows.members, configs);
  if (options.center > 0)
    for (const auto& group : rows.members) {
      double sum = 0, total = 0;
      for (const int i : group) sum += double(weights[i]) * labels[i], total += weights[i];
      const float shift = float(options.center * sum / total);
      for (const int i : group) labels[i] -= shift;
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
      {"num_parallel_tree", std::to_string(options.parallel_trees)},
      {"seed", "0"},
      {"nthread", std::to_string(hardware_threads())},
      {"verbosity", "0"}};
  for (const auto& [key, value] : params)
    check(XGBoosterSetParam(b.h, key, value.c_str()), "parameter");
  if (options.rank_weight > 0) {
    rows.label = &labels;
    rows.weight = &weights;
    boost_with_ranking(b.h, m.h, rows, options);
  } else {
    for (int i = 0; i < options.rounds; ++i)
      check(XGBoosterUpdateOneIter(b.h, i, m.h), "training round");
  }
  bst_ulong length = 0;
  const char* buffer = nullptr;
  check(XGBoosterSaveModelToBuffer(b.h, R"({"format": "json"})", &length, &buffer), "save");
  return std::string(buffer, length);
}

}  // namespace gemmtune
