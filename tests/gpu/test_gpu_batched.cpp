// On the GPU: pointer-array and variable-size batches, through the runtime and through kernels
// of every family, verified matrix by matrix against an FP64 host reference (BatchedData).
#include <cuda_runtime.h>

#include <complex>
#include <filesystem>
#include <optional>
#include <random>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

const Precision kPrecisions[] = {Precision::S, Precision::D, Precision::C, Precision::Z};

// NN, TN, NT, TT, and for complex types the conjugating shapes CC, NC, CT.
std::vector<std::pair<Op, Op>> ops_of(Precision p) {
  std::vector<std::pair<Op, Op>> out = {{Op::N, Op::N}, {Op::T, Op::N}, {Op::N, Op::T}};
  if (is_complex(p)) {
    out.push_back({Op::C, Op::C});
    out.push_back({Op::N, Op::C});
    out.push_back({Op::C, Op::T});
  } else {
    out.push_back({Op::T, Op::T});
  }
  return out;
}

Scalar alpha_of(Precision p) {
  return is_complex(p) ? Scalar{0.75, -0.5} : Scalar{1.5, 0};
}
Scalar beta_of(Precision p, bool zero) {
  if (zero) return {0, 0};
  return is_complex(p) ? Scalar{-0.5, 0.25} : Scalar{0.5, 0};
}

// A store with nothing in it: every batched call takes the model's pick.
struct EmptyStore {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / "gemmtune_gpu_batched_dispatch.db";
  EmptyStore() {
    std::filesystem::remove(path);
    set_dispatch_database(path.string());
  }
  ~EmptyStore() { std::filesystem::remove(path); }
};

