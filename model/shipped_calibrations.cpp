// The calibrations shipped in the binary: calibrations/<spec name>.json, embedded at build time
// (model/embed_calibrations.cmake), found by the spec a device name means (spec_name_of).
#include <algorithm>
#include <utility>

#include "model/model.hpp"

namespace gemmtune {

// Defined in the generated embedded_calibrations.cpp: (spec name, JSON text) per file.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_calibrations();

std::optional<ShippedCalibration> shipped_calibration(std::string_view device_name) {
  const std::string spec = spec_name_of(device_name);
  if (spec.empty()) return std::nullopt;
  for (const auto& [name, json] : embedded_calibrations())
    if (name == spec) return ShippedCalibration{spec, std::string(json)};
  return std::nullopt;
}

std::vector<std::string> shipped_calibration_names() {
  std::vector<std::string> names;
  for (const auto& [name, json] : embedded_calibrations()) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gemmtune
