// Pointer-array and variable-size batches without a GPU: the rendered batch mode, NVRTC compiles
// of every mode, argument validation and the dispatch rule.
#include <cmath>
#include <complex>
#include <random>
#include <string>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"
#include "tests/shell.hpp"

using namespace gemmtune;
using gemmtune::test::Run;

namespace {

const KernelConfig kSimt = KernelConfig::parse("BM32_BN32_BK8_DX8_DY8_DXA32_DXB8");

bool defines(const std::string& source, const std::string& line) {
  return source.find("\n" + line + "\n") != std::string::npos;
}

// The message of the InputError `call` throws ("" if none).
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Problem call_of(Precision p, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  Problem c;
  c.precision = p;
  c.m = m;
  c.n = n;
  c.k = k;
  c.lda = std::max<std::int64_t>(m, 1);
  c.ldb = std::max<std::int64_t>(k, 1);
  c.ldc = std::max<std::int64_t>(m, 1);
  c.batch = batch;
  return c;
}

}  // namespace

TEST_CASE("batched: the rendered source carries the batch kind, strided sources unchanged",
          "[batched]") {
  const std::string strided = render_source(kSimt, Precision::S, Op::N, Op::T);
  CHECK(strided == render_source(kSimt, Precision::S, Op::N, Op::T, BatchKind::Strided));
  // The template's own default (#ifndef BATCH_MODE) is the only definition.
  CHECK_FALSE(defines(strided, "#define BATCH_MODE 1"));
  CHECK(strided.substr(0, strided.find(kernel_template(kSimt))).find("BATCH_MODE") ==
        std::string::npos);
  const std::string pointer =
      render_source(kSimt, Precision::S, Op::N, Op::T, BatchKind::PointerArray);
  const std::string variable =
      render_source(kSimt, Precision::S, Op::N, Op::T, BatchKind::Variable);
  CHECK(defines(pointer, "#define BATCH_MODE 1"));
  CHECK(defines(variable, "#define BATCH_MODE 2"));
  // Only the one line differs: the same template, the same tuning macros.
  CHECK(pointer.size() == strided.size() + std::string("#define BATCH_MODE 1\n").size());

  // Split-K: pointer arrays keep it (their beta pass reads the array); a variable batch refuses.
  KernelConfig split = kSimt;
  split.split_k = 4;
  CHECK(defines(render_source(split, Precision::D, Op::N, Op::N, BatchKind::PointerArray),
                "#define SPLIT_K 4"));
  const std::string refused = error_of(
      [&] { (void)render_source(split, Precision::D, Op::N, Op::N, BatchKind::Variable); });
  CHECK(refused.find("SK4") != std::string::npos);
  CHECK(refused.find("variable-size batch") != std::string::npos);
}

TEST_CASE("batched: batch kinds by name", "[batched]") {
  for (BatchKind k : {BatchKind::Strided, BatchKind::PointerArray, BatchKind::Variable})
    CHECK(parse_batch_kind(to_string(k)) == k);
  CHECK(parse_batch_kind("vbatched") == BatchKind::Variable);
  CHECK(parse_batch_kind("pointer-array") == BatchKind::PointerArray);
  CHECK(error_of([] { (void)parse_batch_kind("grouped"); }).find("'grouped'") != std::string::npos);
}

