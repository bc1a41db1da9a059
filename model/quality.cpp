// Rank quality of the model against measurements: Spearman and Kendall correlation, top-k
// recall, regret and peak scores, per problem (a ranking only ever compares configurations of one
// problem); and cross-validation with problems held out in k folds.
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "model/model.hpp"

namespace gemmtune {
namespace {

// Ranks with ties given their mean rank.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t t = i; t <= j; ++t) r[order[t]] = 0.5 * double(i + j);
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

// Kendall's tau-b (ties in either list reduce the denominator).
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double denom =
      std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denom > 0 ? (concordant - discordant) / denom : 0.0;
}

double median(std::vector<double> v) {
  return quantile(std::move(v), 0.5);
}

// Leading dimensions of 0 are packed ones not yet filled in (Problem::normalized).
bool packed(const Problem& p) {
  return (p.lda == 0 || p.lda == p.rows_a()) && (p.ldb == 0 || p.ldb == p.rows_b()) &&
         (p.ldc == 0 || p.ldc == p.m);
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * double(values.size() - 1);
  const size_t below = size_t(at);
  if (below + 1 >= values.size()) return values.back();
  return values[below] + (at - double(below)) * (values[below + 1] - values[below]);
}

void summarize(QualityReport& report) {
  std::vector<double> spearmans, kendalls, regrets, picks, top5s, short5s, drawn_spearmans,
      drawn_kendalls;
  report.top1_rate = report.top5_rate = report.top10_rate = report.shortlist10_rate = 0;
  for (const auto& q : report.problems) {
    spearmans.push_back(q.spearman);
    kendalls.push_back(q.kendall);
    if (q.drawn_spearman) drawn_spearmans.push_back(*q.drawn_spearman);
    if (q.drawn_kendall) drawn_kendalls.push_back(*q.drawn_kendall);
    regrets.push_back(q.regret);
    picks.push_back(q.pick_fraction);
    top5s.push_back(q.top5_fraction);
    short5s.push_back(q.short5_fraction);
    report.top1_rate += q.top1;
    report.top5_rate += q.top5;
    report.top10_rate += q.top10;
    report.shortlist10_rate += q.shortlist10;
  }
  if (!report.problems.empty()) {
    const double n = double(report.problems.size());
    report.top1_rate /= n;
    report.top5_rate /= n;
    report.top10_rate /= n;
    report.shortlist10_rate /= n;
  }
  report.median_spearman = median(spearmans);
  report.median_kendall = median(kendalls);
  report.median_drawn_spearman = median(drawn_spearmans);
  report.median_drawn_kendall = median(drawn_kendalls);
  report.drawn_problems = drawn_spearmans.size();
  report.median_regret = median(regrets);
  report.median_pick_fraction = median(picks);
  report.p10_pick_fraction = quantile(picks, 0.1);
  report.median_top5_fraction = median(top5s);
  report.p10_top5_fraction = quantile(top5s, 0.1);
  report.median_short5_fraction = median(short5s);
  report.p10_short5_fraction = quantile(short5s, 0.1);
}

std::vector<std::size_t> shortlist_order(const std::vector<const KernelConfig*>& configs) {
  std::vector<std::size_t> firsts, others;
  std::set<std::array<int, 5>> families;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const KernelConfig& c = *configs[i];
    (families.insert({c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y}).second ? firsts : others)
        .push_back(i);
  }
  firsts.insert(firsts.end(), others.begin(), others.end());
  return firsts;
}

std::string problem_class(const Problem& p) {
  const std::string prefix = std::string(1, char(std::tolower(to_char(p.precision)))) + "-";
  if (p.op_a != Op::N || p.op_b != Op::N) return prefix + "transposed";
  const std::int64_t lo = std::min({p.m, p.n, p.k}), hi = std::max({p.m, p.n, p.k});
  if (p.k <= 32) return prefix + "skinny-k";
  if (hi >= 8 * lo) return prefix + "rectangular";
  if (p.m % 64 || p.n % 64 || p.k % 64) return prefix + "odd";
  return prefix + "square";
}

