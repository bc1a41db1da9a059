#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "search/constraints.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

static Problem problem(Precision pr, Op a, Op b, std::int64_t m, std::int64_t n, std::int64_t k,
                       std::int64_t lda = 0) {
  Problem p = make_problem(pr, a, b, m, n, k);
  if (lda) p.lda = lda;
  p.validate();
  return p;
}

static KernelConfig good() {
  return KernelConfig::parse("BM64_BN64_BK8_DX16_DY16_DXA64_DXB8_VA1_VB1");
}

TEST_CASE("constraints: each hard stage rejects what it must, naming the value", "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024);
  REQUIRE_FALSE(check_hard(p, h100, good()).has_value());

  KernelConfig c = good();
  c.dim_x = 24;  // 64 % 24 != 0
  auto v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::LayoutDivides);

  // Each parameter's own range, from the parameter table: the message names it and its values.
  c = good();
  c.stages = 5;
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::LayoutDivides);
  CHECK_THAT(v->message, Catch::Contains("ST5") && Catch::Contains("1..4"));
  c = good();
  c.vec_s = 3;
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK_THAT(v->message, Catch::Contains("VS3") && Catch::Contains("1, 2 or 4"));
  c = good();
  c.split_k = 1;
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK_THAT(v->message, Catch::Contains("SK1"));

  c = KernelConfig::parse("BM64_BN64_BK8_DX4_DY4_DXA16_DXB8");  // 16 threads
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::WarpMultiple);
  CHECK_THAT(v->message, Catch::Contains("16 threads"));

  c = KernelConfig::parse("BM256_BN256_BK32_DX64_DY32_DXA64_DXB8");  // 2048 threads
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::MaxThreads);
  CHECK_THAT(v->message, Catch::Contains("1024"));

  c = KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16_VA4");
  v = check_hard(problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024, 1026), h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::VectorAlignment);
  CHECK_THAT(v->message, Catch::Contains("1026"));
  CHECK_FALSE(check_hard(p, h100, c));  // lda 1024 is a multiple of 4
  v = check_hard(problem(Precision::Z, Op::N, Op::N, 64, 64, 64), h100, c);  // 4 x 16 bytes
  REQUIRE(v);
  CHECK(v->stage == Stage::VectorAlignment);

  c = KernelConfig::parse("BM256_BN256_BK32_DX16_DY16_DXA64_DXB8_ST2");
  v = check_hard(problem(Precision::D, Op::N, Op::N, 4096, 4096, 4096), h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::SharedMemory);
  CHECK_THAT(v->message, Catch::Contains("262144") && Catch::Contains("232448"));

  c = KernelConfig::parse("BM256_BN256_BK8_DX16_DY16_DXA64_DXB8");  // 256 accumulators
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::RegistersPerThread);
  CHECK_THAT(v->message, Catch::Contains("spill"));

  // SL1 needs the SIMT kernel's vector fragment loads: VS > 1 and no tensor cores.
  c = KernelConfig::parse(
      "BM64_BN64_BK32_DX8_DY16_DXA8_DYA16_DXB8_DYB16_VA4_VB4_LA1_LB1_PD4_ST2_VS4_SL1");
  CHECK_FALSE(check_hard(p, h100, c));
  c = good();
  c.shared32 = 1;
  v = check_hard(p, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::SharedVector);
  CHECK_THAT(v->message, Catch::Contains("SL1") && Catch::Contains("VS > 1 and MM0"));
  c = KernelConfig::parse("BM32_BN64_BK8_DX8_DY8_DXA16_DYA4_DXB8_DYB8_LA1_PD4_ST4_MM2_AC1");
  const Problem dp = problem(Precision::D, Op::N, Op::N, 1024, 1024, 1024);
  REQUIRE_FALSE(check_hard(dp, h100, c));
  c.shared32 = 1;
  v = check_hard(dp, h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::SharedVector);
}