TEST_CASE("batched: every batch mode compiles for sm_90 in S, D, C and Z", "[batched][compile]") {
  // Per precision, the best-ranked kernel of each family on an H100 (register-staged SIMT,
  // cp.async SIMT, FP64 mma) and a split-K one (not for a variable batch).
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  SpaceDomain domain = SpaceDomain::named("compact");
  domain.mma = {0, 1, 2, 3, 4};
  domain.async_copy = {0, 1};
  domain.stages = {1, 2, 3};
  for (Precision p : {Precision::S, Precision::D, Precision::C, Precision::Z}) {
    const Op op_b = is_complex(p) ? Op::C : Op::T;
    const Problem problem = make_problem(p, Op::N, op_b, 512, 512, 512, 16);
    std::vector<KernelConfig> configs;
    unsigned families = 0;
    for (const Ranked& r : rank_space(problem, h100, 2000, {}, domain).top) {
      const unsigned family = r.config.mma ? 4u : r.config.async_copy ? 2u : 1u;
      if ((families & family) || r.config.splits() > 1) continue;
      families |= family;
      configs.push_back(r.config);
    }
    REQUIRE(!configs.empty());
    KernelConfig split = configs.front();
    split.split_k = 3;
    for (BatchKind kind : {BatchKind::Strided, BatchKind::PointerArray, BatchKind::Variable}) {
      std::vector<KernelConfig> kernels;
      for (const KernelConfig& c : configs) kernels.push_back(batched_config(c, kind));
      if (kind != BatchKind::Variable) kernels.push_back(split);
      for (const KernelConfig& c : kernels) {
        const CompileResult r = compile_source(render_source(c, p, Op::N, op_b, kind), "sm_90");
        INFO(to_char(p) << " " << to_string(kind) << " " << c.id() << "\n" << r.log);
        CHECK(r.ok);
      }
    }
  }
}

TEST_CASE("batched: arguments are checked before any GPU is touched", "[batched]") {
  float storage = 0;
  const float* const* a = reinterpret_cast<const float* const*>(&storage);
  float* const* c = reinterpret_cast<float* const*>(&storage);
  const int* sizes = reinterpret_cast<const int*>(&storage);
  auto batched = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                     std::int64_t batch, const float* const* a_array) {
    return error_of([&] {
      gemm_batched(Op::N, Op::N, m, n, k, 1.0f, a_array, lda, a, 64, 0.0f, c, 64, batch);
    });
  };
  CHECK(batched(-1, 8, 8, 64, 2, a).find("m = -1") != std::string::npos);
  CHECK(batched(8, -3, 8, 64, 2, a).find("n = -3") != std::string::npos);
  CHECK(batched(8, 8, -2, 64, 2, a).find("k = -2") != std::string::npos);
  CHECK(batched(8, 8, 8, 64, 0, a).find("batch = 0") != std::string::npos);
  CHECK(batched(8, 8, 8, 64, 65536, a).find("65535") != std::string::npos);
  CHECK(batched(8, 8, 8, 64, 2, nullptr).find("a_array is null") != std::string::npos);
  CHECK(batched(80, 8, 8, 64, 2, a).find("lda = 64") != std::string::npos);
  // ldc >= max(1, M) holds for an empty C too, as BLAS asks.
  CHECK(error_of([&] {
          gemm_batched(Op::N, Op::N, 0, 8, 8, 1.0f, a, 1, a, 8, 0.0f, c, 0, 1);
        }).find("ldc = 0") != std::string::npos);

  auto vbatched = [&](std::int64_t batch, std::int64_t max_m, const int* m_array,
                      const int* ldc_array) {
    return error_of([&] {
      gemm_vbatched(Op::N, Op::T, m_array, sizes, sizes, std::complex<double>(1, 0),
                    reinterpret_cast<const std::complex<double>* const*>(a), sizes,
                    reinterpret_cast<const std::complex<double>* const*>(a), sizes,
                    std::complex<double>(0, 0), reinterpret_cast<std::complex<double>* const*>(c),
                    ldc_array, batch, max_m, 16, 16);
    });
  };
  CHECK(vbatched(0, 16, sizes, sizes).find("batch = 0") != std::string::npos);
  CHECK(vbatched(4, -1, sizes, sizes).find("max_m = -1") != std::string::npos);
  CHECK(vbatched(4, 16, nullptr, sizes).find("m is null") != std::string::npos);
  CHECK(vbatched(4, 16, sizes, nullptr).find("ldc is null") != std::string::npos);
  // Conjugates need a complex type, in batches as in gemm().
  CHECK(error_of([&] {
          gemm_batched(Op::C, Op::N, 8, 8, 8, 1.0f, a, 8, a, 8, 0.0f, c, 8, 1);
        }).find("complex") != std::string::npos);
}

