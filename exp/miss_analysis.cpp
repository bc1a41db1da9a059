// Experiment: per held-out problem, where the near-best configurations sit in the calibrated
// order; fold calibrations cached under /tmp/folds.
#include <array>
#include <cstdint>
#include <cstdio>
#include <set>

#include "exp/held_out.hpp"
using namespace gemmtune;
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto samples = exp::read_samples(argv[1]);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  std::map<int, int> strategy_hits;
  std::map<int, std::string> strategy_name;
  for (const auto& [fold, held] : exp::by_class(samples)) {
    const ModelCoefficients full = exp::fold_coefficients(d, samples, fold);
    for (const exp::HeldOutProblem& hp : exp::held_out_problems(d, held, full)) {
      const auto& [id, list, pred, meas, order, best] = hp;
      {
        // strategies: round-robin over families predicted within T of the top, R rounds
        auto fam = [&](size_t j) {
          const KernelConfig& c = list[j]->config;
          return std::array<int, 5>{c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y};
        };
        auto sub = [&](size_t j) {
          const KernelConfig& c = list[j]->config;
          return std::array<int, 4>{c.smem_a_kmajor, c.smem_b_kmajor, c.prefetch > 0, c.vec_s};
        };
        const double top = pred[order[0]];
        int si = 0;
        for (double T : {1.05, 1.1, 1.2, 1.3, 1.5, 100.0})
          for (int distinct : {0, 1}) {
            std::map<std::array<int, 5>, std::vector<size_t>> members;
            std::vector<std::array<int, 5>> fams;
            for (size_t j : order) {
              if (pred[j] > T * top) break;
              auto f = fam(j);
              if (!members.count(f)) fams.push_back(f);
              members[f].push_back(j);
            }
            std::vector<size_t> picked;
            std::set<size_t> used;
            std::map<std::array<int, 5>, std::set<std::array<int, 4>>> subs;
            for (int round = 0; picked.size() < 10 && round < 50; ++round)
              for (auto& f : fams) {
                if (picked.size() >= 10) break;
                auto& m = members[f];
                size_t choice = SIZE_MAX;
                for (size_t j : m)
                  if (!used.count(j) && (!distinct || !subs[f].count(sub(j)))) {
                    choice = j;
                    break;
                  }
                if (choice == SIZE_MAX)
                  for (size_t j : m)
                    if (!used.count(j)) {
                      choice = j;
                      break;
                    }
                if (choice == SIZE_MAX) continue;
                used.insert(choice);
                subs[f].insert(sub(choice));
                picked.push_back(choice);
              }
            for (size_t j : order) {
              if (picked.size() >= 10) break;
              if (!used.count(j)) {
                used.insert(j);
                picked.push_back(j);
              }
            }
            double b = 1e30;
            for (size_t j : picked) b = std::min(b, meas[j]);
            strategy_hits[si] += b <= 1.03 * best;
            strategy_name[si] =
                "T" + std::to_string(T).substr(0, 4) + (distinct ? " distinct" : "");
            std::printf("%d", int(b <= 1.03 * best));
            ++si;
          }
        std::printf("  ");
      }
      std::vector<const KernelConfig*> ranked;
      for (size_t i : order) ranked.push_back(&list[i]->config);
      auto sl = shortlist_order(ranked);
      double best10 = 1e30;
      for (size_t i = 0; i < 10 && i < sl.size(); ++i)
        best10 = std::min(best10, meas[order[sl[i]]]);
      int near = 0, first_near_rank = -1;
      for (size_t r = 0; r < order.size(); ++r)
        if (meas[order[r]] <= 1.03 * best) {
          ++near;
          if (first_near_rank < 0) first_near_rank = int(r);
        }
      int first_near_sl = -1;
      for (size_t r = 0; r < sl.size(); ++r)
        if (meas[order[sl[r]]] <= 1.03 * best) {
          first_near_sl = int(r);
          break;
        }
      std::printf(
          "%-26s n=%5zu near3%%=%4d short10 %.3f  first near: rank %d, shortlist %d  (%s)\n",
          id.c_str(), list.size(), near, best10 / best, first_near_rank, first_near_sl,
          fold.c_str());
      if (argc > 2) {
        std::printf("   top10 shortlist:\n");
        for (size_t i = 0; i < 10 && i < sl.size(); ++i) {
          size_t j = order[sl[i]];
          std::printf("     %.3f pred %.1f us  %s\n", meas[j] / best, pred[j] * 1e6,
                      list[j]->config.id().c_str());
        }
        std::printf("   best measured:\n");
        std::vector<size_t> bym(list.size());
        std::iota(bym.begin(), bym.end(), 0);
        std::sort(bym.begin(), bym.end(), [&](size_t a, size_t b) { return meas[a] < meas[b]; });
        for (size_t i = 0; i < 6; ++i) {
          size_t j = bym[i];
          size_t rank = std::find(order.begin(), order.end(), j) - order.begin();
          std::printf("     %.3f pred %.1f us rank %zu %s\n", meas[j] / best, pred[j] * 1e6, rank,
                      list[j]->config.id().c_str());
        }
      }
      std::fflush(stdout);
    }
  }
  for (auto& [i, h] : strategy_hits) std::printf("%-16s %d/18\n", strategy_name[i].c_str(), h);
}
