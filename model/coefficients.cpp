// The model's coefficients as a named, bounded vector (what the calibration moves) and as JSON
// (what the store keeps per device).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "model/model.hpp"

namespace gemmtune {
namespace {

// One table: name, member, lower and upper bound. The bounds keep each coefficient physical.
struct CoefficientInfo {
  const char* name;
  double ModelCoefficients::*member;
  double lower, upper;
};

constexpr std::array<CoefficientInfo, kCoefficientCount> kInfo{{
    {"fma_efficiency", &ModelCoefficients::fma_efficiency, 0.5, 1.0},
    {"smem_efficiency", &ModelCoefficients::smem_efficiency, 0.3, 1.0},
    {"issue_efficiency", &ModelCoefficients::issue_efficiency, 0.5, 1.0},
    {"instr_per_global_load", &ModelCoefficients::instr_per_global_load, 1, 8},
    {"loop_instr_per_step", &ModelCoefficients::loop_instr_per_step, 1, 8},
    {"dram_efficiency", &ModelCoefficients::dram_efficiency, 0.4, 1.0},
    {"l2_bytes_per_clock_sm", &ModelCoefficients::l2_bytes_per_clock_sm, 16, 128},
    {"mem_latency_cycles", &ModelCoefficients::mem_latency_cycles, 200, 2000},
    {"sync_cycles", &ModelCoefficients::sync_cycles, 10, 200},
    {"warps_to_saturate", &ModelCoefficients::warps_to_saturate, 2, 32},
    {"launch_us", &ModelCoefficients::launch_us, 1, 10},
    {"epilogue_cycles_per_elem", &ModelCoefficients::epilogue_cycles_per_elem, 0, 20},
    {"store_bytes_per_clock_sm", &ModelCoefficients::store_bytes_per_clock_sm, 2, 64},
}};

constexpr const char* kCorrectionKey = "log_time_correction";
constexpr const char* kVersionKey = "model_version";
constexpr const char* kLearnedKey = "learned_correction";
constexpr const char* kLearnedReducedKey = "learned_correction_fp16_bf16_tf32";
// {"s": [configuration id, ...], "d": [...], ...}: the proven kernels by precision.
constexpr const char* kProvenKey = "proven_kernels";

double finite_number(const nlohmann::json& value, const std::string& name) {
  if (!value.is_number()) throw InputError("model coefficient '" + name + "' is not a number");
  const double v = value.get<double>();
  if (!std::isfinite(v)) throw InputError("model coefficient '" + name + "' is not finite");
  return v;
}

// The correction's parts in JSON: levels (one number each) and weight groups (feature: weight).
// A part or a feature left out weighs 0, so files written before the tensor-core or short-loop
// parts still read.
using Weights = std::array<double, kCorrectionFeatureCount>;
constexpr std::array<std::pair<const char*, double LogTimeCorrection::*>, 4> kLevelParts{{
    {"offset", &LogTimeCorrection::offset},
    {"offset_fp64", &LogTimeCorrection::offset_fp64},
    {"tensor_core_level", &LogTimeCorrection::tensor_core_level},
    {"short_loop_level", &LogTimeCorrection::short_loop_level},
}};
constexpr std::array<std::pair<const char*, Weights LogTimeCorrection::*>, 4> kWeightParts{{
    {"all", &LogTimeCorrection::all},
    {"fp64", &LogTimeCorrection::fp64},
    {"tensor_core", &LogTimeCorrection::tensor_core},
    {"short_loop", &LogTimeCorrection::short_loop},
}};

// A feature this model does not compute: a sign of an older model's file when it has no version.
struct UnknownFeature : InputError {
  using InputError::InputError;
};

// "model_version" when present (a positive integer), else the current version: a file written
// before versions were recorded still reads when its features are this model's.
int model_version(const nlohmann::json& j) {
  const auto it = j.find(kVersionKey);
  if (it == j.end()) return kModelVersion;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1)
    throw InputError(std::string(kVersionKey) + " must be a positive integer, not " + it->dump());
  return int(std::min<std::int64_t>(it->get<std::int64_t>(), 1 << 30));
}

std::string version_refusal(const std::string& origin, int version) {
  return origin + " was fitted for model version " + std::to_string(version) +
         ", this gemmtune's model is version " + std::to_string(kModelVersion);
}

LogTimeCorrection correction_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError(std::string(kCorrectionKey) + " must be a JSON object");
  LogTimeCorrection k;
  const auto& names = correction_feature_names();
  const auto named = [&](const auto& parts, const std::string& part) {
    return std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return part == p.first; });
  };
  for (const auto& [part, value] : j.items()) {
    const std::string where = std::string(kCorrectionKey) + "." + part;
    if (const auto level = named(kLevelParts, part); level != kLevelParts.end()) {
      k.*level->second = finite_number(value, where);
      continue;
    }
    const auto group = named(kWeightParts, part);
    if (group == kWeightParts.end()) {
      std::string expected;
      for (const auto& p : kLevelParts)
        expected += std::string(expected.empty() ? "" : ", ") + p.first;
      for (const auto& p : kWeightParts) expected += std::string(", ") + p.first;
      throw InputError(std::string(kCorrectionKey) + " has an unknown part '" + part +
                       "' (expected " + expected + ")");
    }
    if (!value.is_object()) throw InputError(where + " must be a JSON object");
    Weights& target = k.*group->second;
    for (const auto& [name, weight] : value.items()) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end())
        throw UnknownFeature("unknown correction feature '" + name + "' in " + where);
      target[size_t(it - names.begin())] = finite_number(weight, where + "." + name);
    }
  }
  return k;
}

}  // namespace