TEST_CASE("batched: the dispatch rule, representative problem and adapted configuration",
          "[batched]") {
  // Pointer arrays: the strided problem of the call's shape, leading dimensions and batch.
  Problem call = call_of(Precision::D, 100, 60, 40, 32);
  call.lda = 128;
  const Problem pointer = batched_representative(call, BatchKind::PointerArray);
  CHECK(pointer == call);
  // K = 0 (C = beta * C) chooses as K = 1; M = 0 as M = 1.
  CHECK(batched_representative(call_of(Precision::D, 100, 60, 0, 32), BatchKind::PointerArray).k ==
        1);
  CHECK(batched_representative(call_of(Precision::D, 0, 60, 5, 32), BatchKind::PointerArray).m ==
        1);
  // Variable: the maxima, packed, the batch kept; the call's leading dimensions do not matter.
  Problem maxima = call_of(Precision::C, 300, 200, 0, 1000);
  maxima.op_a = Op::T;
  maxima.lda = maxima.ldb = maxima.ldc = 0;
  const Problem variable = batched_representative(maxima, BatchKind::Variable);
  CHECK(variable.m == 300);
  CHECK(variable.n == 200);
  CHECK(variable.k == 1);
  CHECK(variable.lda == 1);  // op T: rows of A are K
  CHECK(variable.ldb == 1);
  CHECK(variable.ldc == 300);
  CHECK(variable.batch == 1000);

  KernelConfig chosen =
      KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB4_VA4_VB4_ST3_UR0_AC1_VS4_VC1");
  chosen.split_k = 4;
  CHECK(batched_config(chosen, BatchKind::Strided) == chosen);
  CHECK(batched_config(chosen, BatchKind::PointerArray) == chosen);
  KernelConfig expected = chosen;
  expected.split_k = 0;
  expected.vec_a = expected.vec_b = 1;
  CHECK(batched_config(chosen, BatchKind::Variable) == expected);
  // What the store's choice for the representative becomes: the same kernel without what the
  // variable batch cannot promise.
  const std::string source = render_source(batched_config(chosen, BatchKind::Variable),
                                           Precision::S, Op::N, Op::N, BatchKind::Variable);
  CHECK(defines(source, "#define VEC_A 1"));
  CHECK_FALSE(defines(source, "#define SPLIT_K 4"));
}

TEST_CASE("batched: source, compile and measure take --batch-kind", "[batched][cli]") {
  using gemmtune::test::run;
  const Run pointer =
      run("source --config BM32_BN32_BK16_DX8_DY8_DXA32_DXB16_SK4 -p d --batch-kind pointer");
  CHECK(pointer.status == 0);
  CHECK_THAT(pointer.output,
             Catch::Contains("#define BATCH_MODE 1") && Catch::Contains("#define SPLIT_K 4"));
  const Run variable =
      run("source --config BM32_BN32_BK16_DX8_DY8_DXA32_DXB16_SK4 -p d --batch-kind variable");
  CHECK(variable.status == 2);
  CHECK_THAT(variable.output, Catch::Contains("SK4") && Catch::Contains("variable-size batch"));
  const Run unknown =
      run("source --config BM32_BN32_BK16_DX8_DY8_DXA32_DXB16 --batch-kind grouped");
  CHECK(unknown.status == 2);
  CHECK_THAT(unknown.output, Catch::Contains("'grouped'"));
  // measure checks its batch options before it looks for a GPU.
  for (const auto& [args, says] :
       {std::pair{"measure -p s -m 64 -n 64 -k 64 --batch-kind variable --sizes /nonexistent",
                  "cannot read the sizes file"},
        std::pair{"measure -p s -m 64 -n 64 -k 64 --batch-kind pointer --sizes /nonexistent",
                  "--sizes is for --batch-kind variable"},
        std::pair{"measure -p s -m 64 -n 64 -k 64 --batch-kind variable --min-size 65",
                  "--min-size = 65"}}) {
    const Run r = run(args);
    INFO(args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains(says));
  }
  const Run compiled = run(
      "compile --config BM32_BN32_BK16_DX8_DY8_DXA32_DXB16 -p z --opb c --arch sm_90 --cache '' "
      "--batch-kind variable");
  INFO(compiled.output);
  CHECK(compiled.status == 0);
}