TEST_CASE("constraints: the read layout must follow the stored shape of op(A), op(B)", "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100");
  // DXA 64 runs along M for op N (64 rows) but along K for op T (8 rows): invalid there.
  const KernelConfig c = good();
  CHECK_FALSE(check_hard(problem(Precision::S, Op::N, Op::N, 512, 512, 512), h100, c));
  auto v = check_hard(problem(Precision::S, Op::T, Op::N, 512, 512, 512), h100, c);
  REQUIRE(v);
  CHECK(v->stage == Stage::LayoutDivides);
}

// A small domain walked twice: lazily (with subtree counting) and one configuration at a time.
TEST_CASE("constraints: the lazy funnel equals a brute-force count, stage by stage", "[search]") {
  SpaceDomain dom;
  dom.blk_m = {32, 64, 128};
  dom.blk_n = {16, 64};
  dom.blk_k = {8, 16};
  dom.dim_x = {8, 16};
  dom.dim_y = {8, 16};
  dom.dim_xa = {4, 16, 64};
  dom.dim_xb = {2, 8};
  dom.vec_a = {1, 4};
  dom.vec_b = {1, 2};
  dom.pad = {0, 1};
  dom.prefetch = {0, 3};
  dom.raster = {1, 8};
  dom.vec_s = {1, 2};
  dom.stages = {1, 2, 3};
  dom.mma = {0, 1};
  const DeviceSpec d = find_builtin_device("A100");
  // With and without the unsplit value: the walk visits splits from the unsplit walk's survivors.
  // D 128x96x8192 keeps splits; Z 100x90x70 allows SK2 with BK8 only.
  std::size_t split_survivors = 0, vector_c_survivors = 0, shared32_survivors = 0;
  for (const std::vector<int>& splits : {std::vector<int>{0, 2, 4}, std::vector<int>{2, 4}})
    for (const Problem& p : {problem(Precision::S, Op::N, Op::T, 4000, 3000, 512),
                             problem(Precision::Z, Op::C, Op::N, 100, 90, 70),
                             problem(Precision::D, Op::T, Op::N, 2000, 1000, 256),
                             problem(Precision::D, Op::N, Op::N, 128, 96, 8192)}) {
      dom.split_k = splits;
      // With both address widths the space keeps SL0; with SL1 alone only kernels that have it.
      const bool sl1_only = splits.size() == 2;
      dom.shared32 = sl1_only ? std::vector<int>{1} : std::vector<int>{0, 1};
      INFO(p.shape_id() << " splits " << splits.size() << " SL1 only " << sl1_only);
      ConstraintOptions options;
      options.enabled[size_t(Stage::MinOccupancy)] = false;  // exercise a switched-off stage
      std::vector<KernelConfig> lazy;
      const Funnel f =
          enumerate_space(p, d, dom, options, [&](const KernelConfig& c) { lazy.push_back(c); });
      CHECK(f.raw == dom.tiling_count() * dom.variant_count());

      std::map<Stage, double> rejected;
      std::vector<KernelConfig> brute;
      KernelConfig c;
      for (int bm : dom.blk_m)
        for (int bn : dom.blk_n)
          for (int bk : dom.blk_k)
            for (int sk : dom.split_k)  // unsplit first, as the walk takes them
              for (int dx : dom.dim_x)
                for (int dy : dom.dim_y)
                  for (int dxa : dom.dim_xa)
                    for (int dxb : dom.dim_xb)
                      for (int va : dom.vec_a)
                        for (int vb : dom.vec_b)
                          for (int mm : dom.mma)
                            for (int ac : dom.async_copy)
                              for (int st : dom.stages)
                                for (int pd : dom.pad)
                                  for (int la : dom.smem_a_kmajor)
                                    for (int lb : dom.smem_b_kmajor)
                                      for (int vs : dom.vec_s)
                                        for (int sl : dom.shared32)
                                          for (int vc : dom.vec_c)
                                            for (int pf : dom.prefetch)
                                              for (int ur : dom.unroll)
                                                for (int ed : dom.edge)
                                                  for (int rs : dom.raster) {
                                                    c.blk_m = bm;
                                                    c.blk_n = bn;
                                                    c.blk_k = bk;
                                                    c.split_k = sk;
                                                    c.dim_x = dx;
                                                    c.dim_y = dy;
                                                    c.dim_xa = dxa;
                                                    c.dim_xb = dxb;
                                                    c.dim_ya = (dx * dy) % dxa ? -1 : dx * dy / dxa;
                                                    c.dim_yb = (dx * dy) % dxb ? -1 : dx * dy / dxb;
                                                    c.vec_a = va;
                                                    c.vec_b = vb;
                                                    c.mma = mm;
                                                    c.async_copy = ac;
                                                    c.stages = st;
                                                    c.pad = pd;
                                                    c.smem_a_kmajor = la;
                                                    c.smem_b_kmajor = lb;
                                                    c.vec_s = vs;
                                                    c.vec_c = vc;
                                                    c.shared32 = sl;
                                                    c.prefetch = pf;
                                                    c.unroll = ur;
                                                    c.edge = EdgeMode(ed);
                                                    c.raster = rs;
                                                    const Stage s =
                                                        first_failing_stage(p, d, dom, options, c);
                                                    if (s == Stage::Count)
                                                      brute.push_back(c);
                                                    else
                                                      rejected[s] += 1;
                                                  }
      double remaining = f.raw;
      for (const auto& row : f.rows) {
        INFO(stage_name(row.stage));
        remaining -= rejected[row.stage];
        CHECK(row.remaining == remaining);
        CHECK(row.stage != Stage::MinOccupancy);
      }
      CHECK(double(lazy.size()) == f.rows.back().remaining);
      REQUIRE(lazy.size() == brute.size());
      auto by_id = [](const KernelConfig& x, const KernelConfig& y) { return x.id() < y.id(); };
      std::sort(lazy.begin(), lazy.end(), by_id);
      std::sort(brute.begin(), brute.end(), by_id);
      CHECK(lazy == brute);
      split_survivors += std::size_t(
          std::count_if(lazy.begin(), lazy.end(), [](const KernelConfig& k) { return k.split_k; }));
      vector_c_survivors += std::size_t(
          std::count_if(lazy.begin(), lazy.end(), [](const KernelConfig& k) { return k.vec_c; }));
      for (const auto& k : lazy) {
        CHECK(k.shared32 == (sl1_only ? 1 : 0));
        if (sl1_only) CHECK(k.has_shared32_path());
      }
      shared32_survivors += std::size_t(std::count_if(
          lazy.begin(), lazy.end(), [](const KernelConfig& k) { return k.shared32; }));
      // Every survivor passes the hard constraints as check_hard sees them.
      for (const auto& k : lazy) CHECK_FALSE(check_hard(p, d, k));
    }
  CHECK(split_survivors > 0);
  CHECK(vector_c_survivors > 0);
  CHECK(shared32_survivors > 0);
}

