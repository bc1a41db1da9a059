// Experiment: top-10 recall of differently diversified shortlists, held out by problem class.
#include <array>
#include <cstdio>
#include <functional>
#include <set>

#include "exp/held_out.hpp"
using namespace gemmtune;
using Key = std::function<std::vector<int>(const KernelConfig&)>;
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto samples = exp::read_samples(argv[1]);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  std::vector<std::pair<const char*, Key>> keys = {
      {"none",
       [](const KernelConfig& c) {
         return std::vector<int>{c.blk_m,         c.blk_n,  c.blk_k,    c.dim_x,  c.dim_y,
                                 c.dim_xa,        c.dim_xb, c.vec_a,    c.vec_b,  c.smem_a_kmajor,
                                 c.smem_b_kmajor, c.pad,    c.prefetch, c.stages, c.unroll,
                                 int(c.edge),     c.raster, c.vec_s};
       }},
      {"bm,bn,bk,dx,dy",
       [](const KernelConfig& c) {
         return std::vector<int>{c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y};
       }},
      {"bm,bn,bk",
       [](const KernelConfig& c) {
         return std::vector<int>{c.blk_m, c.blk_n, c.blk_k};
       }},
      {"bm,bn",
       [](const KernelConfig& c) {
         return std::vector<int>{c.blk_m, c.blk_n};
       }},
      {"bm,bn,dx,dy",
       [](const KernelConfig& c) {
         return std::vector<int>{c.blk_m, c.blk_n, c.dim_x, c.dim_y};
       }},
      {"thr_m,thr_n,bk",
       [](const KernelConfig& c) {
         return std::vector<int>{c.thr_m(), c.thr_n(), c.blk_k};
       }},
  };
  std::vector<std::vector<int>> hits(keys.size());
  std::map<int, std::vector<int>> mixed;
  for (const auto& [fold, held] : exp::by_class(samples)) {
    const ModelCoefficients full = exp::fold_coefficients(d, samples, fold);
    for (const exp::HeldOutProblem& hp : exp::held_out_problems(d, held, full)) {
      const auto& [id, list, pred, meas, order, best] = hp;
      std::printf("%-28s", id.c_str());
      for (size_t k = 0; k < keys.size(); ++k) {
        std::set<std::vector<int>> fam;
        std::vector<size_t> first, rest;
        for (size_t i : order)
          (fam.insert(keys[k].second(list[i]->config)).second ? first : rest).push_back(i);
        first.insert(first.end(), rest.begin(), rest.end());
        int hit = 0;
        for (size_t i = 0; i < std::min<size_t>(10, first.size()); ++i)
          hit |= meas[first[i]] <= 1.03 * best;
        hits[k].push_back(hit);
        std::printf(" %d", hit);
      }
      {
        // mixed: alternate calibrated and uncalibrated family-first orders
        const std::vector<double> pu = exp::predicted_times(d, list, {});
        auto fam_first = [&](const std::vector<double>& pr) {
          std::vector<size_t> o(list.size());
          std::iota(o.begin(), o.end(), 0);
          std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return pr[a] < pr[b]; });
          std::set<std::vector<int>> fam;
          std::vector<size_t> f, r;
          for (size_t i : o)
            (fam.insert(keys[1].second(list[i]->config)).second ? f : r).push_back(i);
          f.insert(f.end(), r.begin(), r.end());
          return f;
        };
        auto a = fam_first(pred), b = fam_first(pu);
        for (int split : {7, 5}) {
          std::vector<size_t> top;
          std::set<size_t> used;
          for (size_t i = 0; top.size() < size_t(split) && i < a.size(); ++i)
            if (used.insert(a[i]).second) top.push_back(a[i]);
          for (size_t i = 0; top.size() < 10 && i < b.size(); ++i)
            if (used.insert(b[i]).second) top.push_back(b[i]);
          int hit = 0;
          for (size_t i : top) hit |= meas[i] <= 1.03 * best;
          mixed[split].push_back(hit);
          std::printf(" m%d:%d", split, hit);
        }
      }
      std::printf("   (%s)\n", fold.c_str());
      std::fflush(stdout);
    }
  }
  for (auto& [split, h] : mixed)
    std::printf("mixed %d calibrated + %d uncalibrated: %.3f\n", split, 10 - split,
                std::accumulate(h.begin(), h.end(), 0.0) / h.size());
  for (size_t k = 0; k < keys.size(); ++k)
    std::printf("%-16s top-10 rate %.3f\n", keys[k].first,
                std::accumulate(hits[k].begin(), hits[k].end(), 0.0) / hits[k].size());
}