// gemm_vbatched measuring `candidates` of its kernels on the batch's first call, back to the
// runtime's default however the case ends. The cases that check the model's choice (or only the
// result, on many representatives) run with 0.
struct VbatchedMeasure {
  explicit VbatchedMeasure(int candidates) { set_vbatched_measure(candidates); }
  ~VbatchedMeasure() { set_vbatched_measure(kDefaultVbatchedMeasure); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreate(&s) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

void check_every_matrix(const BatchedData& data, Precision p, const std::string& what) {
  const std::vector<double> errors = data.errors();
  REQUIRE(errors.size() == data.shapes().size());
  for (size_t z = 0; z < errors.size(); ++z) {
    const MatrixShape& s = data.shapes()[z];
    INFO(what << ": matrix " << z << " of " << errors.size() << ", " << s.m << "x" << s.n << "x"
              << s.k << ", ld " << s.lda << " " << s.ldb << " " << s.ldc);
    CHECK(errors[z] <= verify_tolerance(p));  // NaN (an unwritten entry) fails too
  }
}

template <typename T>
T scalar_as(Scalar s) {
  if constexpr (std::is_arithmetic_v<T>)
    return T(s.re);
  else
    return T(typename T::value_type(s.re), typename T::value_type(s.im));
}

// gemm_batched or gemm_vbatched on the data, in the precision's own types.
template <typename T>
void call_typed(const BatchedData& data, BatchKind kind, cudaStream_t stream) {
  const BatchArrays& x = data.arrays();
  const Problem c = data.call(kind);
  const auto a = static_cast<const T* const*>(x.a);
  const auto b = static_cast<const T* const*>(x.b);
  const auto out = static_cast<T* const*>(const_cast<void*>(x.c));
  const T alpha = scalar_as<T>(c.alpha), beta = scalar_as<T>(c.beta);
  if (kind == BatchKind::PointerArray)
    gemm_batched(c.op_a, c.op_b, c.m, c.n, c.k, alpha, a, c.lda, b, c.ldb, beta, out, c.ldc,
                 c.batch, stream);
  else
    gemm_vbatched(c.op_a, c.op_b, x.m, x.n, x.k, alpha, a, x.lda, b, x.ldb, beta, out, x.ldc,
                  c.batch, c.m, c.n, c.k, stream);
}

void call_runtime(const BatchedData& data, Precision p, BatchKind kind, cudaStream_t stream) {
  switch (p) {
    case Precision::S:
      return call_typed<float>(data, kind, stream);
    case Precision::D:
      return call_typed<double>(data, kind, stream);
    case Precision::C:
      return call_typed<std::complex<float>>(data, kind, stream);
    case Precision::Z:
      return call_typed<std::complex<double>>(data, kind, stream);
    default:
      FAIL("pointer and variable batches take s, d, c or z");
  }
}

// Runs the runtime's call on a reset C and checks every matrix.
void run_and_check(const BatchedData& data, Precision p, BatchKind kind, const std::string& what) {
  Stream stream;
  data.reset_output(stream.s);
  call_runtime(data, p, kind, stream.s);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  check_every_matrix(data, p, what);
}

std::string label(Precision p, Op a, Op b) {
  return std::string{to_char(p), to_char(a), to_char(b)};
}

// Random shapes in [0, max_size], every fifth size 0 in turn (M, N, K), leading dimensions padded
// at random.
std::vector<MatrixShape> random_shapes(int batch, std::int64_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> size(1, max_size), pad(0, 3);
  std::vector<MatrixShape> shapes;
  for (int i = 0; i < batch; ++i) {
    MatrixShape s{size(rng), size(rng), size(rng)};
    if (i % 5 == 1) (i / 5 % 3 == 0 ? s.m : i / 5 % 3 == 1 ? s.n : s.k) = 0;
    shapes.push_back(s);
  }
  for (MatrixShape& s : shapes) {
    // Packed, then padded: BatchedData fills 0 with the packed value.
    s.lda = pad(rng) ? 0 : std::max<std::int64_t>(1, std::max(s.m, s.k)) + pad(rng);
    s.ldb = pad(rng) ? 0 : std::max<std::int64_t>(1, std::max(s.k, s.n)) + pad(rng);
    s.ldc = pad(rng) ? 0 : std::max<std::int64_t>(1, s.m) + pad(rng);
  }
  return shapes;
}

}  // namespace

TEST_CASE("gpu: gemm_batched (pointer arrays) is right for S/D/C/Z and every op shape",
          "[gpu][batched]") {
  const EmptyStore store;
  unsigned seed = 1;
  for (Precision p : kPrecisions)
    for (auto [oa, ob] : ops_of(p)) {
      // Ragged edges with padded leading dimensions and beta; a batch of one of whole tiles
      // (the interior paths) without.
      const MatrixShape odd{37, 29, 45, (oa == Op::N ? 37 : 45) + 3, (ob == Op::N ? 45 : 29) + 1,
                            40};
      run_and_check(BatchedData(p, oa, ob, std::vector<MatrixShape>(5, odd), alpha_of(p),
                                beta_of(p, false), seed++),
                    p, BatchKind::PointerArray, label(p, oa, ob) + " 37x29x45 x5");
      run_and_check(
          BatchedData(p, oa, ob, {MatrixShape{64, 64, 64}}, alpha_of(p), beta_of(p, true), seed++),
          p, BatchKind::PointerArray, label(p, oa, ob) + " 64^3, batch of one");
    }
}

TEST_CASE("gpu: gemm_batched with empty matrices: M or N = 0 leaves C, K = 0 gives beta * C",
          "[gpu][batched]") {
  const EmptyStore store;
  for (Precision p : kPrecisions)
    for (bool beta_zero : {false, true}) {
      const std::string what = std::string{to_char(p)} + (beta_zero ? " beta 0" : " beta");
      // K = 0: the kernel runs and writes beta * C (0 with beta 0: the NaN poison must go).
      run_and_check(
          BatchedData(p, Op::N, Op::N, std::vector<MatrixShape>(4, MatrixShape{33, 21, 0}),
                      alpha_of(p), beta_of(p, beta_zero), 7),
          p, BatchKind::PointerArray, what + " K = 0");
      // M = 0 or N = 0: nothing to write, and nothing may fail.
      for (const MatrixShape s : {MatrixShape{0, 21, 5}, MatrixShape{33, 0, 5}})
        run_and_check(BatchedData(p, Op::T, Op::N, std::vector<MatrixShape>(2, s), alpha_of(p),
                                  beta_of(p, beta_zero), 8),
                      p, BatchKind::PointerArray, what + " empty C");
    }
}

TEST_CASE("gpu: gemm_vbatched is right for S/D/C/Z, every op shape, random and empty sizes",
          "[gpu][batched]") {
  const EmptyStore store;
  const VbatchedMeasure model_only(0);
  unsigned seed = 100;
  for (Precision p : kPrecisions)
    for (auto [oa, ob] : ops_of(p)) {
      const std::string what = label(p, oa, ob);
      // Sizes around the tiles (and some 0) with beta; larger ones without.
      run_and_check(
          BatchedData(p, oa, ob, random_shapes(16, 70, seed), alpha_of(p), beta_of(p, false), seed),
          p, BatchKind::Variable, what + " random up to 70");
      ++seed;
      if (oa == Op::C || ob == Op::C || oa == ob) continue;  // larger ones: NT and TN
      run_and_check(
          BatchedData(p, oa, ob, random_shapes(6, 200, seed), alpha_of(p), beta_of(p, true), seed),
          p, BatchKind::Variable, what + " random up to 200");
      ++seed;
    }
  // A batch of one, and a batch whose matrices are all empty but one.
  for (Precision p : kPrecisions) {
    run_and_check(
        BatchedData(p, Op::N, Op::T, {MatrixShape{45, 13, 30}}, alpha_of(p), beta_of(p, false), 3),
        p, BatchKind::Variable, std::string{to_char(p)} + " batch of one");
    run_and_check(BatchedData(p, Op::T, Op::N,
                              {MatrixShape{0, 5, 5}, MatrixShape{5, 0, 5}, MatrixShape{9, 7, 0},
                               MatrixShape{50, 3, 2}},
                              alpha_of(p), beta_of(p, false), 4),
                  p, BatchKind::Variable, std::string{to_char(p)} + " mostly empty");
  }
}

TEST_CASE("gpu: gemm_vbatched chooses its kernel for the batch's sizes", "[gpu][batched]") {
  const EmptyStore store;
  const VbatchedMeasure model_only(0);
  // 300 matrices of at most 24 and one of 256: the launch covers 256, the work is in the small
  // ones, so the model's kernel for the sizes is another than the one for the largest.
  std::vector<MatrixShape> shapes = random_shapes(300, 24, 31);
  shapes.push_back(MatrixShape{256, 256, 256});
  for (Precision p : {Precision::S, Precision::D}) {
    const BatchedData data(p, Op::N, Op::T, shapes, alpha_of(p), beta_of(p, false), 31);
    run_and_check(data, p, BatchKind::Variable, std::string{to_char(p)} + " small under 256");
    const Problem representative =
        batched_representative(data.call(BatchKind::Variable), BatchKind::Variable);
    const DispatchChoice used = last_dispatch(representative, BatchKind::Variable);
    const DeviceSpec d = query_local_device();
    const DispatchChoice expected = choose_for_sizes(
        representative, matrix_problems(representative, shapes), d, store.path.string());
    INFO(used.why);
    CHECK(used.config == expected.config);
    CHECK(used.why.find("ranked for the sizes") != std::string::npos);
    CHECK_FALSE(used.config ==
                batched_config(choose_kernel(representative, d, store.path.string()).config,
                               BatchKind::Variable));
  }
}

TEST_CASE("gpu: every kernel family runs pointer-array and variable batches, split-K included",
          "[gpu][batched]") {
  GpuSession session(0);  // a current context for the loaded modules
  const DeviceSpec& d = session.device();
  SpaceDomain domain = SpaceDomain::named("compact");
  domain.mma = {0, 1, 2, 3, 4};
  domain.async_copy = {0, 1};
  domain.stages = {1, 2, 3, 4};
  domain.vec_a = domain.vec_b = {1, 2, 4};
  domain.vec_s = {1, 4};
  Stream stream;
  struct Case {
    Precision p;
    Op oa, ob;
  };
  // Each precision, FP64 tensor cores with D and Z; conjugates are the runtime tests' (cp.async
  // cannot conjugate, so they leave a family out).
  for (const Case& x : {Case{Precision::S, Op::N, Op::N}, Case{Precision::S, Op::T, Op::N},
                        Case{Precision::D, Op::T, Op::N}, Case{Precision::C, Op::N, Op::T},
                        Case{Precision::Z, Op::N, Op::N}}) {
    const Precision p = x.p;
    const Op oa = x.oa, ob = x.ob;
    const BatchedData uniform(p, oa, ob, std::vector<MatrixShape>(4, MatrixShape{96, 72, 300}),
                              alpha_of(p), beta_of(p, false), 11);
    const BatchedData ragged(p, oa, ob, random_shapes(12, 150, 12), alpha_of(p), beta_of(p, false),
                             12);
    // A spread of configurations: the model's top few of the representative shape, one of each
    // family (register-staged SIMT, cp.async SIMT, FP64 mma) and a split-K one.
    const Problem representative =
        batched_representative(uniform.call(BatchKind::PointerArray), BatchKind::PointerArray);
    std::vector<KernelConfig> configs;
    bool simt = false, async = false, mma = false;
    const std::vector<Ranked> ranked = rank_space(representative, d, 400, {}, domain).top;
    for (const Ranked& r : ranked) {
      const KernelConfig& c = r.config;
      const bool want = configs.size() < 3 || (c.mma && !mma) ||
                        (!c.mma && c.async_copy && !async) || (!c.mma && !c.async_copy && !simt);
      if (!want || c.splits() > 1) continue;
      configs.push_back(c);
      mma = mma || c.mma;
      async = async || (!c.mma && c.async_copy);
      simt = simt || (!c.mma && !c.async_copy);
    }
    REQUIRE(!configs.empty());
    KernelConfig split = configs.front();
    split.split_k = 3;
    configs.push_back(split);
    // D's mma kernel with C staged through shared memory (VC1; complex C has no such store).
    bool staged = false;
    for (const Ranked& r : ranked)
      if (r.config.mma && r.config.splits() == 1 &&
          r.config.has_vector_c_path(p, representative.ldc)) {
        KernelConfig c = r.config;
        c.vec_c = 1;
        configs.push_back(c);
        staged = true;
        break;
      }
    CHECK(staged == (p == Precision::D));
    // A variable batch refuses split-K (the runtime drops it: batched_config).
    CHECK_THROWS_AS(render_source(split, p, oa, ob, BatchKind::Variable), InputError);
    // Compiled together: the strided kernel of the first configuration, then each configuration
    // for each kind, as the runtime adapts it.
    std::vector<CompileJob> jobs = {{configs.front(), p, oa, ob, BatchKind::Strided}};
    for (const KernelConfig& chosen : configs)
      for (BatchKind kind : {BatchKind::PointerArray, BatchKind::Variable})
        jobs.push_back({batched_config(chosen, kind), p, oa, ob, kind});
    const std::vector<CompileResult> compiled = compile_many(jobs, d.arch());
    for (size_t i = 0; i < jobs.size(); ++i) {
      const CompileJob& job = jobs[i];
      const BatchedData& data = job.batch == BatchKind::Variable ? ragged : uniform;
      const std::string what =
          label(p, oa, ob) + " " + to_string(job.batch) + " " + job.config.id();
      INFO(what << "\n" << compiled[i].log);
      REQUIRE(compiled[i].ok);
      const LoadedKernel kernel(compiled[i], job.config, p, job.batch);
      data.reset_output(stream.s);
      if (job.batch == BatchKind::Strided) {
        // The uniform batch's strided layout: the same results from the strided kernel.
        kernel.launch(data.call(BatchKind::Strided), data.a(), data.b(), data.c(), stream.s);
      } else {
        kernel.launch_batched(data.call(job.batch), data.arrays(), stream.s);
        // A batched kernel refuses a strided launch (the arguments would not match).
        CHECK_THROWS_AS(kernel.launch(uniform.call(BatchKind::Strided), uniform.a(), uniform.b(),
                                      uniform.c(), stream.s),
                        InputError);
      }
      REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
      check_every_matrix(data, p, what);
    }
  }
}

TEST_CASE("gpu: the batched calls dispatch as their representative, variable ones for their sizes",
          "[gpu][batched]") {
  const EmptyStore store;
  const VbatchedMeasure model_only(0);
  const BatchedData data(Precision::D, Op::N, Op::N, random_shapes(8, 90, 21), {1, 0}, {0, 0}, 21);
  run_and_check(data, Precision::D, BatchKind::Variable, "D vbatched");
  const Problem representative =
      batched_representative(data.call(BatchKind::Variable), BatchKind::Variable);
  const DispatchChoice choice = last_dispatch(representative, BatchKind::Variable);
  const DispatchChoice expected =
      choose_for_sizes(representative, matrix_problems(representative, data.shapes()),
                       query_local_device(), store.path.string());
  CHECK(choice.config == expected.config);
  CHECK(choice.config.vec_a == 1);
  CHECK(choice.config.splits() == 1);
  CHECK_THROWS_AS(last_dispatch(representative), InputError);  // never a strided call
}

TEST_CASE("gpu: gemm_vbatched measuring its candidates keeps the fastest and the right result",
          "[gpu][batched]") {
  const EmptyStore store;
  // Each with its own count of candidates; 0: unset (every guard restores the default), so that
  // the first call measures kDefaultVbatchedMeasure of them.
  struct Case {
    Precision p;
    Op oa, ob;
    int count;
    std::int64_t matrices, largest;
    unsigned seed;
  };
  for (const Case& x : {Case{Precision::S, Op::N, Op::T, 4, 40, 150, 33},
                        Case{Precision::Z, Op::N, Op::T, 4, 40, 150, 33},
                        Case{Precision::D, Op::T, Op::N, 0, 30, 120, 35}}) {
    std::optional<VbatchedMeasure> measuring;
    if (x.count > 0) measuring.emplace(x.count);
    REQUIRE(vbatched_measure() == (x.count > 0 ? x.count : kDefaultVbatchedMeasure));
    const int count = vbatched_measure();
    const Precision p = x.p;
    const BatchedData data(p, x.oa, x.ob, random_shapes(x.matrices, x.largest, x.seed), {1, 0},
                           {0, 0}, x.seed);
    const std::string what =
        std::string{to_char(p)} + " vbatched, " + std::to_string(count) + " candidates measured";
    run_and_check(data, p, BatchKind::Variable, what);
    const Problem representative =
        batched_representative(data.call(BatchKind::Variable), BatchKind::Variable);
    const DispatchChoice choice = last_dispatch(representative, BatchKind::Variable);
    INFO(choice.why);
    CHECK(choice.why.find("measured on the batch, ") == 0);
    // The candidates are candidates_for_sizes's of the model's own choice, each timed.
    const std::vector<Problem> sizes = matrix_problems(representative, data.shapes());
    const DispatchChoice model =
        choose_for_sizes(representative, sizes, query_local_device(), store.path.string());
    const std::vector<DispatchCandidate> expected = candidates_for_sizes(
        model, representative, sizes, query_local_device(), store.path.string(), count);
    REQUIRE(choice.candidates.size() == expected.size());
    CHECK(expected.size() >= 2);
    double fastest = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(choice.candidates[i].config == expected[i].config);
      CHECK((choice.candidates[i].measured_s > 0) == choice.candidates[i].dropped.empty());
      if (choice.candidates[i].measured_s > 0 &&
          (fastest == 0 || choice.candidates[i].measured_s < fastest))
        fastest = choice.candidates[i].measured_s;
    }
    const double model_s = choice.candidates.front().measured_s;
    REQUIRE(model_s > 0);
    // The model's choice stays unless another ran at least kMeasuredMargin faster.
    const bool replaced = fastest < (1 - kMeasuredMargin) * model_s;
    CHECK((choice.source == DispatchSource::Measured) == replaced);
    for (const DispatchCandidate& c : choice.candidates)
      if (c.config == choice.config) CHECK(c.measured_s == (replaced ? fastest : model_s));
    CHECK(choice.config.splits() == 1);
    // A second call reuses the kept kernel and still verifies (the first call's candidates wrote
    // C before the kept kernel did).
    run_and_check(data, p, BatchKind::Variable, what + ", second call");
  }
  // beta != 0 (a complex beta of real part 0 too): C is read, so the model chooses alone.
  for (const auto& [p, beta] :
       {std::pair{Precision::D, Scalar{0.5, 0}}, std::pair{Precision::Z, Scalar{0, 0.25}}}) {
    const BatchedData with_beta(p, Op::N, Op::N, random_shapes(12, 90, 34), {1, 0}, beta, 34);
    run_and_check(with_beta, p, BatchKind::Variable, "vbatched with beta");
    const Problem rep =
        batched_representative(with_beta.call(BatchKind::Variable), BatchKind::Variable);
    CHECK(last_dispatch(rep, BatchKind::Variable).why.find("measured on the batch") ==
          std::string::npos);
  }
}