TEST_CASE("constraints: the walk fixes every variant at its declared level, once", "[search]") {
  std::set<const TuningParameter*> walked;
  for (int level = 0; level <= 4; ++level) {
    int rank = 0;
    for (const TuningParameter* p : detail::walk_parameters(level)) {
      INFO(p->token);
      CHECK(p->walk_level == level);
      CHECK(p->walk_rank > rank);  // nested in rank order
      rank = p->walk_rank;
      CHECK(walked.insert(p).second);
    }
  }
  // Every variant with two values: a variant the walk left out would halve its count.
  SpaceDomain two;
  for (const TuningParameter& p : tuning_parameters()) {
    INFO(p.token);
    if (!p.domain || p.tiling) {
      CHECK(p.walk_level == 0);
      CHECK(walked.count(&p) == 0);
      continue;
    }
    CHECK(p.walk_level >= 2);
    CHECK(p.walk_level <= 4);
    CHECK(walked.count(&p) == 1);
    if (p.walk_member) {  // the member set writes
      KernelConfig c;
      p.set(c, 7);
      CHECK(c.*p.walk_member == 7);
    }
    const std::vector<int>& values = p.full.size() >= 2 ? p.full : p.refine_values;
    REQUIRE(values.size() >= 2);
    two.*p.domain = {values[0], values[1]};
  }
  CHECK(detail::walk_variant_count(two) == two.variant_count());
  CHECK(two.variant_count() == std::pow(2.0, double(walked.size())));
  for (const char* name : {"full", "compact", "tensor"}) {
    INFO(name);
    const SpaceDomain dom = SpaceDomain::named(name);
    CHECK(detail::walk_variant_count(dom) == dom.variant_count());
  }
}

