// The model's counts against hardware counters recorded on the lent H100 (tests/data/
// h100_shortlist_counters.json: the shortlists of `tune --counters`, see tests/data/README.md).
// Real counters, so a model term that drifts from what the GPU does fails here without a GPU.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "model/model.hpp"

using namespace gemmtune;

namespace {

Problem problem_from_id(const std::string& id) {
  char precision = 0, op_a = 0, op_b = 0;
  long long m = 0, n = 0, k = 0, batch = 0;
  REQUIRE(std::sscanf(id.c_str(), "%c_%c%c_%lldx%lldx%lld_b%lld", &precision, &op_a, &op_b, &m, &n,
                      &k, &batch) == 7);
  REQUIRE((op_a == 'n' && op_b == 'n'));  // the recorded shortlists are all NN
  return make_problem(parse_precision(std::string(1, precision)), Op::N, Op::N, m, n, k);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("the model's counts against counters recorded on the H100") {
  std::ifstream in(GEMMTUNE_SOURCE_DIR "/tests/data/h100_shortlist_counters.json");
  REQUIRE(in);
  const nlohmann::json rows = nlohmann::json::parse(in);
  REQUIRE(rows.size() == 80);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  std::vector<double> dram_ratio, l2_ratio, smem_ratio;
  for (const auto& row : rows) {
    const Problem p = problem_from_id(row.at("problem"));
    const KernelConfig c = KernelConfig::parse(row.at("config").get<std::string>());
    const auto& counters = row.at("counters");
    const Prediction r = predict(p, d, c, {}, row.at("registers").get<int>());
    INFO(row.at("problem").get<std::string>() << " " << c.id());
    // Every multiply-add the model counts is executed, padded edge tiles included (they compute
    // on zeros rather than branch), and no other.
    const double fmas = is_double(p.precision)
                            ? counters.at("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum")
                            : counters.at("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    CHECK(fmas == r.fma_count);
    if (p.m % c.blk_m == 0 && p.n % c.blk_n == 0 && p.k % c.blk_k == 0)
      CHECK(fmas == double(p.m) * p.n * p.k);
    // Achieved occupancy never exceeds the model's theoretical one.
    CHECK(counters.at("sm__warps_active.avg.pct_of_peak_sustained_active").get<double>() <=
          r.occ.fraction * 100 + 0.5);
    // DRAM reads lie between the compulsory bytes of A and B and the no-reuse bound.
    const double e = element_bytes(p.precision);
    const double read = counters.at("dram__bytes_read.sum");
    CHECK(read >= 0.95 * (double(p.m) + p.n) * p.k * e);
    CHECK(read <= 1.05 * r.l2_bytes);
    dram_ratio.push_back((read + counters.at("dram__bytes_write.sum").get<double>()) /
                         r.dram_bytes);
    l2_ratio.push_back(counters.at("lts__t_bytes.sum").get<double>() / r.l2_bytes);
    smem_ratio.push_back(
        (counters.at("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum").get<double>() +
         counters.at("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum").get<double>()) /
        r.smem_wavefronts);
  }
  // Traffic the model estimates from tile reuse through L2: per configuration within a factor
  // of 2, and the median within 15% (measured: DRAM 0.79-1.34, median 1.04; L2 0.76-1.78,
  // median 1.08).
  const auto summary = [](const std::vector<double>& v) {
    return "measured / model: min " + std::to_string(*std::min_element(v.begin(), v.end())) +
           ", median " + std::to_string(median(v)) + ", max " +
           std::to_string(*std::max_element(v.begin(), v.end()));
  };
  for (const auto* ratios : {&dram_ratio, &l2_ratio}) {
    INFO(summary(*ratios));
    CHECK(*std::min_element(ratios->begin(), ratios->end()) > 0.5);
    CHECK(*std::max_element(ratios->begin(), ratios->end()) < 2.0);
    CHECK(median(*ratios) == Approx(1.0).epsilon(0.15));
  }
  // Shared-memory wavefronts: the model simulates one warp's banks but not that 64- and 128-bit
  // reads are served in several phases, so it counts too few on the vectorized layouts (measured
  // 0.92-2.25, median 1.44). The bounds hold that gap where it is: a model change that widens
  // it fails here, and one that closes it must tighten them.
  INFO(summary(smem_ratio));
  CHECK(*std::min_element(smem_ratio.begin(), smem_ratio.end()) > 0.85);
  CHECK(*std::max_element(smem_ratio.begin(), smem_ratio.end()) < 2.5);
  CHECK(median(smem_ratio) > 1.2);
  CHECK(median(smem_ratio) < 1.7);
}
