// Experiment: leave-one-class-out quality of the correction alone, reusing the folds' NLopt
// coefficients cached in /tmp/folds or $GEMMTUNE_FOLDS (exp/held_out.hpp; valid while predict's
// terms are unchanged); refits only the correction, so a change to its features is judged in
// seconds once the folds are cached (the first run fits them: minutes).
#include <array>
#include <cstdio>
#include <set>

#include "exp/held_out.hpp"
using namespace gemmtune;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto samples = exp::read_samples(argv[1]);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  QualityReport all_plain, all_cal;
  std::map<int, int> hits;
  for (const auto& [fold, held] : exp::by_class(samples)) {
    ModelCoefficients k = exp::fold_coefficients(d, samples, fold);
    k.correction = {};
    k.correction = fit_log_time_correction(d, exp::all_but(samples, fold), k);
    const QualityReport plain = rank_quality(d, held, {});
    const QualityReport cal = rank_quality(d, held, k);
    // Shortlist variants: the first F of the family-first order, then the plain order.
    for (const exp::HeldOutProblem& hp : exp::held_out_problems(d, held, k)) {
      const auto& [id, list, pred, meas, order, best_measured] = hp;
      std::vector<const KernelConfig*> ranked;
      for (size_t i : order) ranked.push_back(&list[i]->config);
      const auto sl = shortlist_order(ranked);
      const double best = best_measured;
      std::printf("%-26s", id.c_str());
      for (int families : {10, 8, 7, 6, 5, 3, 0}) {
        std::set<size_t> picked;
        for (size_t i = 0; i < sl.size() && int(picked.size()) < families; ++i)
          picked.insert(sl[i]);
        for (size_t i = 0; i < order.size() && picked.size() < 10; ++i) picked.insert(i);
        double b = 1e30;
        for (size_t i : picked) b = std::min(b, meas[order[i]]);
        std::printf(" F%d:%d", families, int(b <= 1.03 * best));
        hits[families] += b <= 1.03 * best;
      }
      // Round robin over the families predicted within T of the top: each family's r-th best in
      // round r, then the plain order.
      for (double T : {1.1, 1.2, 1.3, 1.5}) {
        std::map<std::array<int, 5>, std::vector<size_t>> members;
        std::vector<std::array<int, 5>> fams;
        for (size_t r = 0; r < order.size(); ++r) {
          const KernelConfig& c = *ranked[r];
          if (pred[order[r]] > T * pred[order[0]]) break;
          const std::array<int, 5> f{c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y};
          if (!members.count(f)) fams.push_back(f);
          members[f].push_back(r);
        }
        std::set<size_t> picked;
        for (size_t round = 0; picked.size() < 10 && round < 20; ++round)
          for (const auto& f : fams)
            if (picked.size() < 10 && round < members[f].size()) picked.insert(members[f][round]);
        for (size_t i = 0; i < sl.size() && picked.size() < 10; ++i) picked.insert(sl[i]);
        double b = 1e30;
        for (size_t i : picked) b = std::min(b, meas[order[i]]);
        const int key = 1000 + int(T * 100);
        std::printf(" T%.1f:%d", T, int(b <= 1.03 * best));
        hits[key] += b <= 1.03 * best;
      }
      std::printf("\n");
    }
    for (size_t i = 0; i < cal.problems.size(); ++i) {
      const auto& p = plain.problems[i];
      const auto& c = cal.problems[i];
      std::printf("%-14s %-26s spearman %.3f -> %.3f  regret %.3f -> %.3f  short10 %d -> %d\n",
                  fold.c_str(), c.problem.c_str(), p.spearman, c.spearman, p.regret, c.regret,
                  int(p.shortlist10), int(c.shortlist10));
      all_plain.problems.push_back(p);
      all_cal.problems.push_back(c);
    }
  }
  for (auto& [f, h] : hits) std::printf("families first %d: %d of 18\n", f, h);
  summarize(all_plain);
  summarize(all_cal);
  std::printf(
      "median spearman %.3f -> %.3f, regret %.3f -> %.3f, top10 %.0f%% -> %.0f%%, "
      "shortlist10 %.0f%% -> %.0f%%\n",
      all_plain.median_spearman, all_cal.median_spearman, all_plain.median_regret,
      all_cal.median_regret, 100 * all_plain.top10_rate, 100 * all_cal.top10_rate,
      100 * all_plain.shortlist10_rate, 100 * all_cal.shortlist10_rate);
}
