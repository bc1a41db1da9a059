// Benchmark: hybrid-tune each shape on the local GPU (every attempt stored), then time the
// winner and cuBLAS (FP32 pedantic, no TF32) in the same run. Prints GFLOP/s and the ratio.
//   vs_cublas [--precision s|d|both] [--seconds per-shape budget] [--db path] [--only NAME,...]
//             [--domain full|compact] [--set targets|wins|all|batched]
//             [--calibration auto|none|FILE.json] [--vbatched-measure N]
// --vbatched-measure: gemm_vbatched's first call times up to N candidates on the batch
// (set_vbatched_measure; without the option, the runtime's default of kDefaultVbatchedMeasure);
// 0 takes the model's choice.
// --calibration: auto (the default: as `gemmtune tune` ranks, the store's calibration for the
// GPU, else the shipped one), none (the uncalibrated model), or a JSON file of `gemmtune
// calibrate`.
// targets: the shapes with ratio targets in bench/RESULTS.md (squares, the seeds' LU updates, K =
// 32, odd sizes); wins: where the seeds expect a tuned kernel to beat a library's general
// heuristics (thin problems with a long K that need split-K, and seed 004's batches of small
// matrices).
// batched: batches of one shape (strided and pointer arrays) and of variable sizes, each kind's
// gemmtune kernel (the tuned representative's winner, as gemm_batched dispatches it; a variable
// batch also through gemm_vbatched itself, which chooses for the sizes, and the model's best 8 for
// the sizes) beside cuBLAS's strided, pointer-array (cublasGemmBatchedEx) and grouped
// (cublasGemmGroupedBatchedEx) calls and a loop of one cublasGemmEx per matrix; --precision takes
// any of s, d, c, z here.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "kernels/kernels.hpp"
#include "profiler/cuda_handles.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {
struct Shape {
  const char* name;
  std::int64_t m, n, k, batch;
  bool target;  // one of the shapes with a ratio target
};
const Shape kShapes[] = {
    {"square 1024", 1024, 1024, 1024, 1, true},
    {"square 2048", 2048, 2048, 2048, 1, true},
    {"square 4096", 4096, 4096, 4096, 1, true},
    {"square 8192", 8192, 8192, 8192, 1, true},
    {"LU N x N-BS x BS=64", 6144, 6080, 64, 1, true},
    {"LU N x BS x BS=64", 6144, 64, 64, 1, true},
    {"LU N x N-BS x BS=128", 6144, 6016, 128, 1, true},
    {"LU N x BS x BS=128", 6144, 128, 128, 1, true},
    {"K=32", 8192, 8192, 32, 1, true},
    {"odd 1000", 1000, 1000, 1000, 1, true},
    {"odd 4097", 4097, 4097, 4097, 1, true},
    {"thin long K", 256, 256, 65536, 1, false},
    {"thin long K 128", 128, 128, 131072, 1, false},
    {"batch 1000 of 64^3", 64, 64, 64, 1000, false},
    {"batch 1000 of K=16", 128, 128, 16, 1000, false},
    {"batch 500 of 256x256x32", 256, 256, 32, 500, false},
};
// Batches: one shape for all (strided and pointer arrays), or sizes uniform in [1, max] per
// dimension (variable).
struct BatchedShape {
  const char* name;
  std::int64_t m, n, k, batch;
  bool variable;
};
const BatchedShape kBatchedShapes[] = {
    {"10000 of 8^3", 8, 8, 8, 10000, false},
    {"10000 of 16^3", 16, 16, 16, 10000, false},
    {"10000 of 32^3", 32, 32, 32, 10000, false},
    {"1000 of 64^3", 64, 64, 64, 1000, false},
    {"500 of 128x128x32", 128, 128, 32, 500, false},
    {"100 of 256^3", 256, 256, 256, 100, false},
    {"var 10000 up to 32", 32, 32, 32, 10000, true},
    {"var 5000 up to 128", 128, 128, 128, 5000, true},
    {"var 2000 up to 512", 512, 512, 512, 2000, true},
};

