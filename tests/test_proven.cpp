// The calibration's proven kernels: chosen from measurements, kept in its JSON, and weighed beside
// the space's shortlist where the ranking compiles (predict, measure) and in tune's first batch.
#include <algorithm>
#include <string>
#include <vector>

#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

Problem problem(Precision precision, std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p;
  p.precision = precision;
  p.m = m;
  p.n = n;
  p.k = k;
  return p.normalized();
}

CalibrationSample sample(const Problem& p, const KernelConfig& c, double time_s) {
  CalibrationSample s;
  s.problem = p;
  s.config = c;
  s.time_s = time_s;
  return s;
}

// The space's first n configurations of p, by the uncalibrated model.
std::vector<KernelConfig> first(const Problem& p, int n) {
  std::vector<KernelConfig> out;
  for (const auto& r : rank_space(p, find_builtin_device("H100-SXM"), n).top)
    out.push_back(r.config);
  return out;
}

std::vector<std::string> ids(const std::vector<KernelConfig>& configs) {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.id());
  return out;
}

}  // namespace

TEST_CASE("proven kernels: each problem's configurations within 3% of its fastest, at most 8") {
  const Problem s = problem(Precision::S, 1000, 900, 800), d = problem(Precision::D, 500, 400, 300);
  const auto configs = first(s, 12);
  std::vector<CalibrationSample> samples;
  // S: twelve configurations 0.25% apart (all within 3%: the cap of 8 keeps the fastest), and a
  // failed one (no time) that never counts.
  for (size_t i = 0; i < configs.size(); ++i)
    samples.push_back(sample(s, configs[i], 1e-3 * (1 + 0.0025 * double(11 - i))));
  samples.push_back(sample(s, first(s, 13).back(), 0));
  // D: the fastest, one 2% behind, one 5% behind; and S's fastest again, proven for D apart.
  samples.push_back(sample(d, configs[0], 2e-3));
  samples.push_back(sample(d, configs[1], 2.04e-3));
  samples.push_back(sample(d, configs[2], 2.1e-3));
  const std::vector<ProvenKernel> proven = proven_kernels(samples);
  std::vector<std::string> s_ids, d_ids;
  for (const auto& x : proven)
    (x.precision == Precision::S ? s_ids : d_ids).push_back(x.config.id());
  REQUIRE(s_ids.size() == size_t(kProvenPerProblem));
  for (int i = 0; i < kProvenPerProblem; ++i)
    CHECK(s_ids[size_t(i)] == configs[configs.size() - 1 - size_t(i)].id());  // fastest first
  CHECK(d_ids == std::vector<std::string>{configs[0].id(), configs[1].id()});
  // Sorted by precision letter (D before S), as a calibration file reads them back.
  CHECK(proven.front().precision == Precision::D);
  // Another list's kernels follow unless they repeat one.
  const std::vector<ProvenKernel> also = {{Precision::D, configs[0]}, {Precision::Z, configs[3]}};
  const auto merged = proven_kernels(samples, also);
  CHECK(merged.size() == proven.size() + 1);
  CHECK(std::count(merged.begin(), merged.end(), ProvenKernel{Precision::Z, configs[3]}) == 1);
}

TEST_CASE("proven kernels round-trip through a calibration's JSON; bad entries are named") {
  ModelCoefficients k;
  k.fma_efficiency = 0.8;
  const auto configs = first(problem(Precision::S, 700, 600, 500), 3);
  k.proven = {{Precision::D, configs[2]}, {Precision::S, configs[0]}, {Precision::S, configs[1]}};
  const std::string json = coefficients_to_json(k);
  CHECK_THAT(json, Catch::Contains("\"proven_kernels\""));
  CHECK(coefficients_from_json(json) == k);
  CHECK(coefficients_from_json(coefficients_to_json(ModelCoefficients{})).proven.empty());
  CHECK_THROWS_WITH(coefficients_from_json(R"({"proven_kernels": ["BM64"]})"),
                    Catch::Contains("proven_kernels must be an object"));
  CHECK_THROWS_WITH(coefficients_from_json(R"({"proven_kernels": {"q": []}})"),
                    Catch::Contains("'q'"));
  CHECK_THROWS_WITH(coefficients_from_json(R"({"proven_kernels": {"s": [7]}})"),
                    Catch::Contains("proven_kernels.s holds 7"));
  CHECK_THROWS_WITH(coefficients_from_json(R"({"proven_kernels": {"s": "BM64"}})"),
                    Catch::Contains("proven_kernels.s must be a list"));
  CHECK_THROWS(coefficients_from_json(R"({"proven_kernels": {"s": ["BM64_QQ9"]}})"));
}

