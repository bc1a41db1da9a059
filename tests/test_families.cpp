// Kernel families without a GPU: which family and main loop run a configuration, which files its
// source is made of, and the tuning parameters each family declares.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "kernels/kernels.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

struct Case {
  const char* id;
  Precision precision;
  const char* family;
  const char* main_loop;
};

// One configuration of each family and each of its main loops.
const Case kCases[] = {
    {"BM32_BN32_BK8_DX8_DY8_DXA32_DXB8", Precision::S, "register-staged SIMT", "register-staged"},
    {"BM64_BN64_BK8_DX16_DY16_DXA64_DXB8_VA1_VB1_LA1_LB0_ST3_AC1", Precision::S, "cp.async SIMT",
     "cp.async multistage"},
    {"BM32_BN32_BK8_DX8_DY16_DXA32_DXB8_ST2_MM1", Precision::D, "mma", "register-staged"},
    {"BM32_BN64_BK8_DX8_DY16_DXA32_DXB8_ST3_MM2_AC1", Precision::D, "mma", "cp.async multistage"},
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("families: each configuration has exactly one family and one of its main loops",
          "[families]") {
  for (const Case& c : kCases) {
    INFO(c.id);
    const KernelConfig config = KernelConfig::parse(c.id);
    CHECK(std::string(family_of(config).rules->name) == c.family);
    CHECK(std::string(main_loop_of(config).rules->name) == c.main_loop);
  }
  KernelConfig config;
  for (int mma = 0; mma <= 4; ++mma)
    for (int async_copy = 0; async_copy <= 1; ++async_copy) {
      config.mma = mma;
      config.async_copy = async_copy;
      INFO(config.id());
      const auto selecting =
          std::count_if(kernel_families().begin(), kernel_families().end(),
                        [&](const Family& f) { return f.rules->selects(config); });
      CHECK(selecting == 1);
      const Family& f = family_of(config);
      CHECK(f.rules->bit == (mma ? kMma : async_copy ? kCpAsyncSimt : kRegisterStagedSimt));
      CHECK(main_loop_of(config).rules->async_copy == async_copy);
    }
}

TEST_CASE("families: a rendered source holds its family's files and no other's", "[families]") {
  std::set<std::string> used;
  for (const Case& c : kCases) {
    INFO(c.id);
    const KernelConfig config = KernelConfig::parse(c.id);
    const std::string source = render_source(config, c.precision, Op::N, Op::N);
    const std::vector<std::string> files = kernel_files(config);
    used.insert(files.begin(), files.end());
    CHECK(contains(source, kernel_template(config)));
    CHECK(contains(source, kernel_file(family_of(config).warp_tile)));
    CHECK(contains(source, kernel_file(main_loop_of(config).source)));
    CHECK(contains(source, kernel_file(main_loop_of(config).load_tiles)));
    for (const MainLoop& loop : main_loops())
      if (&loop != &main_loop_of(config)) {
        CHECK_FALSE(contains(source, kernel_file(loop.source)));
        CHECK_FALSE(contains(source, kernel_file(loop.load_tiles)));
      }
    for (const Family& f : kernel_families())
      if (std::string(f.warp_tile) != family_of(config).warp_tile)
        CHECK_FALSE(contains(source, kernel_file(f.warp_tile)));
    // The instructions of the other families are absent, not merely disabled.
    CHECK(contains(source, "asm(\"mma.sync.aligned") == (config.mma != 0));
    CHECK(contains(source, "asm volatile(\"cp.async.commit_group") == (config.async_copy != 0));
    CHECK(contains(source, "// family " + std::string(c.family) + ", main loop " + c.main_loop));
    // Every family's source compiles on its own.
    const CompileResult compiled = compile_source(source, "sm_90");
    INFO(compiled.log);
    CHECK(compiled.ok);
  }
  // Every embedded file is some family's.
  for (const char* file :
       {"common.cuh", "cp_async.cuh", "mma_sync.cuh", "prologue.cuh", "load_tiles_registers.cuh",
        "load_tiles_cp_async.cuh", "warp_simt.cuh", "warp_mma.cuh", "k_step.cuh",
        "main_loop_registers.cuh", "main_loop_multistage.cuh", "epilogue.cuh"}) {
    INFO(file);
    CHECK(!kernel_file(file).empty());
    CHECK(used.count(file) == 1);
  }
  CHECK_THROWS_AS(kernel_file("gemm_simt.cuh"), std::out_of_range);
}

TEST_CASE("families: a family's parameters are the parameter table's", "[families]") {
  std::set<std::string> declared;
  for (const Family& f : kernel_families()) {
    INFO(f.rules->name);
    const std::vector<std::string> tokens = family_parameters(f);
    CHECK(!tokens.empty());
    for (const std::string& token : tokens) {
      CHECK_NOTHROW(tuning_parameter(token));
      CHECK((tuning_parameter(token).families & f.rules->bit) != 0);
      declared.insert(token);
    }
    auto uses = [&](const char* token) {
      return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
    };
    CHECK(uses("BM"));
    CHECK(uses("MM") == (f.rules->bit == kMma));
    CHECK(uses("AC") == (f.rules->bit != kRegisterStagedSimt));
    // The cp.async pipeline has no register prefetch; every family has a vector C store (mma
    // kernels' staged through shared memory).
    CHECK(uses("PF") == (f.rules->bit != kCpAsyncSimt));
    CHECK(uses("VC"));
    CHECK(uses("SL") == (f.rules->bit != kMma));
  }
  // Every parameter shapes some family.
  for (const TuningParameter& p : tuning_parameters()) CHECK(declared.count(p.token) == 1);
}

TEST_CASE("families: the funnel's family constraints are the families' own rules", "[families]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM"),
                   a100 = find_builtin_device("A100-SXM4-80GB");
  Problem d;
  d.precision = Precision::D;
  d.m = d.n = d.k = 1024;
  d.lda = d.ldb = d.ldc = 1024;
  Problem s = d;
  s.precision = Precision::S;
  // m16n8k8 FP64 mma: on Hopper, not on the A100 (m8n8k4 only); a D problem, never an S one.
  const KernelConfig mma = KernelConfig::parse("BM64_BN64_BK8_DX8_DY16_DXA64_DXB8_ST2_MM3");
  const FamilyRules& fp64 = family_rules_of(mma);
  CHECK(std::string(fp64.name) == "mma");
  CHECK(fp64.supported(mma, d, h100));
  CHECK_FALSE(fp64.supported(mma, d, a100));
  CHECK(fp64.warp_tile_fits(mma, d));
  CHECK_FALSE(fp64.warp_tile_fits(mma, s));
  CHECK_FALSE(fp64.vector_fragments);
  CHECK(check_hard(d, h100, mma) == std::nullopt);
  REQUIRE(check_hard(s, h100, mma).has_value());
  CHECK(check_hard(s, h100, mma)->stage == Stage::LayoutDivides);
  // SIMT families have vector fragments: VS2 means something for them, SL1 too.
  KernelConfig simt = KernelConfig::parse("BM64_BN64_BK8_DX8_DY8_DXA64_DXB8_VS2");
  CHECK(family_rules_of(simt).vector_fragments);
  CHECK(simt.has_shared32_path());
  KernelConfig mma_vs2 = mma;
  mma_vs2.vec_s = 2;
  CHECK_FALSE(mma_vs2.has_shared32_path());
  // VS does not give an mma kernel a vector C store: its path is the staged one, VS or not.
  CHECK(mma_vs2.has_vector_c_path(Precision::D, 1024) == mma.has_vector_c_path(Precision::D, 1024));
  // An mma kernel's VC1 stages C through shared memory: real C, unsplit, ldc a multiple of 16
  // bytes, and each warp's 8 columns of its 64 rows (66 doubles each) within the tiles.
  CHECK_FALSE(mma.has_vector_c_path(Precision::D, 1024));  // staging 16,896 bytes, tiles 16,384
  KernelConfig mma_st3 = mma;
  mma_st3.stages = 3;  // tiles 24,576 bytes
  CHECK(mma_st3.has_vector_c_path(Precision::D, 1024));
  CHECK_FALSE(mma_st3.has_vector_c_path(Precision::D, 1023));
  CHECK_FALSE(mma_st3.has_vector_c_path(Precision::Z, 1024));
  mma_st3.split_k = 2;
  CHECK_FALSE(mma_st3.has_vector_c_path(Precision::D, 1024));
  // The register-staged loop keeps at most two shared buffers; cp.async needs two and cannot
  // conjugate, and runs without register prefetch.
  simt.stages = 3;
  CHECK_FALSE(main_loop_rules_of(simt).layout_ok(simt, s));
  simt.async_copy = 1;
  const MainLoopRules& cp_async = main_loop_rules_of(simt);
  CHECK(std::string(cp_async.name) == "cp.async multistage");
  CHECK(cp_async.supported(simt, s, h100));
  Problem conjugated = s;
  conjugated.precision = Precision::C;
  conjugated.op_a = Op::C;
  CHECK_FALSE(cp_async.supported(simt, conjugated, h100));
  simt.prefetch = 3;
  CHECK_FALSE(cp_async.variant_relevant(simt));
  // Each rule table matches the kernels' family table, one to one.
  for (const Family& f : kernel_families())
    CHECK(std::count_if(family_rules().begin(), family_rules().end(),
                        [&](const FamilyRules& r) { return &r == f.rules; }) == 1);
  CHECK(kernel_families().size() == family_rules().size());
  CHECK(main_loops().size() == main_loop_rules().size());
}

