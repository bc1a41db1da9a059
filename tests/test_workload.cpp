// Workloads: one budget split by expected gain, compiles shared, and kernel sets on a matrix.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Answers every configuration at once and counts what it is asked to compile.
class CountingEvaluator : public Evaluator {
 public:
  const DeviceSpec& device() const override { return device_; }
  std::vector<CompiledInfo> compile(const Problem&, const std::vector<KernelConfig>& c) override {
    compiled += int(c.size());
    return std::vector<CompiledInfo>(c.size(), CompiledInfo{40, 0});
  }
  std::vector<Evaluation> measure(const Problem&, const std::vector<KernelConfig>& c) override {
    return std::vector<Evaluation>(c.size());
  }
  int compiled = 0;

 private:
  DeviceSpec device_ = find_builtin_device("H100-SXM");
};

Problem square(std::int64_t n, Precision precision = Precision::S) {
  Problem p;
  p.precision = precision;
  p.m = p.n = p.k = n;
  return p.normalized();
}

double weighted(const std::vector<double>& w, const std::vector<std::vector<double>>& t,
                const std::vector<size_t>& set) {
  double total = 0;
  for (size_t p = 0; p < t.size(); ++p) {
    double best = kInf;
    for (size_t c : set) best = std::min(best, t[p][c]);
    total += w[p] * best;
  }
  return total;
}

// The optimum of every set of `size` candidates.
double brute_force(const std::vector<double>& w, const std::vector<std::vector<double>>& t,
                   int size) {
  const size_t n = t.front().size();
  double best = kInf;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != size) continue;
    std::vector<size_t> set;
    for (size_t c = 0; c < n; ++c)
      if (mask & (1u << c)) set.push_back(c);
    best = std::min(best, weighted(w, t, set));
  }
  return best;
}

}  // namespace

TEST_CASE("workload budget: shares follow expected gain, what is left passes on", "[workload]") {
  WorkloadBudget evaluations(Budget{40, 0, 0.05}, {1, 3});
  CHECK(evaluations.share(0).evaluations == 10);
  CHECK(evaluations.share(1).evaluations == 30);
  CHECK(evaluations.share(0).space_share == 0.05);  // stays a per-problem cap
  CHECK(evaluations.share(0).seconds == 0);         // no time budget: none per problem
  evaluations.spend(0, 6, 1.0);                     // converged early: 4 left over
  CHECK(evaluations.share(1).evaluations == 34);
  CHECK(evaluations.evaluations_spent() == 6);

  WorkloadBudget seconds(Budget{0, 10, 0}, {2, 2, 4});
  seconds.spend_overhead(1.0);
  CHECK(seconds.share(0).seconds == Approx(9.0 * 2 / 8));
  CHECK(seconds.share(0).evaluations == 0);
  seconds.spend(0, 5, 0.75);
  CHECK(seconds.share(1).seconds == Approx(8.25 * 2 / 6));
  seconds.spend(1, 5, 8.25);  // overran: the last still gets a grace budget, never "none"
  CHECK(seconds.share(2).seconds > 0);
  CHECK(seconds.share(2).seconds < 0.01);

  // Each later problem keeps one evaluation, however large the first one's gain.
  WorkloadBudget tight(Budget{3, 0, 0}, {100, 1, 1});
  CHECK(tight.share(0).evaluations == 1);
  tight.spend(0, 1, 0);
  CHECK(tight.share(1).evaluations == 1);
  tight.spend(1, 1, 0);
  CHECK(tight.share(2).evaluations == 1);

  CHECK_THROWS_WITH(WorkloadBudget(Budget{2, 0, 0}, {1, 1, 1}),
                    Catch::Contains("2 evaluations") && Catch::Contains("3 problems"));
  CHECK_THROWS_WITH(WorkloadBudget(Budget{}, {1, 0}), Catch::Contains("problem 2"));
  CHECK_THROWS_AS(WorkloadBudget(Budget{}, {1, std::nan("")}), InputError);
}

TEST_CASE("workload: a configuration compiles once for problems of one kind", "[workload]") {
  CountingEvaluator inner;
  CompileMemo memo;
  SharingEvaluator shared(inner, memo);
  const std::vector<KernelConfig> configs = {
      KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16"),
      KernelConfig::parse("BM32_BN32_BK16_DX8_DY8_DXA32_DXB16")};
  CHECK(shared.compile(square(512), configs).at(1).registers == 40);
  CHECK(inner.compiled == 2);
  // Another size, the same precision and ops: the same kernels, nothing compiled.
  CHECK(shared.compile(square(2048), configs).size() == 2);
  CHECK(inner.compiled == 2);
  CHECK(shared.compile(square(2048), {configs[0]}).at(0).registers == 40);
  CHECK(memo.shared == 3);
  // Another precision is another kernel.
  shared.compile(square(512, Precision::D), configs);
  CHECK(inner.compiled == 4);
  CHECK(memo.compiled == 4);
}