cudaDataType_t cuda_type(Precision p) {
  switch (p) {
    case Precision::S:
      return CUDA_R_32F;
    case Precision::D:
      return CUDA_R_64F;
    case Precision::C:
      return CUDA_C_32F;
    case Precision::H:
    case Precision::B:
    case Precision::T:
      throw std::logic_error(
          "vs_cublas compares s, d, c and z (bench/reduced_vs_cublas.sh: h, b, t)");
    case Precision::Z:
      break;
  }
  return CUDA_C_64F;
}
// As the runner's cuBLAS baseline: single precision without TF32 (32F compute under the
// handle's pedantic math mode), double in the default mode (FP64 tensor cores).
cublasComputeType_t compute_type(Precision p) {
  return is_double(p) ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
}
cublasOperation_t to_cublas(Op op) {
  return op == Op::N ? CUBLAS_OP_N : op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

// Kernels ranked for a variable batch's sizes that are measured beside the tuned one.
constexpr int kSizeCandidates = 8;

// One contender of a batched row: a launch on the data's buffers (false: not supported here,
// the reason in `why`); `config`, a gemmtune kernel's configuration id, printed beside its time.
struct Contender {
  std::string name;
  std::function<bool(std::string& why)> launch;
  std::string config = "";
  double median_s = 0, error = 0;
  bool ran = false;
  std::string why = "";
};

// A cuBLAS call's status: true if it ran; otherwise the status's name in `why`, so that a call
// this cuBLAS does not support reads n/a instead of ending the run.
bool cublas_ran(cublasStatus_t status, std::string& why) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  why = cublasGetStatusName(status);
  return false;
}

// gemmtune::gemm_vbatched on the variable batch's arrays, typed by precision (alpha 1, beta 0):
// the runtime's own choice for the sizes, read back on its first call.
template <typename T>
void call_vbatched(const BatchArrays& x, const Problem& maxima, cudaStream_t stream) {
  gemm_vbatched(Op::N, Op::N, x.m, x.n, x.k, T(1), static_cast<const T* const*>(x.a), x.lda,
                static_cast<const T* const*>(x.b), x.ldb, T(0),
                static_cast<T* const*>(const_cast<void*>(x.c)), x.ldc, maxima.batch, maxima.m,
                maxima.n, maxima.k, stream);
}
void call_vbatched(Precision p, const BatchArrays& x, const Problem& maxima, cudaStream_t stream) {
  switch (p) {
    case Precision::S:
      return call_vbatched<float>(x, maxima, stream);
    case Precision::D:
      return call_vbatched<double>(x, maxima, stream);
    case Precision::C:
      return call_vbatched<std::complex<float>>(x, maxima, stream);
    case Precision::Z:
      return call_vbatched<std::complex<double>>(x, maxima, stream);
    default:
      throw std::logic_error("vs_cublas: variable batches of s, d, c and z only");
  }
}

// Verifies each contender once on a reset C, then times them twice in turn (same run, same
// buffers), each keeping its better median.
void run_contenders(std::vector<Contender>& contenders, const BatchedData& data,
                    cudaStream_t stream, const TimingOptions& timing) {
  for (Contender& c : contenders) {
    data.reset_output(stream);
    c.ran = c.launch(c.why);
    if (!c.ran) continue;
    const std::vector<double> errors = data.errors();
    c.error = *std::max_element(errors.begin(), errors.end());
  }
  for (int round = 0; round < 2; ++round)
    for (Contender& c : contenders) {
      if (!c.ran) continue;
      const Measurement m = time_launches([&] { c.launch(c.why); }, stream, timing, data.flops());
      c.median_s = round == 0 ? m.median_s : std::min(c.median_s, m.median_s);
    }
}