TEST_CASE("constraints: the pruned space is large enough for every precision and op shape",
          "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  for (Precision pr : {Precision::S, Precision::D, Precision::C, Precision::Z})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        const Problem p = problem(pr, a, b, 4096, 4096, 4096);
        const Funnel f = enumerate_space(p, h100, SpaceDomain{}, ConstraintOptions{},
                                         [](const KernelConfig&) {});
        INFO(p.shape_id() << "\n" << f.to_table());
        CHECK(f.rows.back().remaining >= 300);
        // Funnel counts never grow.
        double last = f.raw;
        for (const auto& row : f.rows) {
          CHECK(row.remaining <= last);
          last = row.remaining;
        }
      }
}

TEST_CASE("constraints: small and batched problems get seed 004's small blocks", "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  Problem p = problem(Precision::D, Op::N, Op::N, 16, 16, 16);
  p.batch = 1000;
  const auto small = pruned_space(p.normalized(), h100);
  REQUIRE_FALSE(small.empty());
  bool has_warp_block = false;
  for (const auto& c : small) {
    CHECK(c.threads() <= 512);
    CHECK(c.blk_m <= 16);  // tile_fits_problem: no more than half a tile wasted
    has_warp_block = has_warp_block || c.threads() == 32;
  }
  CHECK(has_warp_block);
  CHECK_THROWS_WITH(parse_stage("no_such_stage"), Catch::Contains("bank_conflicts"));
}

TEST_CASE("constraints: tensor-core kernels only where they can run", "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const DeviceSpec v100 = find_builtin_device("V100-SXM2");
  KernelConfig c = KernelConfig::parse("BM64_BN128_BK16_DX16_DY16_DXA16_DXB16_PD4_ST2_MM1");
  const Problem d = problem(Precision::D, Op::N, Op::N, 1024, 1024, 1024);
  CHECK_FALSE(check_hard(d, h100, c));
  auto message = [&](const Problem& p, const DeviceSpec& dev, const KernelConfig& k) {
    const auto v = check_hard(p, dev, k);
    return v ? v->message : std::string();
  };
  CHECK_THAT(message(problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024), h100, c),
             Catch::Contains("precision d, z, h, b or t (got s)"));
  CHECK_THAT(message(d, v100, c), Catch::Contains("FP64 tensor cores") && Catch::Contains("sm_70"));
  KernelConfig narrow = c;
  narrow.dim_x = 4;
  narrow.dim_y = 64;
  CHECK_THAT(message(d, h100, narrow), Catch::Contains("DX a multiple of 8 (4)"));

  KernelConfig k16 = c;
  k16.mma = 4;
  k16.blk_k = 8;
  CHECK_THAT(message(d, h100, k16), Catch::Contains("multiple of the mma's k, 16 (8)"));
  k16.blk_k = 16;
  CHECK_FALSE(check_hard(d, h100, k16));
  CHECK_THAT(message(d, find_builtin_device("A100"), k16),
             Catch::Contains("m16n8 shapes (sm_90 and later)"));
  KernelConfig odd_rows = k16;
  odd_rows.blk_m = 16;
  odd_rows.dim_x = 16;  // one row of C per thread: the m16 shapes need pairs
  CHECK_THAT(message(d, h100, odd_rows), Catch::Contains("along M (1)"));

  auto count_mma = [](const std::vector<KernelConfig>& space) {
    return std::count_if(space.begin(), space.end(), [](const auto& k) { return k.mma != 0; });
  };
  SpaceDomain dom = SpaceDomain::named("compact");
  dom.mma = {0, 1, 2, 3, 4};  // compact alone has only the SIMT kernels the recorded sweeps have
  const auto on_h100 = pruned_space(d, h100, dom);
  CHECK(count_mma(on_h100) > 0);
  for (int mm = 1; mm <= 4; ++mm)
    CHECK(std::count_if(on_h100.begin(), on_h100.end(),
                        [&](const auto& k) { return k.mma == mm; }) > 0);
  CHECK(count_mma(on_h100) < std::ptrdiff_t(on_h100.size()));
  CHECK(count_mma(pruned_space(d, v100, dom)) == 0);
  CHECK(count_mma(pruned_space(problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024), h100, dom)) ==
        0);
}