TEST_CASE("batched: the FP64 host reference of one matrix, every op", "[batched]") {
  using Z = std::complex<double>;
  // A (2 x 3) and B (3 x 2) as op(.) gives them; stored transposed for T and C (C conjugated).
  const Z a[6] = {{1, 1}, {2, 0}, {0, 1}, {3, -1}, {1, 0}, {-2, 2}};  // column-major 2 x 3
  const Z b[6] = {{1, 0}, {0, 2}, {1, -1}, {2, 0}, {-1, 1}, {0, 1}};  // column-major 3 x 2
  auto stored = [](const Z* x, int rows, int cols, Op op) {
    std::vector<Z> out(6);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) {
        const Z v = x[i + j * rows];
        if (op == Op::N)
          out[size_t(i + j * rows)] = v;
        else
          out[size_t(j + i * cols)] = op == Op::C ? std::conj(v) : v;
      }
    return out;
  };
  Z want[4];
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      Z s = 0;
      for (int p = 0; p < 3; ++p) s += a[i + p * 2] * b[p + j * 3];
      want[i + j * 2] = Z(0.5, 1) * s + Z(2, 0) * Z(i + 1, j);
    }
  for (Op oa : {Op::N, Op::T, Op::C})
    for (Op ob : {Op::N, Op::T, Op::C}) {
      const std::vector<Z> sa = stored(a, 2, 3, oa), sb = stored(b, 3, 2, ob);
      const MatrixShape shape{2, 2, 3, oa == Op::N ? 2 : 3, ob == Op::N ? 3 : 2, 2};
      Z c[4] = {{1, 0}, {2, 0}, {1, 1}, {2, 1}};
      reference_gemm(oa, ob, shape, {0.5, 1}, {2, 0}, sa.data(), sb.data(), c);
      for (int e = 0; e < 4; ++e) {
        INFO(to_char(oa) << to_char(ob) << " element " << e);
        CHECK(std::abs(c[e] - want[e]) < 1e-12);
      }
    }
  // K = 0: beta * C; beta = 0: C is not read (NaN stays out).
  Z c[1] = {{3, 1}};
  reference_gemm(Op::N, Op::N, MatrixShape{1, 1, 0, 1, 1, 1}, {1, 0}, {0, 2}, nullptr, nullptr, c);
  CHECK(std::abs(c[0] - Z(-2, 6)) < 1e-15);
  c[0] = Z(std::nan(""), 0);
  const Z one[1] = {{1, 0}};
  reference_gemm(Op::N, Op::N, MatrixShape{1, 1, 1, 1, 1, 1}, {2, 0}, {0, 0}, one, one, c);
  CHECK(c[0] == Z(2, 0));
}

