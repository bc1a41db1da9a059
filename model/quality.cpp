// Rank quality of the model against measurements: Spearman and Kendall correlation, top-k
// recall and regret, per problem (a ranking only ever compares configurations of one problem).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

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
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

void summarize(QualityReport& report) {
  std::vector<double> spearmans, kendalls, regrets;
  report.top1_rate = report.top5_rate = report.top10_rate = 0;
  for (const auto& q : report.problems) {
    spearmans.push_back(q.spearman);
    kendalls.push_back(q.kendall);
    regrets.push_back(q.regret);
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
  report.median_regret = median(regrets);
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
                           const ModelCoefficients& k) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const CalibrationSample*>> by_problem;
  for (const auto& s : samples) {
    if (!(s.time_s > 0)) continue;
    auto& list = by_problem[s.problem.shape_id()];
    if (list.empty()) order.push_back(s.problem.shape_id());
    list.push_back(&s);
  }
  QualityReport report;
  for (const auto& id : order) {
    const auto& list = by_problem[id];
    if (list.size() < 3) continue;
    std::vector<double> predicted, measured;
    for (const auto* s : list) {
      double t = std::numeric_limits<double>::max();  // cannot run: ranked last
      try {
        t = predict(s->problem, device, s->config, k, s->registers).time_s;
      } catch (const InputError&) {
      }
      predicted.push_back(t);
      measured.push_back(s->time_s);
    }
    RankQuality q;
    q.problem = id;
    q.samples = list.size();
    q.spearman = pearson(ranks(predicted), ranks(measured));
    q.kendall = kendall_tau(predicted, measured);
    const double best = *std::min_element(measured.begin(), measured.end());
    std::vector<size_t> by_model(list.size());
    std::iota(by_model.begin(), by_model.end(), 0);
    std::stable_sort(by_model.begin(), by_model.end(),
                     [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
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
    report.problems.push_back(q);
  }
  summarize(report);
  return report;
}

}  // namespace gemmtune