TEST_CASE(
    "with_proven adds the problem's runnable proven kernels of its precision after the list") {
  const DeviceSpec device = find_builtin_device("H100-SXM");
  const Problem p = problem(Precision::S, 2000, 1500, 1000);
  const auto space = first(p, 60);
  const std::vector<KernelConfig> shortlist(space.begin(), space.begin() + 4);
  ModelCoefficients k;
  KernelConfig mma = space[50];
  mma.mma = 1;  // an FP64 tensor-core shape: S cannot run it
  REQUIRE(check_hard(p, device, mma));
  k.proven = {{Precision::S, space[40]},
              {Precision::S, space[1]},
              {Precision::D, space[30]},
              {Precision::S, mma},
              {Precision::S, space[20]}};
  const auto out = with_proven(p, device, k, shortlist);
  // The shortlist as it was, then the proven S kernels it lacks, best predicted first.
  CHECK(ids(out) == std::vector<std::string>{space[0].id(), space[1].id(), space[2].id(),
                                             space[3].id(), space[20].id(), space[40].id()});
  CHECK(ids(with_proven(p, device, ModelCoefficients{}, shortlist)) == ids(shortlist));
  // At most kProvenCandidates join, the best predicted.
  ModelCoefficients many;
  for (const auto& c : first(p, 200)) many.proven.push_back({Precision::S, c});
  const auto capped = with_proven(p, device, many, {});
  REQUIRE(capped.size() == size_t(kProvenCandidates));
  CHECK(ids(capped) == ids(first(p, kProvenCandidates)));
}

TEST_CASE("tuner: a proven kernel outside the tuned domain joins the first measured batch",
          "[tuner]") {
  const DeviceSpec device = find_builtin_device("H100-SXM");
  const Problem p = problem(Precision::S, 3000, 2000, 1000);
  HybridOptions o;
  o.domain.blk_m = {96};
  o.domain.blk_n = {96};
  o.domain.raster = {1};
  o.compile_top = 16;
  o.measure_top = 4;
  o.budget.evaluations = o.measure_top;
  // A wider tile the domain leaves out, which the model ranks first: proven elsewhere.
  SpaceDomain wider = o.domain;
  wider.blk_m = {128};
  wider.blk_n = {128};
  const KernelConfig proven = rank_space(p, device, 1, {}, wider).top.at(0).config;
  // The recording: the domain's configurations at their predicted times, the proven kernel
  // twice as fast as the best of them.
  std::vector<Evaluation> recording;
  double fastest = 1;
  for (const auto& c : pruned_space(p, device, o.domain)) {
    Evaluation e;
    e.config = c;
    e.time_s = predict(p, device, c, {}).time_s;
    fastest = std::min(fastest, e.time_s);
    recording.push_back(e);
  }
  Evaluation e;
  e.config = proven;
  e.time_s = fastest / 2;
  recording.push_back(e);
  ReplayEvaluator replay(device, recording);
  const TuneResult without = hybrid_tune(p, replay, o);
  REQUIRE(without.best);
  CHECK(without.best->config.id() != proven.id());
  o.coefficients.proven = {{Precision::S, proven}};
  const TuneResult with = hybrid_tune(p, replay, o);
  REQUIRE(with.best);
  CHECK(with.history.size() == size_t(o.measure_top));
  CHECK(with.best->config.id() == proven.id());
}
