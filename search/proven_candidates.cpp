// The calibration's proven kernels as candidates beside the space's shortlist.
#include <algorithm>
#include <set>
#include <utility>

#include "search/search.hpp"

namespace gemmtune {

std::vector<KernelConfig> with_proven(const Problem& problem, const DeviceSpec& device,
                                      const ModelCoefficients& coefficients,
                                      std::vector<KernelConfig> ranked) {
  std::set<std::string> have;
  for (const auto& c : ranked) have.insert(c.id());
  std::vector<std::pair<double, KernelConfig>> proven;
  for (const auto& x : coefficients.proven) {
    if (x.precision != problem.precision || have.count(x.config.id())) continue;
    if (check_hard(problem, device, x.config)) continue;
    try {
      proven.emplace_back(predict(problem, device, x.config, coefficients).time_s, x.config);
    } catch (const InputError&) {
      continue;  // no block of it fits this device
    }
    have.insert(x.config.id());
  }
  std::stable_sort(proven.begin(), proven.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (proven.size() > size_t(kProvenCandidates)) proven.resize(size_t(kProvenCandidates));
  for (auto& [t, c] : proven) ranked.push_back(std::move(c));
  return ranked;
}

}  // namespace gemmtune