TEST_CASE("families: every family has its own model terms", "[families]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  for (const FamilyRules& f : family_rules()) {
    INFO(f.name);
    CHECK(has_warp_tile_terms(f.bit));
  }
  // The FP64 mma family runs on the tensor pipe: m16n8k8 at the full rate, m8n8k4 at half of
  // it on Hopper, with an eighth of a SIMT kernel's math instructions for m16n8k8's 16 x 8 x 8.
  KernelConfig c = KernelConfig::parse("BM64_BN64_BK8_DX8_DY16_DXA64_DXB8_ST2_MM3");
  const BankProfile bank = bank_profile(c, Precision::D, Op::N, Op::N);
  const WarpTileTerms m16 = warp_tile_terms(c, Precision::D, h100, bank);
  CHECK(m16.fmas_per_clock == h100.fp64_mma_per_sm);
  c.mma = 1;
  CHECK(warp_tile_terms(c, Precision::D, h100, bank).fmas_per_clock == h100.fp64_mma_per_sm / 2);
  KernelConfig simt = c;
  simt.mma = 0;
  const WarpTileTerms s = warp_tile_terms(simt, Precision::D, h100, bank);
  CHECK(s.fmas_per_clock == h100.fp64_lanes_per_sm);
  CHECK(m16.math_instr == Approx(s.math_instr * 4.0 / (16 * 8)));
  // cp.async keeps STAGES - 1 steps in flight and stores nothing through registers.
  simt.async_copy = 1;
  simt.stages = 3;
  CHECK(main_loop_terms(simt).steps_hiding_loads == 2.0);
  CHECK(main_loop_terms(simt).staging_stores_per_element == 0.0);
  simt.async_copy = 0;
  simt.stages = 2;
  simt.prefetch = 3;
  CHECK(main_loop_terms(simt).steps_hiding_loads == 1.0);
  CHECK(main_loop_terms(simt).staging_stores_per_element == 1.0);
}