TEST_CASE("kernel set: greedy with swaps finds the known optimum", "[workload]") {
  // c2 is second best for both problems: pure greedy takes it first and then can only add one
  // of c0, c1; a swap reaches {c0, c1}.
  const std::vector<double> w = {1, 1};
  const std::vector<std::vector<double>> t = {{1.0, 10.0, 1.2, kInf}, {10.0, 1.0, 1.2, 2.0}};
  const KernelSet one = choose_kernel_set(w, t, 1);
  CHECK(one.members == std::vector<size_t>{2});
  CHECK(one.total == Approx(2.4));
  const KernelSet two = choose_kernel_set(w, t, 2);
  CHECK(two.total == Approx(2.0));
  CHECK(std::set<size_t>(two.members.begin(), two.members.end()) == std::set<size_t>{0, 1});
  CHECK(two.choice == std::vector<size_t>{0, 1});
  // A larger set than helps stops early.
  CHECK(choose_kernel_set(w, t, 4).members.size() == 2);
  // Weights move the choice: problem 1 running 100 times wants c0 alone (110 against 121.2).
  const KernelSet heavy = choose_kernel_set({100, 1}, t, 1);
  CHECK(heavy.members == std::vector<size_t>{0});
  CHECK(heavy.total == Approx(100.0 + 10.0));

  // Disjoint kernels: one member covers one problem, the other is left uncovered.
  const std::vector<std::vector<double>> apart = {{1.0, kInf}, {kInf, 3.0}};
  const KernelSet single = choose_kernel_set(w, apart, 1);
  CHECK(single.members == std::vector<size_t>{0});
  CHECK(single.total == Approx(1.0));
  CHECK(choose_kernel_set(w, apart, 2).total == Approx(4.0));
}

TEST_CASE("kernel set: against brute force on random matrices", "[workload]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(1.0, 5.0), weight(0.5, 4.0);
  std::bernoulli_distribution infeasible(0.15);
  for (int trial = 0; trial < 30; ++trial) {
    const size_t problems = 6, candidates = 9;
    std::vector<double> w(problems);
    std::vector<std::vector<double>> t(problems, std::vector<double>(candidates));
    for (size_t p = 0; p < problems; ++p) {
      w[p] = weight(rng);
      for (size_t c = 0; c < candidates; ++c) t[p][c] = infeasible(rng) ? kInf : time(rng);
      t[p][p] = time(rng);  // every problem has a kernel of its own
      t[p][0] = time(rng);  // and one kernel runs them all, so that every set of one covers
    }
    double own_best = 0;
    for (size_t p = 0; p < problems; ++p)
      own_best += w[p] * *std::min_element(t[p].begin(), t[p].end());
    double previous = kInf;
    for (int size = 1; size <= int(problems); ++size) {
      const KernelSet s = choose_kernel_set(w, t, size);
      INFO("trial " << trial << " size " << size);
      CHECK(int(s.members.size()) <= size);
      CHECK(s.total == Approx(weighted(w, t, s.members)));
      CHECK(s.total <= previous * (1 + 1e-12));
      CHECK(s.total >= brute_force(w, t, size) * (1 - 1e-12));
      CHECK(s.total >= own_best * (1 - 1e-12));
      previous = s.total;
    }
    CHECK(previous == Approx(own_best));  // as many kernels as problems: no loss
  }
}

TEST_CASE("kernel set: bad input names the value and its limit", "[workload]") {
  const std::vector<std::vector<double>> t = {{1.0, 2.0}};
  CHECK_THROWS_WITH(choose_kernel_set({1}, t, 0),
                    Catch::Contains("0 kernels") && Catch::Contains(">= 1"));
  CHECK_THROWS_WITH(choose_kernel_set({}, {}, 1), Catch::Contains("at least one problem"));
  CHECK_THROWS_WITH(choose_kernel_set({1, 1}, {{1.0, 2.0}, {kInf, kInf}}, 1),
                    Catch::Contains("problem 2"));
  CHECK_THROWS_WITH(choose_kernel_set({-1}, t, 1), Catch::Contains("weight"));
  CHECK_THROWS_WITH(choose_kernel_set({1, 1}, {{1.0, 2.0}, {1.0}}, 1),
                    Catch::Contains("problem 2 has 1"));
}
