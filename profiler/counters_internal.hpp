// Internal to profiler: RAII owners of the CUPTI profiler objects, shared by the host side
// (no GPU) and the target side (collection in a CUDA context).
#pragma once

#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/profiler.hpp"

namespace gemmtune::cupti {

// A CUPTI parameter struct, zeroed, with its size set (pPriv stays null).
template <typename T>
T params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

std::string result_text(CUptiResult r);       // CUPTI's message, with what to do for the usual ones
void check(CUptiResult r, const char* what);  // throws CounterError

// A host object for one chip: metric names, configuration images, evaluation.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability);
  ~HostObject();
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  std::vector<std::string> base_metrics() const;
  std::optional<CUpti_MetricType> metric_type(const std::string& base) const;
  std::vector<std::string> submetrics(const std::string& base, CUpti_MetricType type) const;
  std::vector<std::uint8_t> config_image(const std::vector<std::string>& metrics);
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, size_t range,
                               const std::vector<std::string>& metrics);

 private:
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

int passes(std::vector<std::uint8_t>& config_image);

}  // namespace gemmtune::cupti