const std::array<const char*, kCoefficientCount>& coefficient_names() {
  static const auto names = [] {
    std::array<const char*, kCoefficientCount> n{};
    for (int i = 0; i < kCoefficientCount; ++i) n[size_t(i)] = kInfo[size_t(i)].name;
    return n;
  }();
  return names;
}

std::array<double, kCoefficientCount> to_array(const ModelCoefficients& k) {
  std::array<double, kCoefficientCount> v{};
  for (size_t i = 0; i < v.size(); ++i) v[i] = k.*kInfo[i].member;
  return v;
}

ModelCoefficients from_array(const std::array<double, kCoefficientCount>& v) {
  ModelCoefficients k;
  for (size_t i = 0; i < v.size(); ++i) k.*kInfo[i].member = v[i];
  return k;
}

std::array<double, kCoefficientCount> coefficient_lower_bounds() {
  std::array<double, kCoefficientCount> v{};
  for (size_t i = 0; i < v.size(); ++i) v[i] = kInfo[i].lower;
  return v;
}

std::array<double, kCoefficientCount> coefficient_upper_bounds() {
  std::array<double, kCoefficientCount> v{};
  for (size_t i = 0; i < v.size(); ++i) v[i] = kInfo[i].upper;
  return v;
}

namespace {

std::vector<ProvenKernel> proven_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    throw InputError(std::string(kProvenKey) + " must be an object of precisions' lists");
  std::vector<ProvenKernel> out;
  for (const auto& [letter, ids] : j.items()) {
    const Precision p = parse_precision(letter);
    if (!ids.is_array())
      throw InputError(std::string(kProvenKey) + "." + letter + " must be a list of ids");
    for (const auto& id : ids) {
      if (!id.is_string())
        throw InputError(std::string(kProvenKey) + "." + letter + " holds " + id.dump() +
                         ", not a configuration id");
      out.push_back({p, KernelConfig::parse(id.get<std::string>())});
    }
  }
  return out;
}

}  // namespace

std::string coefficients_to_json(const ModelCoefficients& k) {
  nlohmann::json j = nlohmann::json::object();
  j[kVersionKey] = kModelVersion;
  for (const auto& info : kInfo) j[info.name] = k.*info.member;
  if (!k.correction.empty()) {
    nlohmann::json& correction = j[kCorrectionKey] = nlohmann::json::object();
    for (const auto& [name, member] : kLevelParts) correction[name] = k.correction.*member;
    for (const auto& [name, member] : kWeightParts) {
      nlohmann::json& weights = correction[name] = nlohmann::json::object();
      for (size_t i = 0; i < size_t(kCorrectionFeatureCount); ++i)
        weights[correction_feature_names()[i]] = (k.correction.*member)[i];
    }
  }
  // XGBoost's model as one compact string: indented, its node arrays would triple the file.
  if (!k.learned.empty()) j[kLearnedKey] = k.learned.json;
  if (!k.learned_reduced.empty()) j[kLearnedReducedKey] = k.learned_reduced.json;
  if (!k.proven.empty()) {
    nlohmann::json& proven = j[kProvenKey] = nlohmann::json::object();
    for (const auto& x : k.proven)
      proven[std::string(1, char(std::tolower(to_char(x.precision))))].push_back(x.config.id());
  }
  return j.dump(2);
}

ModelCoefficients coefficients_from_json(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("model coefficients are not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("model coefficients must be a JSON object");
  const int version = model_version(j);
  if (version != kModelVersion) throw InputError(version_refusal(origin, version));
  ModelCoefficients k;
  for (const auto& [name, value] : j.items()) {
    if (name == kVersionKey) continue;
    if (name == kCorrectionKey) {
      // Without a version, the feature names are what tells an older model's file apart.
      try {
        k.correction = correction_from_json(value);
      } catch (const UnknownFeature& e) {
        if (j.contains(kVersionKey)) throw;
        throw InputError(std::string(e.what()) + ": " +
                         version_refusal(origin, kUnversionedModelVersion) +
                         " (it records no model_version)");
      }
      continue;
    }
    if (name == kProvenKey) {
      k.proven = proven_from_json(value);
      continue;
    }
    if (name == kLearnedKey || name == kLearnedReducedKey) {
      (name == kLearnedKey ? k.learned : k.learned_reduced) = TreeEnsemble::from_xgboost_json(
          value.is_string() ? value.get<std::string>() : value.dump());
      continue;
    }
    const auto it = std::find_if(kInfo.begin(), kInfo.end(),
                                 [&](const CoefficientInfo& i) { return name == i.name; });
    if (it == kInfo.end()) throw InputError("unknown model coefficient '" + name + "'");
    const double v = finite_number(value, name);
    if (!(v >= it->lower && v <= it->upper))
      throw InputError("model coefficient " + name + " = " + std::to_string(v) + " is outside [" +
                       std::to_string(it->lower) + ", " + std::to_string(it->upper) + "]");
    k.*it->member = v;
  }
  return k;
}

ModelCoefficients coefficients_from_file(const std::string& path) {
  return coefficients_from_json(read_text_file(path, "calibration file"), path);
}

}  // namespace gemmtune