QualityReport rank_quality(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                           const ModelCoefficients& k, int compiled_shortlist) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const CalibrationSample*>> by_problem;
  for (const auto& s : samples) {
    if (!(s.time_s > 0)) continue;
    const std::string key = sample_key(s);
    auto& list = by_problem[key];
    if (list.empty()) order.push_back(key);
    list.push_back(&s);
  }
  QualityReport report;
  for (const auto& id : order) {
    const auto& list = by_problem[id];
    if (list.size() < 3) continue;
    std::vector<double> predicted, measured, drawn_predicted, drawn_measured;
    auto predicted_time = [&](const CalibrationSample* s, int registers) {
      try {
        return predict(s->problem, sample_device(*s, device), s->config, k, registers).time_s;
      } catch (const InputError&) {
        return std::numeric_limits<double>::max();  // cannot run: ranked last
      }
    };
    for (const auto* s : list) {
      const double t = predicted_time(s, compiled_shortlist > 0 ? -1 : s->registers);
      predicted.push_back(t);
      measured.push_back(s->time_s);
      if (s->drawn) {
        drawn_predicted.push_back(t);
        drawn_measured.push_back(s->time_s);
      }
    }
    RankQuality q;
    q.problem = id;
    q.samples = list.size();
    q.spearman = pearson(ranks(predicted), ranks(measured));
    q.kendall = kendall_tau(predicted, measured);
    if (drawn_measured.size() >= kMinDrawnForRank) {
      q.drawn_spearman = pearson(ranks(drawn_predicted), ranks(drawn_measured));
      q.drawn_kendall = kendall_tau(drawn_predicted, drawn_measured);
    }
    const double best = *std::min_element(measured.begin(), measured.end());
    std::vector<size_t> by_model(list.size());
    std::iota(by_model.begin(), by_model.end(), 0);
    std::stable_sort(by_model.begin(), by_model.end(),
                     [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
    if (compiled_shortlist > 0) {
      // The estimate's first configurations, compiled: re-ranked by their standing (spills
      // last, then the time with the compiler's registers).
      const size_t n = std::min(by_model.size(), size_t(compiled_shortlist));
      std::vector<CompiledStanding> compiled(list.size());
      for (size_t i = 0; i < n; ++i) {
        const CalibrationSample& s = *list[by_model[i]];
        compiled[by_model[i]] =
            CompiledStanding::of(s.spill_bytes, predicted_time(&s, s.registers));
      }
      std::stable_sort(by_model.begin(), by_model.begin() + long(n),
                       [&](size_t a, size_t b) { return compiled[a] < compiled[b]; });
    }
    auto hit_within = [&](size_t top) {
      for (size_t i = 0; i < std::min(top, by_model.size()); ++i)
        if (measured[by_model[i]] <= 1.03 * best) return true;
      return false;
    };
    q.top1 = hit_within(1);
    q.top5 = hit_within(5);
    q.top10 = hit_within(10);
    std::vector<const KernelConfig*> ranked;
    for (size_t i : by_model) ranked.push_back(&list[i]->config);
    const std::vector<size_t> shortlist = shortlist_order(ranked);
    for (size_t i = 0; i < std::min<size_t>(10, shortlist.size()); ++i)
      q.shortlist10 = q.shortlist10 || measured[by_model[shortlist[i]]] <= 1.03 * best;
    q.regret = measured[by_model[0]] / best;
    q.pick_fraction = best / measured[by_model[0]];
    double fastest_top5 = measured[by_model[0]];
    for (size_t i = 1; i < std::min<size_t>(5, by_model.size()); ++i)
      fastest_top5 = std::min(fastest_top5, measured[by_model[i]]);
    q.top5_fraction = best / fastest_top5;
    double fastest_short5 = measured[by_model[shortlist[0]]];
    for (size_t i = 1; i < std::min<size_t>(5, shortlist.size()); ++i)
      fastest_short5 = std::min(fastest_short5, measured[by_model[shortlist[i]]]);
    q.short5_fraction = best / fastest_short5;
    report.problems.push_back(q);
  }
  summarize(report);
  return report;
}

std::string problem_key(const Problem& p) {
  std::ostringstream key;
  key << p.shape_id();
  if (!packed(p)) key << "_ld" << p.lda << 'x' << p.ldb << 'x' << p.ldc;
  if (p.beta.re != 0 || p.beta.im != 0) {
    key << "_beta" << p.beta.re;
    if (p.beta.im != 0) key << (p.beta.im > 0 ? "+" : "") << p.beta.im << 'i';
  }
  return key.str();
}

std::string sample_gpu_prefix(const CalibrationSample& s) {
  return s.device ? s.device->name + ":" : "";
}

std::string sample_key(const CalibrationSample& s) {
  return sample_gpu_prefix(s) + problem_key(s.problem);
}

std::map<std::string, int> k_fold_problems(const std::vector<CalibrationSample>& samples, int k,
                                           std::uint32_t seed) {
  // One shape recorded on several GPUs is one problem to hold out: its recordings share a fold,
  // else a fit would see the shape it is judged on (measured on the other GPU).
  std::set<std::string> unique;
  for (const auto& s : samples) unique.insert(problem_key(s.problem));
  if (k < 2 || size_t(k) > unique.size())
    throw InputError("k = " + std::to_string(k) + " folds: needs 2 to " +
                     std::to_string(unique.size()) + " (the number of problems)");
  std::vector<std::string> keys(unique.begin(), unique.end());
  // Fisher-Yates on the generator's raw output: std::shuffle's algorithm differs between
  // standard libraries, and the folds must not.
  std::mt19937 rng(seed);
  for (size_t i = keys.size() - 1; i > 0; --i) std::swap(keys[i], keys[rng() % (i + 1)]);
  std::map<std::string, int> fold_of_shape;
  for (size_t i = 0; i < keys.size(); ++i) fold_of_shape[keys[i]] = int(i % size_t(k));
  std::map<std::string, int> folds;
  for (const auto& s : samples) folds[sample_key(s)] = fold_of_shape.at(problem_key(s.problem));
  return folds;
}

FoldQuality evaluate_fold(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                          const std::map<std::string, int>& folds, int fold, FoldFit fit,
                          int compiled_shortlist) {
  std::vector<CalibrationSample> train, held;
  for (const auto& s : samples) {
    const auto it = folds.find(sample_key(s));
    if (it == folds.end()) throw InputError("problem " + sample_key(s) + " has no fold");
    (it->second == fold ? held : train).push_back(s);
  }
  FoldQuality q;
  q.fold = fold;
  q.train_samples = train.size();
  q.held_samples = held.size();
  const auto t0 = std::chrono::steady_clock::now();
  const ModelCoefficients fitted = fit(device, train);
  q.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  q.uncalibrated = rank_quality(device, held, {}, compiled_shortlist);
  q.calibrated = rank_quality(device, held, fitted, compiled_shortlist);
  return q;
}

ProblemCrossValidation pool_folds(std::vector<FoldQuality> folds) {
  ProblemCrossValidation cv;
  cv.folds = std::move(folds);
  for (const auto& f : cv.folds)
    for (auto [pooled, part] :
         {std::pair{&cv.uncalibrated, &f.uncalibrated}, std::pair{&cv.calibrated, &f.calibrated}})
      pooled->problems.insert(pooled->problems.end(), part->problems.begin(), part->problems.end());
  summarize(cv.uncalibrated);
  summarize(cv.calibrated);
  return cv;
}

ProblemCrossValidation cross_validate_problems(const DeviceSpec& device,
                                               const std::vector<CalibrationSample>& samples, int k,
                                               std::uint32_t seed, FoldFit fit) {
  const std::map<std::string, int> folds = k_fold_problems(samples, k, seed);
  std::vector<FoldQuality> out;
  for (int f = 0; f < k; ++f) out.push_back(evaluate_fold(device, samples, folds, f, fit));
  return pool_folds(std::move(out));
}

}  // namespace gemmtune