TEST_CASE("space domains: tensor keeps the full tiles, unsplit tensor-core kernels only",
          "[search]") {
  const SpaceDomain full = SpaceDomain::named("full"), tensor = SpaceDomain::named("tensor");
  CHECK(tensor.mma == std::vector<int>{1, 2, 3, 4});
  CHECK(tensor.split_k == std::vector<int>{0});
  CHECK(tensor.blk_m == full.blk_m);
  CHECK(tensor.stages == full.stages);
  CHECK(tensor.async_copy == full.async_copy);
  CHECK(tensor.variant_count() == full.variant_count());
  CHECK_THROWS_WITH(SpaceDomain::named("tensors"),
                    Catch::Contains("'tensors'") && Catch::Contains("full, wide, compact, tensor"));
}

TEST_CASE("constraints: split-K only with few tiles and enough K per split", "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  SpaceDomain dom = SpaceDomain::named("compact");
  dom.split_k = {0, 2, 4, 8, 16};
  auto splits_in = [](const std::vector<KernelConfig>& space) {
    return std::count_if(space.begin(), space.end(), [](const auto& k) { return k.split_k; });
  };
  CHECK(splits_in(pruned_space(problem(Precision::S, Op::N, Op::N, 4096, 4096, 4096), h100, dom)) ==
        0);
  const Problem thin = problem(Precision::S, Op::N, Op::N, 256, 256, 65536);
  const auto space = pruned_space(thin, h100, dom);
  CHECK(splits_in(space) > 0);
  for (const auto& k : space) {
    if (!k.split_k) continue;
    INFO(k.id());
    const int tiles = (256 / k.blk_m) * (256 / k.blk_n);
    CHECK(2 * tiles <= h100.sm_count);
    CHECK(tiles * k.splits() <= 4 * h100.sm_count);
    CHECK(k.k_per_split(thin.k) >= 4 * k.blk_k);
    CHECK(k.k_per_split(thin.k) * (k.splits() - 1) < thin.k);
  }
  KernelConfig c = KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16_SK8");
  CHECK(c.splits() == 8);
  CHECK(c.k_per_split(1000) == 128);  // 63 K steps over 8 splits: 8 steps each
  CHECK_FALSE(check_hard(thin, h100, c));
  c.split_k = 1;
  CHECK_THAT(check_hard(thin, h100, c)->message,
             Catch::Contains("SK1") && Catch::Contains("2..64"));
  c.split_k = 8;
  Problem batched = thin;
  batched.batch = 10000;
  CHECK_THAT(check_hard(batched, h100, c)->message, Catch::Contains("grid limit of 65535"));
}

