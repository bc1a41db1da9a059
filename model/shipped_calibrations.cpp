// The calibrations shipped in the binary: calibrations/<spec name>.json, embedded at build time
// (model/embed_calibrations.cmake), found by spec name or by the driver's name for the GPU.
#include <algorithm>
#include <cctype>
#include <utility>

#include "model/model.hpp"

namespace gemmtune {

// Defined in the generated embedded_calibrations.cpp: (spec name, JSON text) per file.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_calibrations();

namespace {

// Names as the CUDA driver reports them (cudaDeviceProp::name, which query_local_device keeps)
// for the parts a built-in spec describes; other variants (H100 NVL, A100 40GB) are not these
// specs, so they get no shipped calibration.
constexpr std::pair<const char*, const char*> kDriverNames[] = {
    {"NVIDIA H100 80GB HBM3", "H100-SXM"},
    {"NVIDIA H100 PCIe", "H100-PCIe"},
    {"NVIDIA H200", "H200"},
    {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
    {"Tesla V100-SXM2-16GB", "V100-SXM2"},
    {"Tesla V100-SXM2-32GB", "V100-SXM2"},
    {"NVIDIA GeForce RTX 4090", "RTX4090"},
    {"NVIDIA GeForce GTX 1060 6GB", "GTX1060"},
};

// Case, spaces, '-' and '_' do not tell names apart (as find_builtin_device compares them).
std::string squash(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string spec_name_of(std::string_view device_name) {
  const std::string wanted = squash(device_name);
  for (const auto& [driver, spec] : kDriverNames)
    if (squash(driver) == wanted) return spec;
  try {
    return find_builtin_device(device_name).name;
  } catch (const InputError&) {
    return "";
  }
}

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
