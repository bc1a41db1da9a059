// Evaluation -> Attempt: what a tuning run stores for each measurement.
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <map>

#include "model/model.hpp"
#include "store/store.hpp"

namespace gemmtune {

Attempt attempt_from(const Evaluation& e, const Problem& p, const DeviceSpec& device) {
  Attempt a;
  a.device = device.name;
  a.problem = p;
  a.config = e.config;
  a.status = e.status;
  a.error = e.error;
  a.median_s = e.time_s;
  a.min_s = e.min_s;
  a.max_s = e.max_s;
  a.repetitions = e.repetitions;
  a.gflops = e.ok() && e.time_s > 0 ? p.flops() / e.time_s * 1e-9 : 0;
  a.rel_error = e.rel_error;
  a.registers = e.registers;
  a.spill_bytes = e.spill_bytes;
  a.smem_bytes = shared_bytes(e.config, p.precision);
  a.energy_j = e.energy_j;
  a.counters_json = e.counters_json;
  try {
    a.predicted_s = predict(p, device, e.config, {}, e.registers > 0 ? e.registers : -1).time_s;
  } catch (const InputError&) {
    // The compiled kernel cannot be resident with its real registers: no prediction to keep.
  }
  return a;
}

TuningRun::TuningRun(std::string strategy) : strategy_(std::move(strategy)) {
  // Unique across processes (start time, process id) and within one (a counter).
  static std::atomic<int> count{0};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  id_ = std::string(stamp) + "-" + std::to_string(getpid()) + "-" + std::to_string(++count);
}

Attempt TuningRun::attempt(const Evaluation& e, const Problem& problem,
                           const DeviceSpec& device) const {
  Attempt a = attempt_from(e, problem, device);
  a.strategy = strategy_;
  a.run = id_;
  a.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return a;
}

Evaluation evaluation_from(const Attempt& a) {
  Evaluation e;
  e.config = a.config;
  e.status = a.status;
  e.error = a.error;
  e.time_s = a.median_s;
  e.min_s = a.min_s;
  e.max_s = a.max_s;
  e.repetitions = a.repetitions;
  e.rel_error = a.rel_error;
  e.registers = a.registers;
  e.spill_bytes = a.spill_bytes;
  e.energy_j = a.energy_j;
  e.counters_json = a.counters_json;
  return e;
}

std::vector<CalibrationSample> calibration_samples(const std::vector<Attempt>& attempts) {
  // A configuration measured again (a resumed tune, a sample that drew the tune's pick) is one
  // sample at the median of its times, so that it weighs once in a fit.
  std::vector<CalibrationSample> out;
  std::vector<std::vector<double>> times;
  std::map<std::string, std::size_t> index;
  // Each recorded device name to its built-in spec (null where none matches).
  std::map<std::string, std::shared_ptr<const DeviceSpec>> specs;
  for (const auto& a : attempts) {
    if (a.status != "ok" || !(a.median_s > 0)) continue;
    const auto [spec, unseen] = specs.emplace(a.device, nullptr);
    if (unseen) {
      const std::string name = spec_name_of(a.device);
      if (!name.empty())
        spec->second = std::make_shared<const DeviceSpec>(find_builtin_device(name));
    }
    const auto [it, fresh] =
        index.emplace(a.device + " " + problem_key(a.problem) + " " + a.config.id(), out.size());
    if (fresh) {
      out.push_back(
          {a.problem, a.config, a.registers > 0 ? a.registers : -1, a.median_s, spec->second});
      out.back().spill_bytes = a.spill_bytes;
      times.emplace_back();
    }
    times[it->second].push_back(a.median_s);
    out[it->second].drawn = out[it->second].drawn || a.strategy == kDrawnStrategy;
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].time_s = quantile(times[i], 0.5);
  return out;
}

std::map<std::string, Recording> recordings_by_problem(const std::vector<Attempt>& attempts) {
  std::map<std::string, Recording> out;
  for (const Attempt& a : attempts) {
    Recording& r = out[a.problem.shape_id() + "_" + std::to_string(a.problem.lda)];
    r.problem = a.problem;
    r.evaluations.push_back(evaluation_from(a));
  }
  return out;
}

}  // namespace gemmtune