TEST_CASE("constraints: the cp.async pipeline where it can run, vector copies in stored order",
          "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem s_nn = problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024);
  // Op N: A K-major (LA1), B N-major (LB0): copies land as they lie in memory.
  const KernelConfig c =
      KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB4_VA4_VB4_LA1_LB0_PD4_ST3_AC1");
  CHECK_FALSE(check_hard(s_nn, h100, c));
  auto message = [&](const Problem& p, const DeviceSpec& dev, const KernelConfig& k) {
    const auto v = check_hard(p, dev, k);
    return v ? v->message : std::string();
  };
  CHECK_THAT(message(s_nn, find_builtin_device("V100"), c),
             Catch::Contains("compute capability 8.0") && Catch::Contains("sm_70"));
  KernelConfig transposing = c;
  transposing.smem_b_kmajor = 1;
  CHECK_THAT(message(s_nn, h100, transposing), Catch::Contains("stored order"));
  // One-element copies of B land anywhere: B K-major under op N, which vector shared reads need.
  KernelConfig element_copies = transposing;
  element_copies.vec_b = 1;
  element_copies.vec_s = 4;
  CHECK_FALSE(check_hard(s_nn, h100, element_copies));
  element_copies.vec_a = 1;
  element_copies.smem_a_kmajor = 0;
  CHECK_THAT(message(s_nn, h100, element_copies), Catch::Contains("(LA1, LB1)"));
  KernelConfig register_staged = c;
  register_staged.async_copy = 0;
  CHECK_THAT(message(s_nn, h100, register_staged), Catch::Contains("more than 2 stages"));
  CHECK_THAT(message(problem(Precision::Z, Op::C, Op::N, 64, 64, 64), h100,
                     KernelConfig::parse("BM32_BN32_BK8_DX8_DY8_DXA8_DXB8_LA0_LB0_ST2_AC1")),
             Catch::Contains("op n or t"));

  // The space holds pipelines of every depth on the H100, some with vector shared reads of a
  // transposed B, and none on the V100.
  std::set<int> depths;
  int transposed_b_vector_reads = 0;
  for (const auto& k : pruned_space(s_nn, h100))
    if (k.async_copy) {
      depths.insert(k.stages);
      if (k.smem_b_kmajor == 1) {
        CHECK(k.vec_b == 1);
        transposed_b_vector_reads += k.vec_s > 1;
      }
    }
  CHECK(depths == std::set<int>{2, 3, 4});
  CHECK(transposed_b_vector_reads > 0);
  for (const auto& k : pruned_space(s_nn, find_builtin_device("V100"))) {
    CHECK(k.async_copy == 0);
    CHECK(k.stages <= 2);
  }
}

TEST_CASE("constraints: large problems with a short K loop keep lower-intensity tiles",
          "[search]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  // The lowest FMAs per loaded element (BM x BN / (BM + BN)) of a domain's pruned space.
  auto lowest_intensity = [&](const Problem& p, const SpaceDomain& dom) {
    double lowest = 1e9;
    enumerate_space(p, h100, dom, ConstraintOptions{}, [&](const KernelConfig& c) {
      lowest = std::min(lowest, double(c.blk_m) * c.blk_n / (c.blk_m + c.blk_n));
    });
    return lowest;
  };
  SpaceDomain relaxed = SpaceDomain::named("compact");
  CHECK(relaxed.short_k_min_fmas_per_load == 48);  // the recorded sweeps' floor
  relaxed.short_k_min_fmas_per_load = SpaceDomain{}.short_k_min_fmas_per_load;
  const Problem short_k = problem(Precision::S, Op::N, Op::N, 6144, 6080, 64);
  const Problem long_k = problem(Precision::S, Op::N, Op::N, 6144, 6080, 4096);
  const double relaxed_short = lowest_intensity(short_k, relaxed);
  CHECK(relaxed_short >= 24);
  CHECK(relaxed_short < 48);  // 64x64 (32) and 64x128 (42.7) tiles survive
  CHECK(lowest_intensity(short_k, SpaceDomain::named("compact")) >= 48);
  CHECK(lowest_intensity(long_k, relaxed) >= 48);  // a long K loop keeps the floor of 48
}
