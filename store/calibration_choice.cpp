// Which calibration ranks: none, a named file, or (auto) the store's, else the shipped one.
#include "store/store.hpp"

namespace gemmtune {
namespace {

std::string model_tag() {
  return " (model v" + std::to_string(kModelVersion) + ")";
}

// "2026-11-22T10:15:00Z" as "2026-11-22 10:15:00 UTC"; anything else as it is.
std::string readable_time(std::string t) {
  if (t.size() == 20 && t[10] == 'T' && t.back() == 'Z') {
    t[10] = ' ';
    t.back() = ' ';
    t += "UTC";
  }
  return t;
}

// Auto mode: a refused calibration is a warning, and the model runs uncalibrated.
ChosenCalibration refused(const std::string& what, const InputError& e) {
  return {ModelCoefficients{}, "none (" + what + " was refused)",
          std::string(e.what()) + "; ranking with the uncalibrated model"};
}

}  // namespace

ChosenCalibration choose_calibration(const std::string& source, const std::string& device_name,
                                     const Database* store) {
  if (source.empty()) throw InputError("--calibration is empty; give auto, none or a JSON file");
  if (source == "none") return {ModelCoefficients{}, "none", ""};
  if (source != "auto") return {coefficients_from_file(source), "file " + source + model_tag(), ""};
  if (store) {
    if (const auto stored = store->latest_calibration(device_name)) {
      const std::string what =
          "store calibration of " + readable_time(stored->created_at) + " for " + device_name;
      try {
        return {coefficients_from_json(stored->json, "the " + what), what + model_tag(), ""};
      } catch (const InputError& e) {
        return refused("the " + what, e);
      }
    }
  }
  if (const auto shipped = shipped_calibration(device_name)) {
    const std::string file = "calibrations/" + shipped->spec_name + ".json";
    try {
      return {coefficients_from_json(shipped->json, file),
              "shipped calibration for " + shipped->spec_name + model_tag(), ""};
    } catch (const InputError& e) {
      return refused("the shipped " + file, e);
    }
  }
  return {ModelCoefficients{}, "none (no calibration stored or shipped for " + device_name + ")",
          ""};
}

}  // namespace gemmtune
