// Rankings that know what the compiler made of each configuration: its registers and spills.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "search/search.hpp"

namespace gemmtune {
namespace {

// A kernel the compiler spilled this much of to local memory is not the kernel the model
// describes: its time goes to local-memory traffic (one 6144x6080x64 SGEMM tiling came out with
// 32 registers and 41 KB of spills per thread, 40x slower than predicted).
// A lighter spill keeps a kernel a candidate, behind every one that does not spill
// (CompiledStanding).
constexpr int kMaxSpillBytes = 128;

}  // namespace

std::optional<double> predict_compiled(const Problem& p, const DeviceSpec& d, const KernelConfig& c,
                                       const CompiledInfo& info, const ModelCoefficients& k) {
  if (!info.ok() || info.spill_bytes > kMaxSpillBytes) return std::nullopt;
  try {
    return predict(p, d, c, k, info.registers > 0 ? info.registers : -1).time_s;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::optional<CompiledStanding> compiled_standing(const Problem& p, const DeviceSpec& d,
                                                  const KernelConfig& c, const CompiledInfo& info,
                                                  const ModelCoefficients& k) {
  if (const auto t = predict_compiled(p, d, c, info, k))
    return CompiledStanding::of(info.spill_bytes, *t);
  return std::nullopt;
}

std::vector<std::pair<CompiledStanding, size_t>> compiled_ranking(
    const Problem& p, const DeviceSpec& d, const std::vector<KernelConfig>& configs,
    const std::vector<CompiledInfo>& compiled, const ModelCoefficients& k) {
  if (compiled.size() != configs.size())
    throw std::logic_error("compiled_ranking: " + std::to_string(compiled.size()) +
                           " compiler results for " + std::to_string(configs.size()) +
                           " configurations");
  std::vector<std::pair<CompiledStanding, size_t>> order;
  for (size_t i = 0; i < configs.size(); ++i)
    if (const auto standing = compiled_standing(p, d, configs[i], compiled[i], k))
      order.emplace_back(*standing, i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return order;
}

std::vector<size_t> compiled_order(const Problem& p, const DeviceSpec& d,
                                   const std::vector<KernelConfig>& configs,
                                   const std::vector<CompiledInfo>& compiled,
                                   const ModelCoefficients& k) {
  std::vector<size_t> out;
  for (const auto& [standing, i] : compiled_ranking(p, d, configs, compiled, k)) out.push_back(i);
  return out;
}

std::vector<KernelConfig> rank_compiled(const Problem& p, const DeviceSpec& d,
                                        const std::vector<KernelConfig>& configs,
                                        const std::vector<CompiledInfo>& compiled,
                                        const ModelCoefficients& k) {
  std::vector<KernelConfig> out;
  for (const size_t i : compiled_order(p, d, configs, compiled, k)) out.push_back(configs[i]);
  return out;
}

}  // namespace gemmtune