TEST_CASE("families: FP16, BF16 and TF32 run on the mma family only, with their own shapes",
          "[families]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM"), v100 = find_builtin_device("V100");
  const Problem h = make_problem(Precision::H, Op::T, Op::N, 1024, 1024, 1024);
  const Problem t = make_problem(Precision::T, Op::T, Op::N, 1024, 1024, 1024);
  const KernelConfig k16 =
      KernelConfig::parse("BM64_BN64_BK32_DX8_DY16_DXA4_DXB4_VA8_VB8_LA0_LB0_ST3_MM4_AC1");
  CHECK(check_hard(h, h100, k16) == std::nullopt);
  // Fragments are words of k-contiguous rows, or an FP16 k-major tile's ldmatrix.trans reads,
  // which need a conflict-free pitch: LA1 at PD0 (64 halves, 128 bytes) is refused, and the
  // message says why; at PD8 (144 and 80 bytes) it is kept.
  KernelConfig la1 = k16;  // staged through registers, which could write either layout
  la1.async_copy = 0;
  la1.stages = 2;
  REQUIRE(check_hard(h, h100, la1) == std::nullopt);
  la1.smem_a_kmajor = 1;
  const auto la_fail = check_hard(h, h100, la1);
  REQUIRE(la_fail.has_value());
  CHECK_THAT(la_fail->message, Catch::Contains("ldmatrix.trans"));
  la1.pad = 8;
  CHECK(check_hard(h, h100, la1) == std::nullopt);
  KernelConfig odd_pad = k16;
  odd_pad.pad = 2;  // 34 halves a row: not whole fragments of 4
  CHECK(check_hard(h, h100, odd_pad).has_value());
  // TF32 takes m16n8k4 and m16n8k8 only; FP16 m16n8k8 and m16n8k16.
  KernelConfig tf32 = k16;
  tf32.vec_a = tf32.vec_b = 4;
  const auto t_fail = check_hard(t, h100, tf32);
  REQUIRE(t_fail.has_value());
  CHECK_THAT(t_fail->message, Catch::Contains("MM2 or MM3"));
  tf32.mma = 3;
  CHECK(check_hard(t, h100, tf32) == std::nullopt);
  KernelConfig m8n8 = k16;
  m8n8.mma = 1;
  CHECK(check_hard(h, h100, m8n8).has_value());
  // No SIMT kernel computes in FP16, and a GPU without the tensor cores refuses them.
  KernelConfig simt = k16;
  simt.mma = 0;
  const auto simt_fail = check_hard(h, h100, simt);
  REQUIRE(simt_fail.has_value());
  CHECK_THAT(simt_fail->message, Catch::Contains("tensor cores only"));
  CHECK(check_hard(h, v100, k16).has_value());
  CHECK(pruned_space(h, v100).empty());
  // The pruned spaces hold nothing else.
  for (const Problem& p : {h, t, make_problem(Precision::B, Op::N, Op::N, 300, 200, 100)}) {
    const auto space = pruned_space(p, h100);
    INFO(p.shape_id());
    REQUIRE(space.size() > 100);
    std::set<int> shapes;
    for (const auto& c : space) {
      // k-major tiles only where the fragments are read transposed, or a TF32 word at a time.
      if (p.precision != Precision::T && (c.smem_a_kmajor || c.smem_b_kmajor))
        CHECK(fragments_by_ldmatrix(c, p.precision));
      shapes.insert(c.mma);
    }
    // Op N A copied by cp.async as it is stored (LA1): here B NN, which had no cp.async kernel.
    if (p.op_a == Op::N)
      CHECK(std::any_of(space.begin(), space.end(), [](const KernelConfig& c) {
        return c.async_copy && c.smem_a_kmajor && c.vec_a > 1;
      }));
    CHECK(shapes == (p.precision == Precision::T ? std::set<int>{2, 3} : std::set<int>{3, 4}));
    // Their own domain values: 16-bit K steps of 64 with rows padded by 8 or 16.
    if (p.precision != Precision::T)
      CHECK(std::any_of(space.begin(), space.end(),
                        [](const KernelConfig& c) { return c.blk_k == 64 && c.pad >= 8; }));
  }
  // ... which the FP32 and FP64 domains do not gain.
  const SpaceDomain full;
  CHECK(full.for_precision(Precision::S).blk_k == full.blk_k);
  CHECK(full.for_precision(Precision::Z).pad == full.pad);
  CHECK(enumerates(full.for_precision(Precision::B).blk_k, 64));
  CHECK(enumerates(full.for_precision(Precision::T).pad, 16));
  // The tensor pipe's rate: TF32 at half the FP16 rate, so the same tile is predicted slower.
  CHECK(h100.peak_gflops(Precision::H) == Approx(2.0 * 1024 * 132 * 1980 * 1e-3));
  CHECK(h100.peak_gflops(Precision::T) == Approx(h100.peak_gflops(Precision::H) / 2));
  const Prediction ph = predict(h, h100, k16), pt = predict(t, h100, tf32);
  CHECK(pt.t_compute > 1.9 * ph.t_compute);
}