int run_batched_set(const std::string& precisions, const std::string& only, double seconds,
                    const SpaceDomain& domain, const ModelCoefficients& coefficients,
                    const TimingOptions& timing, GpuEvaluator& evaluator, GpuSession& session,
                    Database& db, const std::string& db_path) {
  const DeviceSpec& d = session.device();
  set_dispatch_database(db_path);  // gemm_vbatched reads the representative's tuning here
  const gpu::Stream stream;
  const gpu::Cublas cublas;
  cublasHandle_t h = cublas.get();
  gpu::check(cublasSetStream(h, stream.get()), "cublasSetStream");
  std::printf("%-4s %-20s %-22s %10s %9s %7s %9s  %s\n", "prec", "batch", "method", "median_us",
              "GFLOP/s", "ratio", "max_err", "config");
  for (char pc : precisions)
    for (const BatchedShape& s : kBatchedShapes) {
      if (!only.empty() &&
          ("," + only + ",").find("," + std::string(s.name) + ",") == std::string::npos)
        continue;
      const Precision p = parse_precision(std::string(1, pc));
      gpu::check(cublasSetMathMode(h, is_double(p) ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH),
                 "cublasSetMathMode");
      const std::vector<MatrixShape> shapes =
          s.variable ? uniform_shapes(s.batch, s.m, s.n, s.k, 7)
                     : std::vector<MatrixShape>(std::size_t(s.batch), MatrixShape{s.m, s.n, s.k});
      const BatchedData data(p, Op::N, Op::N, shapes, {1, 0}, {0, 0});
      const BatchKind kind = s.variable ? BatchKind::Variable : BatchKind::PointerArray;
      // The kernel gemm_batched / gemm_vbatched would run once the representative is tuned.
      const Problem representative = batched_representative(data.call(kind), kind);
      HybridOptions o;
      o.budget.seconds = seconds;
      o.coefficients = coefficients;
      o.domain = domain;
      const TuningRun run("hybrid");
      const TuneResult r = hybrid_tune(representative, evaluator, o, [&](const Evaluation& e) {
        db.add(run.attempt(e, representative, d));
      });
      if (!r.best) {
        std::printf("%-4c %-20s no kernel ran correctly (%d measured)\n", pc, s.name,
                    r.evaluations);
        continue;
      }
      const KernelConfig config = batched_config(r.best->config, kind);
      auto load = [&](BatchKind k) {
        const CompileCache cache(CompileCache::default_directory());
        return std::make_unique<LoadedKernel>(
            compile_source(render_source(config, p, Op::N, Op::N, k), d.arch(), &cache), config, p,
            k);
      };
      const auto batched_kernel = load(kind);
      const auto strided_kernel = s.variable ? nullptr : load(BatchKind::Strided);
      // A variable batch: also the model's best kernels for its sizes (rank_for_sizes), each
      // verified and timed on the batch itself.
      std::vector<std::unique_ptr<LoadedKernel>> size_kernels;
      if (s.variable) {
        const std::vector<Problem> sizes = matrix_problems(representative, data.shapes());
        const CompileCache cache(CompileCache::default_directory());
        for (const Ranked& r :
             rank_for_sizes(representative, sizes, d, kSizeCandidates, coefficients, domain)) {
          const KernelConfig c = batched_config(r.config, kind);
          const CompileResult compiled =
              compile_source(render_source(c, p, Op::N, Op::N, kind), d.arch(), &cache);
          if (!compiled.ok) continue;
          size_kernels.push_back(std::make_unique<LoadedKernel>(compiled, c, p, kind));
        }
      }

      const gpu::TypedScalar alpha = gpu::typed({1, 0}, p), beta = gpu::typed({0, 0}, p);
      const cudaDataType_t type = cuda_type(p);
      const cublasComputeType_t compute = compute_type(p);
      const BatchArrays& arrays = data.arrays();
      const auto a_array = static_cast<const void* const*>(arrays.a);
      const auto b_array = static_cast<const void* const*>(arrays.b);
      const auto c_array = static_cast<void* const*>(const_cast<void*>(arrays.c));
      // Grouped and loop: per-matrix sizes and scalars on the host.
      const std::size_t batch = shapes.size();
      std::vector<int> gm(batch), gn(batch), gk(batch), glda(batch), gldb(batch), gldc(batch),
          gsize(batch, 1);
      std::vector<cublasOperation_t> gop(batch, CUBLAS_OP_N);
      std::vector<unsigned char> galpha_raw, gbeta_raw;
      for (std::size_t i = 0; i < batch; ++i) {
        const MatrixShape& x = data.shapes()[i];
        gm[i] = int(x.m);
        gn[i] = int(x.n);
        gk[i] = int(x.k);
        glda[i] = int(x.lda);
        gldb[i] = int(x.ldb);
        gldc[i] = int(x.ldc);
        galpha_raw.insert(galpha_raw.end(), alpha.bytes, alpha.bytes + element_bytes(p));
        gbeta_raw.insert(gbeta_raw.end(), beta.bytes, beta.bytes + element_bytes(p));
      }
      std::vector<Contender> contenders;
      contenders.push_back({std::string("gemmtune ") + to_string(kind),
                            [&](std::string&) {
                              batched_kernel->launch_batched(data.call(kind), arrays, stream.get());
                              return true;
                            },
                            config.id()});
      for (std::size_t i = 0; i < size_kernels.size(); ++i)
        contenders.push_back({"gemmtune sizes #" + std::to_string(i + 1),
                              [&, i](std::string&) {
                                size_kernels[i]->launch_batched(data.call(kind), arrays,
                                                                stream.get());
                                return true;
                              },
                              size_kernels[i]->config().id()});
      // The runtime's call itself (variable batches); its label is what its first call chose.
      const std::size_t runtime_call = contenders.size();
      if (s.variable) {
        const Problem maxima = data.call(kind);
        contenders.push_back({"gemmtune gemm_vbatched", [&, p, maxima](std::string&) {
                                call_vbatched(p, arrays, maxima, stream.get());
                                return true;
                              }});
      } else {
        const Problem c = data.call(BatchKind::Strided);
        contenders.push_back({"gemmtune strided", [&, c](std::string&) {
                                strided_kernel->launch(c, data.a(), data.b(), data.c(),
                                                       stream.get());
                                return true;
                              }});
        contenders.push_back({"cublas strided", [&, c](std::string& why) {
                                return cublas_ran(
                                    cublasGemmStridedBatchedEx(
                                        h, CUBLAS_OP_N, CUBLAS_OP_N, int(c.m), int(c.n), int(c.k),
                                        alpha.bytes, data.a(), type, int(c.lda), c.stride_a(),
                                        data.b(), type, int(c.ldb), c.stride_b(), beta.bytes,
                                        data.c(), type, int(c.ldc), c.stride_c(), int(c.batch),
                                        compute, CUBLAS_GEMM_DEFAULT),
                                    why);
                              }});
        contenders.push_back({"cublas pointer", [&, c](std::string& why) {
                                return cublas_ran(
                                    cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(c.m),
                                                        int(c.n), int(c.k), alpha.bytes, a_array,
                                                        type, int(c.lda), b_array, type, int(c.ldb),
                                                        beta.bytes, c_array, type, int(c.ldc),
                                                        int(c.batch), compute, CUBLAS_GEMM_DEFAULT),
                                    why);
                              }});
      }
      // Grouped: one group per matrix (cuBLAS documents real types only: a status other than
      // success reads n/a with its name).
      contenders.push_back({"cublas grouped", [&](std::string& why) {
                              return cublas_ran(
                                  cublasGemmGroupedBatchedEx(
                                      h, gop.data(), gop.data(), gm.data(), gn.data(), gk.data(),
                                      galpha_raw.data(), a_array, type, glda.data(), b_array, type,
                                      gldb.data(), gbeta_raw.data(), c_array, type, gldc.data(),
                                      int(batch), gsize.data(), compute),
                                  why);
                            }});
      contenders.push_back(
          {"cublas loop", [&](std::string& why) {
             for (std::size_t i = 0; i < batch; ++i)
               if (!cublas_ran(
                       cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, gm[i], gn[i], gk[i], alpha.bytes,
                                    data.a(i), type, glda[i], data.b(i), type, gldb[i], beta.bytes,
                                    data.c(i), type, gldc[i], compute, CUBLAS_GEMM_DEFAULT),
                       why))
                 return false;
             return true;
           }});
      run_contenders(contenders, data, stream.get(), timing);
      if (s.variable) {
        // What the call ran: the choice its first call made (the store's or shipped calibration,
        // the full domain, whatever --calibration and --domain say).
        const DispatchChoice ran = last_dispatch(representative, kind);
        std::printf("%-4c %-20s gemm_vbatched chose %s\n", pc, s.name, ran.why.c_str());
        contenders[runtime_call].config = ran.config.id() + " (" + to_string(ran.source) + ")";
      }
      // Ratios against gemmtune's kernel of the call's kind: above 1, gemmtune is faster.
      const double ours = contenders.front().median_s;
      for (const Contender& c : contenders) {
        if (!c.ran) {
          std::printf("%-4c %-20s %-22s %10s  %s\n", pc, s.name, c.name.c_str(), "n/a",
                      c.why.c_str());
          continue;
        }
        std::printf("%-4c %-20s %-22s %10.1f %9.0f %7.3f %9.2e  %s\n", pc, s.name, c.name.c_str(),
                    c.median_s * 1e6, data.flops() / c.median_s * 1e-9, c.median_s / ours, c.error,
                    c.config.c_str());
      }
      std::fflush(stdout);
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string precisions = "sd", db_path = "vs_cublas.db", only, domain = "full", set = "targets",
              calibration, vbatched_measure;
  double seconds = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--precision"))
      precisions = std::strcmp(argv[i + 1], "both") ? argv[i + 1] : "sd";
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--db"))
      db_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--only"))
      only = argv[i + 1];
    else if (!std::strcmp(argv[i], "--domain"))
      domain = argv[i + 1];
    else if (!std::strcmp(argv[i], "--set"))
      set = argv[i + 1];
    else if (!std::strcmp(argv[i], "--calibration"))
      calibration = argv[i + 1];
    else if (!std::strcmp(argv[i], "--vbatched-measure"))
      vbatched_measure = argv[i + 1];
  }
  if (calibration.empty()) calibration = "auto";
  if (!vbatched_measure.empty()) {
    // gemm_vbatched's first call times its candidates on the batch (variable rows only).
    int n = -1;
    const char* end = vbatched_measure.data() + vbatched_measure.size();
    const auto [ptr, ec] = std::from_chars(vbatched_measure.data(), end, n);
    if (ec != std::errc() || ptr != end || n < 0 || n > kMaxVbatchedMeasure || set != "batched") {
      std::fprintf(stderr,
                   "vs_cublas: --vbatched-measure '%s' must be 0 to %d candidates, with --set "
                   "batched\n",
                   vbatched_measure.c_str(), kMaxVbatchedMeasure);
      return 2;
    }
    set_vbatched_measure(n);
  }
  if (set != "targets" && set != "wins" && set != "all" && set != "batched") {
    std::fprintf(stderr, "vs_cublas: --set '%s' is not one of targets, wins, all, batched\n",
                 set.c_str());
    return 2;
  }
  for (char pc : precisions)
    if (std::string("sdcz").find(pc) == std::string::npos ||
        (set != "batched" && (pc == 'c' || pc == 'z'))) {
      std::fprintf(stderr, "vs_cublas: precision '%c' is not one of s, d%s\n", pc,
                   set == "batched" ? ", c, z" : " (c and z with --set batched)");
      return 2;
    }
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "vs_cublas needs a CUDA GPU\n");
    return 77;
  }
  const std::string exe =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "gemmtune").string();
  TimingOptions timing;  // 3 warm-up, 20 repetitions, median, L2 flushed
  GpuEvaluator evaluator(exe, timing, 120);
  GpuSession session(0);
  const DeviceSpec& d = session.device();
  Database db(db_path);
  db.save_device(d);
  ModelCoefficients coefficients;
  try {
    const ChosenCalibration chosen = choose_calibration(calibration, d.name, &db);
    coefficients = chosen.coefficients;
    std::printf("calibration: %s%s%s\n", chosen.description.c_str(),
                chosen.warning.empty() ? "" : "; ", chosen.warning.c_str());
  } catch (const InputError& e) {
    std::fprintf(stderr, "vs_cublas: %s\n", e.what());
    return 2;
  }
  if (set == "batched")
    return run_batched_set(precisions, only, seconds, SpaceDomain::named(domain), coefficients,
                           timing, evaluator, session, db, db_path);
  std::printf("%-4s %-22s %-18s %10s %10s %7s %7s %6s %6s %9s %9s  %s\n", "prec", "shape", "MxNxK",
              "cuBLAS", "tuned", "ratio", "tune_s", "evals", "model1", "err_cublas", "err_tuned",
              "best config");
  for (char pc : precisions) {
    for (const Shape& s : kShapes) {
      if (!only.empty() &&
          ("," + only + ",").find("," + std::string(s.name) + ",") == std::string::npos)
        continue;
      if ((set == "targets" && !s.target) || (set == "wins" && s.target)) continue;
      Problem p;
      p.precision = parse_precision(std::string(1, pc));
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.batch = s.batch;
      p = p.normalized();
      HybridOptions o;
      o.budget.seconds = seconds;
      o.coefficients = coefficients;
      o.domain = SpaceDomain::named(domain);
      const auto start = std::chrono::steady_clock::now();
      const TuningRun run("hybrid");
      const TuneResult r =
          hybrid_tune(p, evaluator, o, [&](const Evaluation& e) { db.add(run.attempt(e, p, d)); });
      const double tune_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!r.best) {
        std::printf("%-4c %-22s no kernel ran correctly (%d measured, %d compiled, %.1f s, %s)\n",
                    pc, s.name, r.evaluations, r.compiled, tune_s, r.stopped_by.c_str());
        continue;
      }
      // Same run, same buffers, alternating: the winner, cuBLAS, the winner, cuBLAS; each side's
      // better median, so that neither gains from the order (clocks ramp, L2 state).
      const CompileCache cache(CompileCache::default_directory());
      const CompileResult compiled =
          compile_many({{r.best->config, p.precision, p.op_a, p.op_b}}, d.arch(), &cache).at(0);
      const Measurement tuned1 = session.measure(p, r.best->config, compiled, timing);
      Measurement ref = session.measure_cublas(p, timing);
      const Measurement tuned2 = session.measure(p, r.best->config, compiled, timing);
      const Measurement ref2 = session.measure_cublas(p, timing);
      if (ref2.median_s < ref.median_s) ref = ref2;
      if (ref.status == Status::Ok)
        db.add_reference({d.name, p, "cublas", ref.median_s, ref.gflops, ""});
      const double tuned_s = std::min(tuned1.median_s, tuned2.median_s);
      // The model's top-1 with no measurement: the first entry of the history.
      const double model1 =
          r.history.empty() || !r.history[0].ok() ? 0 : r.best->time_s / r.history[0].time_s;
      std::printf("%-4c %-22s %-18s %10.0f %10.0f %7.3f %7.1f %6d %6.3f %9.2e %9.2e  %s %s\n", pc,
                  s.name,
                  (std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                   (s.batch > 1 ? "x" + std::to_string(s.batch) : ""))
                      .c_str(),
                  ref.gflops, p.flops() / tuned_s * 1e-9, ref.median_s / tuned_s, tune_s,
                  r.evaluations, model1, ref.rel_error, tuned1.rel_error,
                  r.best->config.id().c_str(), tuned1.status == Status::Ok ? "" : "(NOT VERIFIED)");
      std::fflush(stdout);
    }
  }
  return 0;
}
