// Which kernel a call gets: stored best, a neighbour's tuned kernel, or the model's pick.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include "runtime/runtime.hpp"
#include "runtime/shape_distance.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune {

const char* to_string(DispatchSource s) {
  switch (s) {
    case DispatchSource::Stored:
      return "stored";
    case DispatchSource::NearestShape:
      return "nearest tuned shape";
    case DispatchSource::Model:
      return "model";
    case DispatchSource::Measured:
      return "measured on the batch";
  }
  return "?";
}

namespace {

constexpr size_t kNeighbours = 4;  // tuned shapes whose kernels compete for an untuned one
// A neighbour's fastest attempts: where the model's pick is looked for.
constexpr size_t kAnchorAttempts = 32;

bool same_shape(const Problem& a, const Problem& b) {
  return a.precision == b.precision && a.op_a == b.op_a && a.op_b == b.op_b && a.m == b.m &&
         a.n == b.n && a.k == b.k && a.lda == b.lda && a.ldb == b.ldb && a.ldc == b.ldc &&
         a.batch == b.batch;
}

// A tuned neighbour: its fastest attempts (fastest first) and the model's measured/predicted
// ratio of each.
struct Neighbour {
  Problem problem;
  std::vector<Attempt> fastest;
  std::vector<double> ratios;
};

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

int registers_of(const Attempt& a) {
  return a.registers > 0 ? a.registers : -1;
}

std::vector<Neighbour> neighbours_of(const Problem& p, const DeviceSpec& d, const Database& db,
                                     const ModelCoefficients& k) {
  std::vector<std::pair<double, Problem>> near;
  for (const Problem& q : db.problems(d.name))
    if (q.precision == p.precision && q.op_a == p.op_a && q.op_b == p.op_b)
      near.emplace_back(detail::shape_distance(p, q), q);
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Neighbour> out;
  for (const auto& [distance, q] : near) {
    if (out.size() == kNeighbours) break;
    Neighbour n{q, {}, {}};
    for (Attempt& a : db.attempts(d.name, q))
      if (a.status == "ok" && a.median_s > 0) n.fastest.push_back(std::move(a));
    if (n.fastest.empty()) continue;
    std::stable_sort(n.fastest.begin(), n.fastest.end(),
                     [](const Attempt& x, const Attempt& y) { return x.median_s < y.median_s; });
    if (n.fastest.size() > kAnchorAttempts) n.fastest.resize(kAnchorAttempts);
    for (const Attempt& a : n.fastest)
      n.ratios.push_back(a.median_s / predict(q, d, a.config, k, registers_of(a)).time_s);
    out.push_back(std::move(n));
  }
  return out;
}

std::string describe(const DispatchCandidate& c, double model_s, double ratio, const char* anchor) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.2f us (model %.2f us x %.3f %s)", c.predicted_s * 1e6,
                model_s * 1e6, ratio, anchor);
  return c.config.id() + " " + (c.from.empty() ? "(model's pick)" : "of " + c.from) + ": " + buf;
}

bool listed(const std::vector<DispatchCandidate>& list, const KernelConfig& c) {
  return std::any_of(list.begin(), list.end(),
                     [&](const DispatchCandidate& x) { return x.config == c; });
}

