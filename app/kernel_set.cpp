// kernel-set: the time matrix of a workload's problems and candidate kernels, and its best set.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "app/app.hpp"

namespace gemmtune::app {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A compiled kernel's registers depend on its configuration, precision and ops only.
std::string kernel_key(const Problem& p, const KernelConfig& c) {
  return std::string{to_char(p.precision), to_char(p.op_a), to_char(p.op_b), ' '} + c.id();
}

struct Matrix {
  std::vector<std::optional<KernelConfig>> picks;  // the model's, per problem
  std::vector<KernelConfig> candidates;
  std::vector<std::vector<double>> times;
  std::vector<std::vector<bool>> predicted;
};

// Per problem, the fastest ok median of each configuration the store has on this device; a
// configuration whose every attempt failed (any status but ok: it did not compile, launch, finish
// in time or verify) as infinity, so that it is no choice there.
std::vector<std::map<std::string, double>> measured_times(const Database& db,
                                                          const std::vector<WorkloadEntry>& w,
                                                          const DeviceSpec& d,
                                                          std::map<std::string, int>& registers) {
  std::vector<std::map<std::string, double>> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    for (const Attempt& a : db.attempts("", w[i].problem)) {
      if (spec_name_of(a.device) != d.name) continue;
      const double t = a.status == "ok" && a.median_s > 0 ? a.median_s : kInf;
      auto [it, fresh] = out[i].emplace(a.config.id(), t);
      if (!fresh) it->second = std::min(it->second, t);
      if (a.registers > 0) registers[kernel_key(w[i].problem, a.config)] = a.registers;
    }
  }
  return out;
}

Matrix build_matrix(const KernelSetRequest& r, const Database& db, const DeviceSpec& d,
                    const ModelCoefficients& coefficients) {
  std::map<std::string, int> registers;
  const auto measured = measured_times(db, r.workload, d, registers);
  Matrix m;
  std::map<std::string, size_t> index;
  auto add = [&](const KernelConfig& c) {
    if (index.emplace(c.id(), m.candidates.size()).second) m.candidates.push_back(c);
  };
  for (size_t i = 0; i < r.workload.size(); ++i) {
    const Problem& p = r.workload[i].problem;
    std::vector<std::pair<double, std::string>> fastest;
    for (const auto& [id, t] : measured[i])
      if (std::isfinite(t)) fastest.emplace_back(t, id);
    std::sort(fastest.begin(), fastest.end());
    if (fastest.size() > size_t(r.candidates)) fastest.resize(size_t(r.candidates));
    for (const auto& f : fastest) add(KernelConfig::parse(f.second));
    if (!r.model_picks.empty()) {
      m.picks.push_back(r.model_picks[i]);
    } else {
      const Ranking ranked = rank_space(p, d, 1, coefficients, SpaceDomain::named(r.domain));
      m.picks.push_back(ranked.top.empty() ? std::nullopt
                                           : std::optional(ranked.top.front().config));
    }
    if (m.picks.back())
      add(*m.picks.back());
    else if (fastest.empty())
      throw InputError("problem " + p.shape_id() + " has no measurement on " + d.name +
                       " in the store and no configuration of the model's space can run it");
  }
  auto model_time = [&](const Problem& p, const KernelConfig& c) {
    const auto reg = registers.find(kernel_key(p, c));
    return predict(p, d, c, coefficients, reg == registers.end() ? -1 : reg->second).time_s;
  };
  for (size_t i = 0; i < r.workload.size(); ++i) {
    const Problem& p = r.workload[i].problem;
    std::vector<double> row(m.candidates.size(), kInf), ratios;
    std::vector<bool> guessed(m.candidates.size(), false);
    for (size_t c = 0; c < m.candidates.size(); ++c) {
      const auto t = measured[i].find(m.candidates[c].id());
      if (t != measured[i].end()) {
        row[c] = t->second;
        if (std::isfinite(t->second)) ratios.push_back(t->second / model_time(p, m.candidates[c]));
      } else if (!check_hard(p, d, m.candidates[c])) {
        row[c] = model_time(p, m.candidates[c]);
        guessed[c] = true;
      }
    }
    // The model's bias on this problem, as its measured kernels show it.
    double scale = 1;
    if (!ratios.empty()) {
      std::nth_element(ratios.begin(), ratios.begin() + long(ratios.size() / 2), ratios.end());
      scale = ratios[ratios.size() / 2];
    }
    for (size_t c = 0; c < row.size(); ++c)
      if (guessed[c]) row[c] *= scale;
    if (std::none_of(row.begin(), row.end(), [](double t) { return std::isfinite(t); }))
      throw InputError("problem " + p.shape_id() + ": every candidate kernel failed on " + d.name +
                       " or cannot run it; tune it first or leave it out of the workload");
    m.times.push_back(std::move(row));
    m.predicted.push_back(std::move(guessed));
  }
  return m;
}

}  // namespace

