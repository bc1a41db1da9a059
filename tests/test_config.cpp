#include <random>
#include <set>

#include "core/core.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

TEST_CASE("config: ids round-trip for random configurations", "[core]") {
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<int> values) {
    std::vector<int> v(values);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  for (int i = 0; i < 500; ++i) {
    KernelConfig c;
    c.blk_m = pick({16, 32, 64, 96, 128, 256});
    c.blk_n = pick({16, 32, 64, 192});
    c.blk_k = pick({4, 8, 16, 32});
    c.dim_x = pick({4, 8, 16, 32});
    c.dim_y = pick({4, 8, 16, 32});
    c.dim_xa = pick({1, 2, 4, 8, 16});
    c.dim_ya = pick({1, 2, 64});
    c.dim_xb = pick({4, 32});
    c.dim_yb = pick({8, 16});
    c.vec_a = pick({1, 2, 4});
    c.vec_b = pick({1, 2, 4});
    c.smem_a_kmajor = pick({0, 1});
    c.smem_b_kmajor = pick({0, 1});
    c.pad = pick({0, 1, 2, 3});
    c.prefetch = pick({0, 1, 2, 3});
    c.stages = pick({1, 2});
    c.unroll = pick({0, 1, 4});
    c.edge = pick({0, 1}) ? EdgeMode::Redirect : EdgeMode::Predicate;
    c.raster = pick({1, 8});
    c.vec_s = pick({1, 2, 4});
    c.mma = pick({0, 1, 2, 3, 4});
    c.async_copy = pick({0, 1});
    c.split_k = pick({0, 2, 16});
    const std::string id = c.id();
    INFO(id);
    CHECK(KernelConfig::parse(id) == c);
    CHECK(KernelConfig::parse(id).id() == id);
  }
}

TEST_CASE("config: short ids keep defaults and derive DYA, DYB", "[core]") {
  const KernelConfig c = KernelConfig::parse("BM128_BN64_DX16_DY16_DXA32_DXB8");
  CHECK(c.blk_m == 128);
  CHECK(c.blk_k == KernelConfig{}.blk_k);
  CHECK(c.dim_ya == 8);   // 256 threads / 32
  CHECK(c.dim_yb == 32);  // 256 / 8
}