TEST_CASE(
    "gemm's operands: vector loads need aligned A and B, and every pruned configuration has "
    "a scalar-load variant that runs",
    "[runtime]") {
  const KernelConfig c =
      KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16_VA4_VB2_LA1_LB1_ST2");
  const auto at = [](std::uintptr_t address) { return reinterpret_cast<const void*>(address); };
  CHECK(operands_aligned(c, Precision::S, at(0x1000), at(0x1000)));
  CHECK_FALSE(operands_aligned(c, Precision::S, at(0x1004), at(0x1000)));  // VA4: 16 bytes
  CHECK(operands_aligned(c, Precision::S, at(0x1010), at(0x1008)));        // VB2: 8 bytes
  CHECK_FALSE(operands_aligned(c, Precision::S, at(0x1000), at(0x1004)));
  CHECK_FALSE(operands_aligned(c, Precision::D, at(0x1010), at(0x1008)));  // VB2 of D: 16 bytes
  const KernelConfig scalar = scalar_operand_loads(c);
  CHECK(scalar.vec_a == 1);
  CHECK(scalar.vec_b == 1);
  CHECK(operands_aligned(scalar, Precision::S, at(0x1004), at(0x1004)));
  KernelConfig rest = scalar;
  rest.vec_a = c.vec_a;
  rest.vec_b = c.vec_b;
  CHECK(rest == c);  // nothing else changes

  // The premise of gemm()'s fallback: dropping vector loads keeps a configuration valid.
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  std::size_t vector_loads = 0;
  for (const auto& [p, domain] :
       {std::pair{make_problem(Precision::S, Op::N, Op::T, 1000, 1000, 1000), "full"},
        std::pair{make_problem(Precision::D, Op::T, Op::N, 333, 517, 129), "full"},
        std::pair{make_problem(Precision::C, Op::N, Op::N, 640, 640, 64), "compact"}})
    for (const KernelConfig& k : pruned_space(p, h100, SpaceDomain::named(domain))) {
      if (k.vec_a == 1 && k.vec_b == 1) continue;
      ++vector_loads;
      // Only the register estimates may object (more load steps); the compiler spills then.
      const auto v = check_hard(p, h100, scalar_operand_loads(k));
      if (v && v->stage != Stage::RegistersPerThread && v->stage != Stage::RegistersPerBlock)
        FAIL(k.id() << " for " << p.shape_id() << ": " << v->message);
    }
  CHECK(vector_loads > 1000);
}

TEST_CASE("batched: a variable batch's kernels are ranked for its sizes", "[batched]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  Problem call;
  call.precision = Precision::S;
  call.m = call.n = call.k = 128;
  call.batch = 5000;
  const Problem largest = batched_representative(call, BatchKind::Variable);
  std::vector<Problem> sizes;
  std::uint64_t x = 7;
  auto draw = [&] {  // sizes uniform in [1, 128], a fixed sequence
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return std::int64_t(x >> 33) % 128 + 1;
  };
  for (int i = 0; i < 5000; ++i) {
    Problem p = largest;
    p.m = draw();
    p.n = draw();
    p.k = draw();
    sizes.push_back(p);
  }
  const std::vector<Ranked> ranked = rank_for_sizes(largest, sizes, d, 8);
  REQUIRE(ranked.size() == 8);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const KernelConfig& c = ranked[i].config;
    INFO(c.id());
    // As the variable kernel runs, and valid for the largest matrix the launch covers.
    CHECK(c.split_k == 0);
    CHECK(c.vec_a == 1);
    CHECK(c.vec_b == 1);
    CHECK_FALSE(check_hard(largest, d, c).has_value());
    if (i > 0) CHECK(ranked[i - 1].prediction.time_s <= ranked[i].prediction.time_s);
  }
  // Matrices of 64 on average waste most of a tile chosen for 128: the sizes' pick is smaller
  // than the one the batch's representative problem (its largest sizes) is ranked to.
  const KernelConfig for_largest = rank_space(largest, d, 1).top.at(0).config;
  const KernelConfig for_sizes = ranked.front().config;
  CHECK(for_sizes.blk_m * for_sizes.blk_n < for_largest.blk_m * for_largest.blk_n);
  // More than the 16 candidates a quantile gives by default, when asked for.
  CHECK(rank_for_sizes(largest, sizes, d, 80).size() == 80);
  CHECK_THROWS_AS(rank_for_sizes(largest, sizes, d, 0), InputError);
  CHECK_THROWS_AS(rank_for_sizes(largest, {}, d, 4), InputError);
}

