// The kernels a calibration's measurements proved fast: each recorded problem's near-fastest.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "model/model.hpp"

namespace gemmtune {

std::vector<ProvenKernel> proven_kernels(const std::vector<CalibrationSample>& samples,
                                         const std::vector<ProvenKernel>& also) {
  std::map<std::string, std::vector<const CalibrationSample*>> by_problem;
  for (const auto& s : samples)
    if (s.time_s > 0) by_problem[sample_key(s)].push_back(&s);
  std::vector<ProvenKernel> out;
  std::set<std::pair<Precision, std::string>> seen;
  for (auto& [key, v] : by_problem) {
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->time_s < b->time_s; });
    const double limit = v.front()->time_s * (1 + kProvenWithin);
    for (size_t i = 0; i < v.size() && i < size_t(kProvenPerProblem) && v[i]->time_s <= limit;
         ++i) {
      const Precision p = v[i]->problem.precision;
      if (seen.insert({p, v[i]->config.id()}).second) out.push_back({p, v[i]->config});
    }
  }
  for (const auto& x : also)
    if (seen.insert({x.precision, x.config.id()}).second) out.push_back(x);
  // In the order a calibration file reads them back: by precision letter, stably.
  std::stable_sort(out.begin(), out.end(), [](const ProvenKernel& a, const ProvenKernel& b) {
    return to_char(a.precision) < to_char(b.precision);
  });
  return out;
}

}  // namespace gemmtune