TEST_CASE("config: malformed ids name the bad token", "[core]") {
  CHECK_THROWS_WITH(KernelConfig::parse(""), Catch::Contains("empty"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_XX3"),
                    Catch::Contains("unknown") && Catch::Contains("XX"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_BM32"),
                    Catch::Contains("repeats") && Catch::Contains("BM"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM6x4"), Catch::Contains("BM"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM"), Catch::Contains("KEY followed by a number"));
  CHECK_THROWS_WITH(KernelConfig::parse("ED7"), Catch::Contains("edge mode"));
  CHECK_THROWS_WITH(KernelConfig::parse("MM5"), Catch::Contains("tensor cores"));
  CHECK_THROWS_WITH(KernelConfig::parse("SK65"), Catch::Contains("split-K"));
}

TEST_CASE("config: SIMT ids carry no MM token, tensor-core ids end in MM1", "[core]") {
  KernelConfig c;
  CHECK(c.id().find("MM") == std::string::npos);
  c.mma = 1;
  CHECK(c.id().substr(c.id().size() - 4) == "_MM1");
  CHECK(KernelConfig::parse("BM64_MM1").mma == 1);
  c.async_copy = 1;
  CHECK(c.id().substr(c.id().size() - 8) == "_MM1_AC1");
  CHECK(KernelConfig::parse(c.id()) == c);
  CHECK_THROWS_WITH(KernelConfig::parse("AC2"), Catch::Contains("cp.async"));
}

TEST_CASE("config: SL is optional, 0 or 1, and round-trips", "[core]") {
  KernelConfig c = KernelConfig::parse("BM64_BN64_VS4_LA1_LB1");
  CHECK(c.shared32 == 0);
  CHECK(c.id().find("SL") == std::string::npos);  // ids recorded before SL stay as they were
  c.shared32 = 1;
  CHECK(c.id().substr(c.id().size() - 4) == "_SL1");
  CHECK(KernelConfig::parse(c.id()) == c);
  CHECK_THROWS_WITH(KernelConfig::parse("SL2"), Catch::Contains("SL") && Catch::Contains("32-bit"));
}

TEST_CASE("config: CSV columns match the id's keys", "[core]") {
  const auto header = config_csv_header();
  const auto values = config_csv_values(KernelConfig{});
  REQUIRE(header.size() == values.size());
  CHECK(header.front() == "BM");
  CHECK(header.size() == 25);
  CHECK(header[20] == "MM");
  CHECK(header[21] == "AC");
  CHECK(header[22] == "SK");
  CHECK(header[23] == "VC");
  CHECK(header.back() == "SL");
}

TEST_CASE("config: every parameter's token round-trips through id() and parse()", "[core]") {
  const auto& table = tuning_parameters();
  REQUIRE(table.size() == config_csv_header().size());
  for (const TuningParameter& p : table) {
    INFO("parameter " << p.token);
    // A value other than the default that an id may carry: the last such of its values.
    std::vector<int> values = p.full.empty() ? std::vector<int>{8} : p.full;
    values.insert(values.end(), p.refine_values.begin(), p.refine_values.end());
    KernelConfig c;
    int value = p.get(c);
    for (int v : values)
      if (v != p.get(c)) value = v;
    REQUIRE(value != p.get(c));
    p.set(c, value);
    CHECK(p.get(c) == value);
    const std::string id = c.id();
    CHECK(id.find(std::string(p.token) + std::to_string(value)) != std::string::npos);
    CHECK(p.get(KernelConfig::parse(id)) == value);
    CHECK(KernelConfig::parse(id) == c);
    CHECK(&tuning_parameter(p.token) == &p);
  }
}

TEST_CASE("config: an unknown token or an out-of-range value is an error naming it", "[core]") {
  CHECK_THROWS_WITH(tuning_parameter("ZZ"),
                    Catch::Contains("'ZZ'") && Catch::Contains("BM") && Catch::Contains("SL"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_QQ3"), Catch::Contains("'QQ'"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_ED2"),
                    Catch::Contains("ED2") && Catch::Contains("0 (predicate) or 1 (redirect)"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_SK65"), Catch::Contains("SK65"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM0"),
                    Catch::Contains("BM0") && Catch::Contains("positive"));
  CHECK_THROWS_WITH(KernelConfig::parse("BM64_VA3"),
                    Catch::Contains("VA3") && Catch::Contains("1, 2, 4 or 8"));
  CHECK_THROWS_WITH(KernelConfig::parse("ST5"), Catch::Contains("ST5") && Catch::Contains("1..4"));
  CHECK_THROWS_WITH(KernelConfig::parse("SK1"), Catch::Contains("SK1") && Catch::Contains("2..64"));
  CHECK(KernelConfig::parse("SK2").split_k == 2);
}

TEST_CASE("config: the parameter table is consistent with itself and the space", "[core]") {
  std::set<std::string> tokens, macros;
  std::set<int> source_ranks, refine_ranks;
  const SpaceDomain full, compact = SpaceDomain::named("compact"),
                          wide = SpaceDomain::named("wide");
  for (const TuningParameter& p : tuning_parameters()) {
    INFO("parameter " << p.token);
    CHECK(tokens.insert(p.token).second);
    CHECK(macros.insert(p.macro).second);
    CHECK(source_ranks.insert(p.source_rank).second);
    CHECK(p.families != 0);
    CHECK((p.families & ~unsigned(kEveryFamily)) == 0);
    // Every value the space or refinement can reach passes the parameter's own range check.
    REQUIRE(p.valid);
    CHECK(std::string(p.meaning).size() > 0);
    CHECK(p.valid(p.get(KernelConfig{})));
    for (const auto* values : {&p.full, &p.compact, &p.tensor, &p.refine_values})
      for (int v : *values) CHECK(p.valid(v));
    CHECK_FALSE(p.valid(-1));
    if (p.refine_rank > 0) {
      CHECK(refine_ranks.insert(p.refine_rank).second);
      CHECK((p.domain || !p.refine_values.empty()));
    }
    if (!p.domain) {
      CHECK(p.full.empty());  // follows from the others: no values of its own
      continue;
    }
    CHECK(full.*p.domain == p.full);
    CHECK(compact.*p.domain == (p.compact.empty() ? p.full : p.compact));
    // wide: the full values first, then the values only refinement reached.
    std::vector<int> widened = p.full;
    for (int v : p.refine_values)
      if (!enumerates(widened, v)) widened.push_back(v);
    CHECK(wide.*p.domain == widened);
    CHECK(enumerates(p.full, p.get(KernelConfig{})));  // the default is one of its values
  }
  CHECK(tokens.size() == tuning_parameters().size());
  CHECK_THROWS_WITH(SpaceDomain::named("huge"), Catch::Contains("'huge'"));
  // The counts multiply the domains' sizes: 12 tiling factors, 11 variants.
  CHECK(full.tiling_count() == 7.0 * 7 * 4 * 5 * 5 * 9 * 9 * 3 * 3 * 5 * 2 * 7);
  CHECK(full.variant_count() == 4.0 * 5 * 2 * 2 * 3 * 2 * 2 * 4 * 1 * 2 * 2);
  // Partial unrolls (1, 2, 4, 8 beside 0) and rasters (2, 4, 16 beside 1, 8) widen it.
  CHECK(wide.tiling_count() == full.tiling_count());
  CHECK(wide.variant_count() == full.variant_count() * 5 * 5 / 2);
  CHECK_THROWS_WITH(SpaceDomain::named("huge"), Catch::Contains("full, wide, compact, tensor"));
}

TEST_CASE("config: a variable batch's kernel and space take the table's variable-batch values",
          "[core]") {
  const KernelConfig c = KernelConfig::parse("BM128_BN64_BK16_DX16_DY8_VA4_VB2_SK4_ST3_MM2");
  const KernelConfig v = variable_batch_config(c);
  CHECK(v.split_k == 0);
  CHECK(v.vec_a == 1);
  CHECK(v.vec_b == 1);
  // Everything else as chosen.
  KernelConfig back = v;
  back.split_k = c.split_k;
  back.vec_a = c.vec_a;
  back.vec_b = c.vec_b;
  CHECK(back == c);
  const SpaceDomain full, d = variable_batch_domain(full);
  CHECK(d.split_k == std::vector<int>{0});
  CHECK(d.vec_a == std::vector<int>{1});
  CHECK(d.vec_b == std::vector<int>{1});
  CHECK(d.tiling_count() * d.variant_count() < full.tiling_count() * full.variant_count() / 10);
  int fixed = 0;
  for (const TuningParameter& p : tuning_parameters()) {
    if (!p.variable_batch) {
      if (p.domain) CHECK(d.*p.domain == full.*p.domain);
      continue;
    }
    ++fixed;
    CHECK(p.valid(*p.variable_batch));
    CHECK(p.get(v) == *p.variable_batch);
  }
  CHECK(fixed == 3);
}