TEST_CASE("batched: a variable batch's call chooses its kernel for its sizes", "[batched]") {
  const DeviceSpec d = find_builtin_device("H200");
  const std::string no_store = "/nonexistent/gemmtune.db";
  Problem call;
  call.precision = Precision::D;
  call.m = call.n = call.k = 512;
  call.batch = 2000;
  const Problem largest = batched_representative(call, BatchKind::Variable);
  std::uint64_t x = 11;
  auto sizes_up_to = [&](std::int64_t most) {  // uniform in [1, most], a fixed sequence
    std::vector<Problem> sizes;
    for (int i = 0; i < 2000; ++i) {
      Problem p = largest;
      for (std::int64_t* v : {&p.m, &p.n, &p.k}) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        *v = std::int64_t(x >> 33) % most + 1;
      }
      sizes.push_back(p);
    }
    return sizes;
  };
  const KernelConfig for_largest =
      batched_config(choose_kernel(largest, d, no_store).config, BatchKind::Variable);
  // Matrices of at most 32 under maxima of 512: a tile made for them, predicted faster over them.
  const DispatchChoice small = choose_for_sizes(largest, sizes_up_to(32), d, no_store);
  INFO(small.why);
  CHECK_FALSE(small.config == for_largest);
  CHECK(small.config.blk_m * small.config.blk_n < for_largest.blk_m * for_largest.blk_n);
  CHECK(small.config.split_k == 0);
  CHECK(small.config.vec_a == 1);
  CHECK(small.config.vec_b == 1);
  CHECK_FALSE(check_hard(largest, d, small.config).has_value());
  REQUIRE(small.candidates.size() == 2);
  CHECK(small.candidates[0].config == for_largest);
  CHECK(small.candidates[1].predicted_s < small.candidates[0].predicted_s);
  CHECK(small.why.find("ranked for the sizes") != std::string::npos);
  // Matrices up to the maxima: a larger tile than for the small ones.
  const DispatchChoice full = choose_for_sizes(largest, sizes_up_to(512), d, no_store);
  CHECK(full.config.blk_m * full.config.blk_n > small.config.blk_m * small.config.blk_n);
  REQUIRE(full.candidates.size() == 2);
  CHECK(full.config == (full.candidates[1].predicted_s < full.candidates[0].predicted_s
                            ? full.candidates[1].config
                            : full.candidates[0].config));
  CHECK_THROWS_AS(choose_for_sizes(largest, {}, d, no_store), InputError);
  // The score is rank_for_sizes's: its best scores what it ranked it at.
  const std::vector<Problem> sizes = sizes_up_to(512);
  const Ranked first = rank_for_sizes(largest, sizes, d, 1).at(0);
  CHECK(time_for_sizes(largest, sizes, d, first.config) == first.prediction.time_s);
  CHECK(time_for_sizes(largest, sizes, d, for_largest) > 0);
  CHECK_THROWS_AS(time_for_sizes(largest, {}, d, for_largest), InputError);
  // One launch runs the batch: matrices all of one size score as that size's strided batch (one
  // launch cost, one wave tail), not as a launch per slice of the batch.
  Problem one = largest;
  one.m = 100;
  one.n = 60;
  one.k = 200;
  one.lda = one.ldb = one.ldc = 0;  // packed, as the strided batch below
  one.batch = 1;
  Problem strided = one;
  strided.batch = 2000;
  strided = strided.normalized();
  CHECK(time_for_sizes(largest, std::vector<Problem>(2000, one), d, for_largest) ==
        Approx(predict(strided, d, for_largest).time_s).epsilon(1e-12));
}

TEST_CASE("batched: uniform shapes draw m, n, k in [1, max] per matrix, the same for a seed",
          "[batched]") {
  const std::vector<MatrixShape> a = uniform_shapes(2000, 32, 128, 512, 7);
  REQUIRE(a.size() == 2000);
  std::mt19937 rng(7);
  auto draw = [&](std::int64_t max) {
    return std::uniform_int_distribution<std::int64_t>(1, max)(rng);
  };
  std::int64_t most_m = 0, most_k = 0;
  for (const MatrixShape& s : a) {
    const std::int64_t m = draw(32), n = draw(128), k = draw(512);
    CHECK(s == MatrixShape{m, n, k});
    most_m = std::max(most_m, s.m);
    most_k = std::max(most_k, s.k);
  }
  CHECK(most_m == 32);  // 2000 draws reach the maximum
  CHECK(most_k <= 512);
  CHECK(uniform_shapes(2000, 32, 128, 512, 7) == a);
  CHECK_FALSE(uniform_shapes(2000, 32, 128, 512, 8) == a);
  CHECK(uniform_shapes(0, 32, 32, 32, 7).empty());
}