KernelSetResult kernel_set(const KernelSetRequest& r) {
  if (r.size < 1)
    throw InputError("--size " + std::to_string(r.size) + ": a kernel set needs at least 1 kernel");
  if (r.candidates < 1)
    throw InputError("--candidates " + std::to_string(r.candidates) + ": it must be >= 1");
  if (r.workload.empty()) throw InputError("the workload holds no problem");
  if (!r.model_picks.empty() && r.model_picks.size() != r.workload.size())
    throw InputError(std::to_string(r.model_picks.size()) + " model picks for " +
                     std::to_string(r.workload.size()) + " problems: give one per problem or none");
  if (!std::filesystem::exists(r.db)) throw InputError("no store at '" + r.db + "'");
  const Database db(r.db);
  KernelSetResult out;
  out.device = device_named(r.gpu);
  out.calibration = calibration_for(r.db, out.device.name, r.calibration);
  const Matrix m = build_matrix(r, db, out.device, out.calibration.coefficients);
  out.candidates = m.candidates.size();
  out.model_picks = m.picks;
  std::vector<double> weights;
  for (const auto& e : r.workload) weights.push_back(e.weight);
  const KernelSet set = choose_kernel_set(weights, m.times, r.size);
  for (size_t c : set.members) out.members.push_back(m.candidates[c]);
  out.serves.assign(set.members.size(), 0);
  out.total_s = set.total;
  for (size_t i = 0; i < r.workload.size(); ++i) {
    const auto& row = m.times[i];
    const size_t best = size_t(std::min_element(row.begin(), row.end()) - row.begin());
    KernelSetRow x{
        r.workload[i], std::nullopt, {}, m.candidates[best], {row[best], m.predicted[i][best]}, {}};
    const size_t c = set.choice[i];
    if (std::isfinite(row[c])) {
      x.kernel = m.candidates[c];
      x.time = {row[c], m.predicted[i][c]};
      ++out.serves[size_t(std::find(set.members.begin(), set.members.end(), c) -
                          set.members.begin())];
    } else {
      ++out.uncovered;
    }
    for (size_t member : set.members) x.members.push_back({row[member], m.predicted[i][member]});
    out.best_total_s += r.workload[i].weight * row[best];
    out.rows.push_back(std::move(x));
  }
  return out;
}

std::vector<std::vector<KernelConfig>> predicted_pairs(const KernelSetResult& r) {
  std::vector<std::vector<KernelConfig>> out;
  for (const KernelSetRow& x : r.rows) {
    std::vector<KernelConfig> pairs;
    for (size_t j = 0; j < r.members.size(); ++j)
      if (x.members[j].predicted) pairs.push_back(r.members[j]);
    if (x.best.predicted && std::find(pairs.begin(), pairs.end(), x.best_kernel) == pairs.end())
      pairs.push_back(x.best_kernel);
    out.push_back(std::move(pairs));
  }
  return out;
}

nlohmann::json to_json(const KernelSetResult& r) {
  nlohmann::json members = nlohmann::json::array(), rows = nlohmann::json::array();
  for (size_t i = 0; i < r.members.size(); ++i)
    members.push_back({{"config", r.members[i].id()}, {"problems", r.serves[i]}});
  for (const KernelSetRow& x : r.rows) {
    nlohmann::json members_us = nlohmann::json::array();
    for (const KernelTime& t : x.members)
      members_us.push_back(std::isfinite(t.seconds)
                               ? nlohmann::json{{"us", t.seconds * 1e6}, {"predicted", t.predicted}}
                               : nlohmann::json(nullptr));
    nlohmann::json row = {{"problem", x.entry.problem.shape_id()},
                          {"weight", x.entry.weight},
                          {"kernel", x.kernel ? nlohmann::json(x.kernel->id()) : nullptr},
                          {"time_us", x.kernel ? nlohmann::json(x.time.seconds * 1e6) : nullptr},
                          {"predicted", x.time.predicted},
                          {"best_kernel", x.best_kernel.id()},
                          {"best_us", x.best.seconds * 1e6},
                          {"best_predicted", x.best.predicted},
                          {"loss", x.kernel ? nlohmann::json(x.loss()) : nullptr},
                          {"members", members_us}};
    rows.push_back(std::move(row));
  }
  return {{"device", r.device.name},
          {"calibration", r.calibration.description},
          {"size", r.members.size()},
          {"candidates", r.candidates},
          {"members", members},
          {"problems", rows},
          {"weighted_total_us", r.total_s * 1e6},
          {"best_total_us", r.best_total_s * 1e6},
          {"loss", r.best_total_s > 0 ? r.total_s / r.best_total_s : 0.0},
          {"uncovered", r.uncovered}};
}

}  // namespace gemmtune::app