// The neighbours' kernels and the model's pick, each predicted for p and anchored; the fastest.
DispatchChoice weigh(const Problem& p, const DeviceSpec& d, const std::vector<Neighbour>& near,
                     const ModelCoefficients& k) {
  DispatchChoice out;
  std::vector<std::string> lines;
  for (const Neighbour& n : near) {
    const Attempt& best = n.fastest.front();
    if (listed(out.candidates, best.config)) continue;
    const std::string from = n.problem.shape_id();
    if (const auto v = check_hard(p, d, best.config)) {
      out.candidates.push_back({best.config, from, 0, v->message});
      lines.push_back(best.config.id() + " of " + from + ": dropped, breaks " + v->message);
      continue;
    }
    const double model_s = predict(p, d, best.config, k, registers_of(best)).time_s;
    out.candidates.push_back({best.config, from, model_s * n.ratios.front(), ""});
    lines.push_back(describe(out.candidates.back(), model_s, n.ratios.front(), "measured there"));
  }
  const Ranking r = rank_space(p, d, 1, k);
  if (!r.top.empty() && !listed(out.candidates, r.top.front().config)) {
    const KernelConfig& pick = r.top.front().config;
    // Its own ratio at the nearest shape that measured it. Else what the model's argmin was
    // worth at the nearest shape: the tuned best there over the prediction of the model's pick
    // there. An argmin's prediction is optimistic (it is chosen for it), so the median ratio of
    // other kernels would let the pick win on the model's own errors.
    std::optional<std::pair<double, int>> own;  // ratio, registers
    for (const Neighbour& n : near)
      for (size_t i = 0; i < n.fastest.size() && !own; ++i)
        if (n.fastest[i].config == pick) own = {{n.ratios[i], registers_of(n.fastest[i])}};
    double ratio = 0;
    if (own) {
      ratio = own->first;
    } else {
      const Neighbour& nearest = near.front();
      const Ranking there = rank_space(nearest.problem, d, 1, k);
      ratio = there.top.empty()
                  ? median(nearest.ratios)
                  : nearest.fastest.front().median_s / there.top.front().prediction.time_s;
    }
    const double model_s = predict(p, d, pick, k, own ? own->second : -1).time_s;
    out.candidates.push_back({pick, "", model_s * ratio, ""});
    lines.push_back(describe(
        out.candidates.back(), model_s, ratio,
        own ? "measured at a neighbour" : "the nearest shape's best over its pick's prediction"));
  }
  const DispatchCandidate* won = nullptr;
  for (const DispatchCandidate& c : out.candidates)
    if (c.dropped.empty() && (!won || c.predicted_s < won->predicted_s)) won = &c;
  if (!won) throw InputError("no kernel configuration can run " + p.shape_id() + " on " + d.name);
  out.config = won->config;
  out.source = won->from.empty() ? DispatchSource::Model : DispatchSource::NearestShape;
  out.from = won->from;
  out.why = "fastest predicted for " + p.shape_id() + " of: " + join(lines, "; ");
  return out;
}

std::unique_ptr<Database> open_store(const std::string& path) {
  return std::filesystem::exists(path) ? std::make_unique<Database>(path) : nullptr;
}

std::string described(const ChosenCalibration& c) {
  return c.warning.empty() ? c.description : c.description + ": " + c.warning;
}

}  // namespace

DispatchChoice choose_kernel(const Problem& p, const DeviceSpec& d, const std::string& db_path) {
  const std::unique_ptr<Database> db = open_store(db_path);
  if (db) {
    for (const Problem& q : db->problems(d.name)) {
      if (!same_shape(p, q)) continue;
      if (const auto best = db->best(d.name, q))
        return {best->config, DispatchSource::Stored, q.shape_id(), "", "", {}};
    }
  }
  // The same store answers which calibration ranks, so a tune's recalibration reaches gemm().
  const ChosenCalibration calibration = choose_calibration("auto", d.name, db.get());
  const std::vector<Neighbour> near =
      db ? neighbours_of(p, d, *db, calibration.coefficients) : std::vector<Neighbour>{};
  if (near.empty()) {
    const Ranking r = rank_space(p, d, 1, calibration.coefficients);
    if (r.top.empty())
      throw InputError("no kernel configuration can run " + p.shape_id() + " on " + d.name);
    return {r.top.front().config,
            DispatchSource::Model,
            "",
            described(calibration),
            "no tuned shape of this precision and op shape",
            {}};
  }
  DispatchChoice c = weigh(p, d, near, calibration.coefficients);
  c.calibration = described(calibration);
  return c;
}