TEST_CASE("families: FP16, BF16 and TF32 fragments by ldmatrix where its rows are conflict-free",
          "[families]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem h = make_problem(Precision::H, Op::T, Op::N, 4096, 4096, 4096);
  KernelConfig c =
      KernelConfig::parse("BM128_BN128_BK32_DX16_DY16_DXA4_DXB4_VA8_VB8_LA0_LB0_ST3_MM4_AC1");
  // 16-bit rows of 32 + PD: 64 bytes (PD0) and 96 (PD16) put rows 0 and 2 (0 and 4) on the same
  // banks; 80 bytes (PD8) spread 8 rows over all 32.
  const std::map<int, bool> by_pad{{0, false}, {4, false}, {8, true}, {16, false}};
  for (const auto& [pad, ldmatrix] : by_pad) {
    c.pad = pad;
    INFO("PD" << pad);
    CHECK(fragments_by_ldmatrix(c, Precision::H) == ldmatrix);
    CHECK(fragments_by_ldmatrix(c, Precision::B) == ldmatrix);
    const bool defined = contains(render_source(c, Precision::H, Op::T, Op::N, BatchKind::Strided),
                                  "#define LDMATRIX 1");
    CHECK(defined == ldmatrix);
  }
  // TF32 rows of 4-byte values: 144 bytes (BK32 PD4) take it, 160 (PD8) do not.
  c.pad = 4;
  CHECK(fragments_by_ldmatrix(c, Precision::T));
  c.pad = 8;
  CHECK_FALSE(fragments_by_ldmatrix(c, Precision::T));
  // Never for the FP32 and FP64 kinds.
  CHECK_FALSE(fragments_by_ldmatrix(c, Precision::D));
  // A k-major tile is read transposed (ldmatrix.trans) where its own pitch is conflict-free too:
  // 128 + 8 halves (272 bytes, 17 x 16) is, 128 + 16 (288, 18 x 16) is not; never for TF32,
  // whose 4-byte values a transposing read of 16-bit ones would split.
  c.pad = 8;
  c.smem_a_kmajor = 1;
  CHECK(fragments_by_ldmatrix(c, Precision::H));
  CHECK(contains(render_source(c, Precision::H, Op::N, Op::N, BatchKind::Strided),
                 "#define LDMATRIX 1"));
  c.smem_b_kmajor = 1;
  CHECK(fragments_by_ldmatrix(c, Precision::B));
  c.pad = 4;
  CHECK_FALSE(fragments_by_ldmatrix(c, Precision::T));
  c.pad = 16;
  CHECK_FALSE(fragments_by_ldmatrix(c, Precision::H));
  c.smem_a_kmajor = 0;
  c.smem_b_kmajor = 0;
  // The model reads 8 halves a lane and instruction (four 8 x 8 matrices, 4 wavefronts) against
  // 4 halves as two words (2 wavefronts): the same shared traffic in half the instructions.
  c.pad = 8;
  const BankProfile ldm = bank_profile(c, Precision::H, Op::T, Op::N);
  CHECK(ldm.fragment_vector_a == 8);
  CHECK(ldm.fragment_vector_b == 8);
  CHECK(ldm.read_a == 4);
  CHECK(ldm.read_b == 4);
  KernelConfig words = c;
  words.pad = 16;
  const BankProfile w = bank_profile(words, Precision::H, Op::T, Op::N);
  CHECK(w.fragment_vector_a == 4);
  CHECK(w.read_a == 2);
  const WarpTileTerms tl = warp_tile_terms(c, Precision::H, h100, ldm),
                      tw = warp_tile_terms(words, Precision::H, h100, w);
  CHECK(tl.fragment_instr == Approx(tw.fragment_instr / 2));
  CHECK(ldm.read_a / ldm.fragment_vector_a == Approx(w.read_a / w.fragment_vector_a));
  CHECK(check_hard(h, h100, c) == std::nullopt);
  // k-major tiles (op N A, op T B in stored order, as cp.async copies them) read transposed: the
  // same 4 conflict-free wavefronts an x4, and a kernel the funnel keeps; at PD16 the pitch of
  // 144 halves (18 x 16 bytes) puts rows 0 and 4 on the same banks, and FP16 has no other way
  // to read them.
  KernelConfig trans = c;  // 16 threads of 8 halves along M (N), the stored order
  trans.dim_xa = trans.dim_xb = 16;
  trans.dim_ya = trans.dim_yb = 16;
  trans.smem_a_kmajor = 1;
  trans.smem_b_kmajor = 1;
  const Problem nt = make_problem(Precision::H, Op::N, Op::T, 4096, 4096, 4096);
  const BankProfile tp = bank_profile(trans, Precision::H, Op::N, Op::T);
  CHECK(tp.fragment_vector_a == 8);
  CHECK(tp.read_a == 4);
  CHECK(tp.read_b == 4);
  CHECK(check_hard(nt, h100, trans) == std::nullopt);
  trans.pad = 16;
  const auto refused = check_hard(nt, h100, trans);
  REQUIRE(refused.has_value());
  CHECK(contains(refused->message, "ldmatrix.trans"));
}
