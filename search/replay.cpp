// ReplayEvaluator: recorded measurements stand in for the GPU.
#include <algorithm>
#include <chrono>
#include <thread>

#include "search/search.hpp"

namespace gemmtune {

ReplayEvaluator::ReplayEvaluator(DeviceSpec device, std::vector<Evaluation> recorded,
                                 double delay_s)
    : device_(std::move(device)), recorded_(std::move(recorded)), delay_s_(delay_s) {
  if (!(delay_s >= 0))
    throw InputError("a replay delay of " + std::to_string(delay_s) +
                     " s is invalid: it must be >= 0");
  index_.reserve(recorded_.size());
  for (size_t i = 0; i < recorded_.size(); ++i) index_.emplace_back(recorded_[i].config.id(), i);
  std::sort(index_.begin(), index_.end());
}

bool ReplayEvaluator::can_evaluate(const KernelConfig& c) const {
  const std::string id = c.id();
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(id, size_t(0)));
  return it != index_.end() && it->first == id;
}

const Evaluation& ReplayEvaluator::find(const KernelConfig& c) const {
  const std::string id = c.id();
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(id, size_t(0)));
  if (it == index_.end() || it->first != id)
    throw InputError("replay has no recorded measurement of " + id);
  return recorded_[it->second];
}

std::vector<CompiledInfo> ReplayEvaluator::compile(const Problem&,
                                                   const std::vector<KernelConfig>& configs) {
  std::vector<CompiledInfo> out;
  for (const auto& c : configs) {
    const Evaluation& e = find(c);
    out.push_back(e.status == "compile_error" ? CompiledInfo{}
                                              : CompiledInfo{e.registers, e.spill_bytes});
  }
  return out;
}

std::vector<Evaluation> ReplayEvaluator::measure(const Problem&,
                                                 const std::vector<KernelConfig>& configs) {
  std::vector<Evaluation> out;
  for (const auto& c : configs) {
    out.push_back(find(c));
    if (delay_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay_s_));
  }
  return out;
}

}  // namespace gemmtune