DispatchChoice choose_for_sizes(const Problem& representative, const std::vector<Problem>& sizes,
                                const DeviceSpec& d, const std::string& db_path) {
  if (sizes.empty()) throw InputError("a variable batch's choice needs at least one matrix");
  const DispatchChoice for_largest = choose_kernel(representative, d, db_path);
  const KernelConfig kept = batched_config(for_largest.config, BatchKind::Variable);
  const ChosenCalibration calibration =
      choose_calibration("auto", d.name, open_store(db_path).get());
  const ModelCoefficients& k = calibration.coefficients;
  const std::vector<Ranked> ranked = rank_for_sizes(representative, sizes, d, 1, k);
  const double kept_s = time_for_sizes(representative, sizes, d, kept, k);
  DispatchChoice out = for_largest;
  out.config = kept;
  out.calibration = described(calibration);
  out.candidates = {{kept, for_largest.from, kept_s, ""}};
  if (ranked.empty()) {
    out.why = "the representative's kernel: no other runs the batch; " + for_largest.why;
    return out;
  }
  const Ranked& best = ranked.front();
  // A tuned kernel (stored, or a neighbour's) was measured where the model's pick was not: each
  // is weighed by its time over the sizes relative to its time at the representative, the
  // model's own best there standing for the pick's (an argmin's prediction is optimistic, as in
  // weigh). The model's kernel for the representative is that best: the times compare as they are.
  double kept_at = 1, best_at = 1;
  if (for_largest.source != DispatchSource::Model) {
    kept_at = predict(representative, d, kept, k).time_s;
    const Ranking there = rank_space(representative, d, 1, k, variable_batch_domain(SpaceDomain{}));
    // The kept kernel is one of the model's candidates there (a pruned space may lack it).
    best_at = there.top.empty() ? kept_at : std::min(kept_at, there.top.front().prediction.time_s);
  }
  out.candidates.push_back({best.config, "", best.prediction.time_s * kept_at / best_at, ""});
  char times[128];
  std::snprintf(times, sizeof times, "%.1f us against %.1f us", out.candidates[1].predicted_s * 1e6,
                kept_s * 1e6);
  const std::string against = std::string(times) + " for the representative's " +
                              to_string(for_largest.source) + " kernel " + kept.id() +
                              " over the batch's " + std::to_string(sizes.size()) + " sizes";
  if (!(out.candidates[1].predicted_s < kept_s)) {
    out.why =
        "the representative's kernel, predicted faster than the model's best for the sizes (" +
        best.config.id() + ", " + against + ")";
    return out;
  }
  out.config = best.config;
  out.source = DispatchSource::Model;
  out.from = "";
  out.why = "ranked for the sizes: predicted " + against;
  return out;
}

std::vector<DispatchCandidate> candidates_for_sizes(const DispatchChoice& choice,
                                                    const Problem& representative,
                                                    const std::vector<Problem>& sizes,
                                                    const DeviceSpec& d, const std::string& db_path,
                                                    int count) {
  if (count < 1)
    throw InputError("candidates for the sizes: count = " + std::to_string(count) +
                     " must be >= 1");
  const ChosenCalibration calibration =
      choose_calibration("auto", d.name, open_store(db_path).get());
  const ModelCoefficients& k = calibration.coefficients;
  std::vector<DispatchCandidate> out;
  auto add = [&](const KernelConfig& c, const std::string& from) {
    if (int(out.size()) >= count || listed(out, c)) return;
    out.push_back({c, from, time_for_sizes(representative, sizes, d, c, k), ""});
  };
  add(choice.config, choice.from);
  for (const DispatchCandidate& c : choice.candidates) add(c.config, c.from);
  for (const Ranked& r : rank_for_sizes(representative, sizes, d, count, k)) add(r.config, "");
  return out;
}

}  // namespace gemmtune
