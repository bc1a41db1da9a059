// The model's coefficients as a named, bounded vector (what the calibration moves) and as JSON
// (what the store keeps per device).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

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

double finite_number(const nlohmann::json& value, const std::string& name) {
  if (!value.is_number()) throw InputError("model coefficient '" + name + "' is not a number");
  const double v = value.get<double>();
  if (!std::isfinite(v)) throw InputError("model coefficient '" + name + "' is not finite");
  return v;
}

// {"offset": x, "offset_fp64": y, "tensor_core_level": z, "short_loop_level": g,
// "all": {feature: weight, ...},
// "fp64": {...}, "tensor_core": {...}, "short_loop": {...}}; a part or a feature left out weighs
// 0 (files written before the tensor-core or short-loop parts still read).
LogTimeCorrection correction_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError(std::string(kCorrectionKey) + " must be a JSON object");
  LogTimeCorrection k;
  const auto& names = correction_feature_names();
  for (const auto& [part, weights] : j.items()) {
    if (part == "offset" || part == "offset_fp64" || part == "tensor_core_level" ||
        part == "short_loop_level") {
      (part == "offset"              ? k.offset
       : part == "offset_fp64"       ? k.offset_fp64
       : part == "tensor_core_level" ? k.tensor_core_level
                                     : k.short_loop_level) =
          finite_number(weights, std::string(kCorrectionKey) + "." + part);
      continue;
    }
    if (part != "all" && part != "fp64" && part != "tensor_core" && part != "short_loop")
      throw InputError(std::string(kCorrectionKey) + " has an unknown part '" + part +
                       "' (expected offset, offset_fp64, tensor_core_level, short_loop_level, "
                       "all, fp64, tensor_core, short_loop)");
    if (!weights.is_object())
      throw InputError(std::string(kCorrectionKey) + "." + part + " must be a JSON object");
    auto& target = part == "all"           ? k.all
                   : part == "fp64"        ? k.fp64
                   : part == "tensor_core" ? k.tensor_core
                                           : k.short_loop;
    for (const auto& [name, value] : weights.items()) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end())
        throw InputError("unknown correction feature '" + name + "' in " + kCorrectionKey + "." +
                         part);
      target[size_t(it - names.begin())] =
          finite_number(value, std::string(kCorrectionKey) + "." + part + "." + name);
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

std::string coefficients_to_json(const ModelCoefficients& k) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& info : kInfo) j[info.name] = k.*info.member;
  if (!k.correction.empty()) {
    nlohmann::json all = nlohmann::json::object(), fp64 = nlohmann::json::object(),
                   tensor_core = nlohmann::json::object(), short_loop = nlohmann::json::object();
    for (size_t i = 0; i < size_t(kCorrectionFeatureCount); ++i) {
      all[correction_feature_names()[i]] = k.correction.all[i];
      fp64[correction_feature_names()[i]] = k.correction.fp64[i];
      tensor_core[correction_feature_names()[i]] = k.correction.tensor_core[i];
      short_loop[correction_feature_names()[i]] = k.correction.short_loop[i];
    }
    j[kCorrectionKey] = {{"offset", k.correction.offset},
                         {"offset_fp64", k.correction.offset_fp64},
                         {"tensor_core_level", k.correction.tensor_core_level},
                         {"short_loop_level", k.correction.short_loop_level},
                         {"all", all},
                         {"fp64", fp64},
                         {"tensor_core", tensor_core},
                         {"short_loop", short_loop}};
  }
  return j.dump(2);
}

ModelCoefficients coefficients_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("model coefficients are not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("model coefficients must be a JSON object");
  ModelCoefficients k;
  for (const auto& [name, value] : j.items()) {
    if (name == kCorrectionKey) {
      k.correction = correction_from_json(value);
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
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the calibration file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return coefficients_from_json(text.str());
}

}  // namespace gemmtune
