// GpuSession: verified, timed launches of compiled configurations, with cuBLAS beside them.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <thread>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kernels.hpp"
#include "model/model.hpp"
#include "profiler/cuda_handles.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

using gpu::check;

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::CompileError:
      return "compile_error";
    case Status::LaunchError:
      return "launch_error";
    case Status::ExecuteError:
      return "execute_error";
    case Status::Wrong:
      return "wrong";
    case Status::Timeout:
      return "timeout";
  }
  return "?";
}

Evaluation evaluation_of(const KernelConfig& config, const CompileResult& compiled,
                         const Measurement& m) {
  Evaluation e;
  e.config = config;
  e.status = to_string(m.status);
  e.error = m.error;
  e.time_s = m.median_s;
  e.min_s = m.min_s;
  e.max_s = m.max_s;
  e.repetitions = m.repetitions;
  e.rel_error = m.rel_error;
  e.registers = compiled.registers;
  e.spill_bytes = compiled.spill_store_bytes + compiled.spill_load_bytes;
  return e;
}

double verify_tolerance(Precision p, std::int64_t k) {
  // H, B and T inputs are drawn exactly representable (fill_random), so only the tensor cores'
  // FP32 accumulation errs: it truncates, up to 2^-23 per mma of 16 (or fewer) k, K/16 of them
  // in a row.
  if (is_reduced(p)) return std::max(5e-5, double(std::max<std::int64_t>(k, 16)) / 16 * 0x1p-23);
  return is_double(p) ? 1e-11 : 5e-5;
}

namespace {

// Times `launch` with events: warm-up, then one event pair per repetition, each after an L2
// flush (a memset of `flush`, when the options ask for one and it is not empty).
template <typename Launch>
void time_on_stream(const TimingOptions& t, Measurement& m, double flops, cudaStream_t stream,
                    const gpu::DeviceBuffer<unsigned char>& flush, Launch&& launch) {
  for (int i = 0; i < t.warmup; ++i) launch();
  check(cudaStreamSynchronize(stream), "warm-up");
  gpu::Event start, stop;
  std::vector<double> times;
  for (int r = 0; r < t.repetitions; ++r) {
    if (t.flush_l2 && flush.size())
      check(cudaMemsetAsync(flush.get(), r & 0xFF, flush.bytes(), stream), "L2 flush");
    check(cudaEventRecord(start.get(), stream), "cudaEventRecord");
    launch();
    check(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop.get()), "timed launch");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  std::sort(times.begin(), times.end());
  m.repetitions = int(times.size());
  m.min_s = times.front();
  m.max_s = times.back();
  m.median_s = times.size() % 2 ? times[times.size() / 2]
                                : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  m.gflops = flops / m.median_s * 1e-9;
}

// Bytes of one matrix of a strided batch, with its leading dimension and element size.
size_t matrix_bytes(std::int64_t ld, std::int64_t cols, std::int64_t batch, int element_bytes) {
  return size_t(ld) * size_t(cols) * size_t(batch) * size_t(element_bytes);
}

cublasOperation_t to_cublas(Op op) {
  return op == Op::N ? CUBLAS_OP_N : op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

}  // namespace

struct GpuSession::Impl {
  int device = 0;
  DeviceSpec spec;
  std::unique_ptr<gpu::Stream> stream;
  std::unique_ptr<gpu::Cublas> cublas;
  gpu::DeviceBuffer<unsigned char> flush;
  // Buffers of the prepared problem.
  Problem prepared;
  bool has_problem = false;
  gpu::DeviceBuffer<unsigned char> a, b, c, c0;
  gpu::PinnedHostBuffer<unsigned char> c_host;  // where C is read back for verification
  std::vector<double> reference;  // C computed in FP64 from the same inputs, every real part
  bool poisoned = false;

  void cublas_gemm(const Problem& p, const void* c_in_out) {
    cublas_gemm(p, a.get(), b.get(), c_in_out);
  }

  // cuBLAS in p.precision on the given buffers.
  void cublas_gemm(const Problem& p, const void* a_ptr, const void* b_ptr, const void* c_in_out) {
    const gpu::TypedScalar alpha = gpu::typed(p.alpha, p.precision),
                           beta = gpu::typed(p.beta, p.precision);
    const gpu::CublasApi& api = gpu::CublasApi::get();
    cublasHandle_t h = cublas->get();
    check(api.set_stream(h, stream->get()), "cublasSetStream");
    // Single precision as written (pedantic: no TF32); double precision in cuBLAS's default
    // mode, which uses the FP64 tensor cores: the baseline a user actually gets.
    check(api.set_math_mode(h, is_double(p.precision) || is_reduced(p.precision)
                                   ? CUBLAS_DEFAULT_MATH
                                   : CUBLAS_PEDANTIC_MATH),
          "cublasSetMathMode");
    const auto ta = to_cublas(p.op_a), tb = to_cublas(p.op_b);
    const int m = int(p.m), n = int(p.n), k = int(p.k), lda = int(p.lda), ldb = int(p.ldb),
              ldc = int(p.ldc);
    const int batch = int(p.batch);
    switch (p.precision) {
      case Precision::S:
        check(api.sgemm_strided_batched(h, ta, tb, m, n, k, reinterpret_cast<const float*>(&alpha),
                                        reinterpret_cast<const float*>(a_ptr), lda, p.stride_a(),
                                        reinterpret_cast<const float*>(b_ptr), ldb, p.stride_b(),
                                        reinterpret_cast<const float*>(&beta), (float*)c_in_out,
                                        ldc, p.stride_c(), batch),
              "cublasSgemmStridedBatched");
        break;
      case Precision::D:
        check(api.dgemm_strided_batched(h, ta, tb, m, n, k, reinterpret_cast<const double*>(&alpha),
                                        reinterpret_cast<const double*>(a_ptr), lda, p.stride_a(),
                                        reinterpret_cast<const double*>(b_ptr), ldb, p.stride_b(),
                                        reinterpret_cast<const double*>(&beta), (double*)c_in_out,
                                        ldc, p.stride_c(), batch),
              "cublasDgemmStridedBatched");
        break;
      case Precision::C:
        check(api.cgemm_strided_batched(
                  h, ta, tb, m, n, k, reinterpret_cast<const cuComplex*>(&alpha),
                  reinterpret_cast<const cuComplex*>(a_ptr), lda, p.stride_a(),
                  reinterpret_cast<const cuComplex*>(b_ptr), ldb, p.stride_b(),
                  reinterpret_cast<const cuComplex*>(&beta), (cuComplex*)c_in_out, ldc,
                  p.stride_c(), batch),
              "cublasCgemmStridedBatched");
        break;
      case Precision::Z:
        check(api.zgemm_strided_batched(
                  h, ta, tb, m, n, k, reinterpret_cast<const cuDoubleComplex*>(&alpha),
                  reinterpret_cast<const cuDoubleComplex*>(a_ptr), lda, p.stride_a(),
                  reinterpret_cast<const cuDoubleComplex*>(b_ptr), ldb, p.stride_b(),
                  reinterpret_cast<const cuDoubleComplex*>(&beta), (cuDoubleComplex*)c_in_out, ldc,
                  p.stride_c(), batch),
              "cublasZgemmStridedBatched");
        break;
      case Precision::H:
      case Precision::B:
      case Precision::T: {
        // The same input and compute types as the kernels: FP16 or BF16 (FP32 rounded to TF32)
        // inputs, FP32 accumulation and C.
        const cudaDataType_t in = p.precision == Precision::H   ? CUDA_R_16F
                                  : p.precision == Precision::B ? CUDA_R_16BF
                                                                : CUDA_R_32F;
        const cublasComputeType_t compute =
            p.precision == Precision::T ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        check(api.gemm_strided_batched_ex(h, ta, tb, m, n, k, &alpha, a_ptr, in, lda, p.stride_a(),
                                          b_ptr, in, ldb, p.stride_b(), &beta,
                                          const_cast<void*>(c_in_out), CUDA_R_32F, ldc,
                                          p.stride_c(), batch, compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx");
        break;
      }
    }
  }

  // Random values in [-1, 1) for every real component (never zeros, never a pattern), exactly
  // representable in the buffer's precision; returned in double for the FP64 reference. H, B
  // and T inputs (of_inputs): multiples of 2^-10 (H, T) or 2^-7 (B) that are not zero, exact
  // in FP16, TF32 or BF16, so that the kernels and cuBLAS multiply the same values.
  std::vector<double> fill_random(gpu::DeviceBuffer<unsigned char>& buf, Precision p,
                                  std::uint32_t seed, bool of_inputs = false) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    // Bytes of one real value in the buffer: H and B inputs are 16-bit; all else as C's parts.
    const int bytes = of_inputs && is_reduced(p) ? element_bytes(p) : real_bytes(p);
    const size_t reals = buf.bytes() / size_t(bytes);
    std::vector<double> values(reals);
    std::vector<unsigned char> host(buf.bytes());
    if (of_inputs && is_reduced(p)) {
      const int steps = p == Precision::B ? 128 : 1024;
      std::uniform_int_distribution<int> step(-steps, steps - 1);
      for (size_t i = 0; i < reals; ++i) {
        int s = 0;
        while (s == 0) s = step(rng);
        const float v = float(s) / float(steps);
        values[i] = v;
        if (bytes == 4) {
          std::memcpy(host.data() + 4 * i, &v, 4);
        } else {
          const std::uint16_t bits = p == Precision::H
                                         ? __half_raw(__float2half_rn(v)).x
                                         : __nv_bfloat16_raw(__float2bfloat16_rn(v)).x;
          std::memcpy(host.data() + 2 * i, &bits, 2);
        }
      }
    } else if (is_double(p)) {
      auto* v = reinterpret_cast<double*>(host.data());
      for (size_t i = 0; i < reals; ++i) v[i] = values[i] = dist(rng);
    } else {
      auto* v = reinterpret_cast<float*>(host.data());
      for (size_t i = 0; i < reals; ++i) values[i] = v[i] = float(dist(rng));
    }
    check(cudaMemcpy(buf.get(), host.data(), host.size(), cudaMemcpyHostToDevice),
          "cudaMemcpy H2D");
    return values;
  }

  static gpu::DeviceBuffer<unsigned char> upload(const std::vector<double>& v) {
    gpu::DeviceBuffer<unsigned char> d(v.size() * sizeof(double));
    check(cudaMemcpy(d.get(), v.data(), d.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    return d;
  }

  // Output before a verified launch: NaN everywhere when C is not read (0xFF bytes are NaN in
  // IEEE float and double), the pristine input C otherwise.
  void reset_output(const Problem& p) {
    if (p.beta.re == 0.0 && p.beta.im == 0.0)
      check(cudaMemsetAsync(c.get(), 0xFF, c.bytes(), stream->get()), "poison C");
    else
      check(cudaMemcpyAsync(c.get(), c0.get(), c.bytes(), cudaMemcpyDeviceToDevice, stream->get()),
            "restore C");
  }

  // ||C - C_ref|| / ||C_ref|| over the m x n part of every matrix, against the FP64 reference;
  // NaN if any entry is unwritten.
  double relative_error(const Problem& p) {
    check(cudaMemcpy(c_host.get(), c.get(), c.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    const double* want = reference.data();
    const int parts = is_complex(p.precision) ? 2 : 1;
    // Columns are shared out among threads: on a 6144 x 6016 DGEMM the serial loop cost more
    // than the measurement itself, and a sweep verifies every kernel.
    struct Sums {
      double diff = 0, norm = 0;
      bool written = true;
    };
    const std::int64_t columns = p.batch * p.n;
    const int threads = int(
        std::clamp<std::int64_t>(std::min<std::int64_t>(std::thread::hardware_concurrency(), 16), 1,
                                 std::max<std::int64_t>(1, p.m * columns / (1 << 18))));
    std::vector<Sums> sums(static_cast<size_t>(threads));
    auto accumulate = [&](auto* g, int t) {
      Sums& s = sums[size_t(t)];
      for (std::int64_t col = t; col < columns; col += threads) {
        const std::int64_t z = col / p.n, j = col % p.n;
        const size_t first = size_t((z * p.stride_c() + j * p.ldc) * parts);
        for (size_t idx = first; idx < first + size_t(p.m * parts); ++idx) {
          const double x = double(g[idx]), y = want[idx];
          s.written &= !std::isnan(x);
          s.diff += (x - y) * (x - y);
          s.norm += y * y;
        }
      }
    };
    auto run = [&](int t) {
      if (is_double(p.precision))
        accumulate(reinterpret_cast<const double*>(c_host.get()), t);
      else
        accumulate(reinterpret_cast<const float*>(c_host.get()), t);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
    run(0);
    for (auto& th : pool) th.join();
    Sums total;
    for (const auto& s : sums) {  // in thread order, so the result does not vary between runs
      total.diff += s.diff;
      total.norm += s.norm;
      total.written &= s.written;
    }
    if (!total.written) return std::nan("");
    return total.norm > 0 ? std::sqrt(total.diff / total.norm) : std::sqrt(total.diff);
  }

  // Where the C read back by relative_error differs from the reference, in config's C tiles.
  std::string mismatch(const Problem& p, const KernelConfig& config, double tolerance) {
    const double* want = reference.data();
    if (is_double(p.precision))
      return locate_mismatch(reinterpret_cast<const double*>(c_host.get()), want, p, config.blk_m,
                             config.blk_n, tolerance);
    return locate_mismatch(reinterpret_cast<const float*>(c_host.get()), want, p, config.blk_m,
                           config.blk_n, tolerance);
  }

  // Times `launch` with events: warm-up, then one event pair per repetition.
  template <typename Launch>
  void time(const TimingOptions& t, Measurement& m, double flops, Launch&& launch) {
    time_on_stream(t, m, flops, stream->get(), flush, launch);
  }
};

GpuSession::GpuSession(int device) : impl_(std::make_unique<Impl>()) {
  if (cuda_device_count() <= device)
    throw InputError("no CUDA GPU " + std::to_string(device) +
                     " on this machine; use `gemmtune predict` with a built-in spec instead");
  impl_->device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaFree(nullptr), "context creation");
  impl_->spec = query_local_device();
  impl_->stream = std::make_unique<gpu::Stream>();
  impl_->cublas = std::make_unique<gpu::Cublas>();
  impl_->flush = gpu::DeviceBuffer<unsigned char>(size_t(impl_->spec.l2_bytes) * 2);
}

GpuSession::~GpuSession() = default;

const DeviceSpec& GpuSession::device() const {
  return impl_->spec;
}
bool GpuSession::poisoned() const {
  return impl_->poisoned;
}

void GpuSession::prepare(const Problem& problem) {
  Impl& s = *impl_;
  if (s.poisoned) throw gpu::StickyError("the CUDA context is unusable after an earlier fault");
  if (s.has_problem && s.prepared == problem) return;
  s.has_problem = false;
  s.a = {};
  s.b = {};
  s.c = {};
  s.c0 = {};
  s.c_host = {};
  s.reference.clear();
  const Precision pr = problem.precision;
  const size_t a_bytes =
      matrix_bytes(problem.lda, problem.cols_a(), problem.batch, element_bytes(pr));
  const size_t b_bytes =
      matrix_bytes(problem.ldb, problem.cols_b(), problem.batch, element_bytes(pr));
  const size_t c_bytes = matrix_bytes(problem.ldc, problem.n, problem.batch, c_element_bytes(pr));
  // A, B, C, C's input copy, and (transiently) FP64 copies of all three for the reference.
  const size_t widen = size_t(8 / real_bytes(pr)),
               widen_ab = size_t(8 * (is_complex(pr) ? 2 : 1) / element_bytes(pr));
  const size_t need =
      a_bytes + b_bytes + 2 * c_bytes + widen_ab * (a_bytes + b_bytes) + widen * c_bytes;
  size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  if (need > free_bytes * 9 / 10)
    throw InputError(
        problem.shape_id() + " needs " + std::to_string(need >> 20) +
        " MiB of device memory (A, B, C, the input copy of C and FP64 copies for the reference); " +
        std::to_string(free_bytes >> 20) + " MiB are free");
  s.a = gpu::DeviceBuffer<unsigned char>(a_bytes);
  s.b = gpu::DeviceBuffer<unsigned char>(b_bytes);
  s.c = gpu::DeviceBuffer<unsigned char>(c_bytes);
  s.c0 = gpu::DeviceBuffer<unsigned char>(c_bytes);
  s.c_host = gpu::PinnedHostBuffer<unsigned char>(c_bytes);
  const auto ha = s.fill_random(s.a, pr, 11, true);
  const auto hb = s.fill_random(s.b, pr, 23, true);
  s.reference = s.fill_random(s.c0, pr, 37);
  {
    // The reference is FP64 (DGEMM or ZGEMM on the same values), so it judges FP32 kernels and
    // cuBLAS alike without inheriting either one's rounding.
    Problem wide = problem;
    wide.precision = is_complex(pr) ? Precision::Z : Precision::D;
    const auto wa = Impl::upload(ha), wb = Impl::upload(hb), wc = Impl::upload(s.reference);
    s.cublas_gemm(wide, wa.get(), wb.get(), wc.get());
    check(cudaStreamSynchronize(s.stream->get()), "FP64 reference");
    check(cudaMemcpy(s.reference.data(), wc.get(), wc.bytes(), cudaMemcpyDeviceToHost),
          "cudaMemcpy D2H");
  }
  s.prepared = problem;
  s.has_problem = true;
}

Measurement GpuSession::measure(const Problem& p, const KernelConfig& config,
                                const CompileResult& compiled, const TimingOptions& timing) {
  Impl& s = *impl_;
  Measurement m;
  if (!compiled.ok) {
    m.status = Status::CompileError;
    m.error = compiled.log;
    return m;
  }
  prepare(p);
  std::unique_ptr<LoadedKernel> kernel;
  try {
    kernel = std::make_unique<LoadedKernel>(compiled, config, p.precision);
  } catch (const gpu::CudaError& e) {
    m.status = Status::LaunchError;
    m.error = e.what();
    return m;
  }
  void* C = s.c.get();
  // Test hook: the configuration named in GEMMTUNE_PLANT_FAULT writes through a bad pointer,
  // which poisons the context as a real out-of-bounds kernel does.
  if (const char* planted = std::getenv("GEMMTUNE_PLANT_FAULT"); planted && config.id() == planted)
    C = reinterpret_cast<void*>(std::uintptr_t(0x10));
  auto launch = [&] { kernel->launch(p, s.a.get(), s.b.get(), C, s.stream->get()); };
  try {
    s.reset_output(p);
    try {
      launch();
    } catch (const gpu::CudaError& e) {
      m.status = Status::LaunchError;
      m.error = e.what();
      return m;
    }
    check(cudaStreamSynchronize(s.stream->get()), "kernel execution");
    m.rel_error = s.relative_error(p);
    const double tolerance = verify_tolerance(p.precision, p.k);
    if (!(m.rel_error <= tolerance)) {
      m.status = Status::Wrong;
      std::ostringstream why;
      if (std::isnan(m.rel_error))
        why << "output left unwritten (NaN poison survived)";
      else
        why << "relative error " << std::setprecision(3) << m.rel_error << " exceeds " << tolerance;
      why << "; " << s.mismatch(p, config, tolerance);
      m.error = why.str();
      return m;
    }
    s.time(timing, m, p.flops(), launch);
  } catch (const gpu::StickyError& e) {
    s.poisoned = true;
    m.status = Status::ExecuteError;
    m.error = e.what();
  } catch (const gpu::CudaError& e) {
    m.status = Status::ExecuteError;
    m.error = e.what();
  }
  return m;
}

CounterValues GpuSession::profile(const Problem& p, const KernelConfig& config,
                                  const CompileResult& compiled,
                                  const std::vector<std::string>& metrics) {
  Impl& s = *impl_;
  if (!compiled.ok) throw InputError("configuration " + config.id() + " did not compile");
  prepare(p);
  const LoadedKernel kernel(compiled, config, p.precision);
  return collect_counters(
      s.device, metrics,
      [&] {
        s.reset_output(p);
        if (s.flush.size())
          check(cudaMemsetAsync(s.flush.get(), 0, s.flush.bytes(), s.stream->get()), "L2 flush");
        check(cudaStreamSynchronize(s.stream->get()), "before a profiled pass");
      },
      [&] {
        kernel.launch(p, s.a.get(), s.b.get(), s.c.get(), s.stream->get());
        check(cudaStreamSynchronize(s.stream->get()), "profiled launch");
      });
}

EnergyMeasurement GpuSession::energy(const Problem& p, const KernelConfig& config,
                                     const CompileResult& compiled, double seconds_per_run,
                                     double min_seconds) {
  Impl& s = *impl_;
  if (!compiled.ok) throw InputError("configuration " + config.id() + " did not compile");
  prepare(p);
  const LoadedKernel kernel(compiled, config, p.precision);
  return measure_energy(
      s.device, [&] { kernel.launch(p, s.a.get(), s.b.get(), s.c.get(), s.stream->get()); },
      seconds_per_run, min_seconds);
}

Measurement GpuSession::measure_cublas(const Problem& p, const TimingOptions& timing) {
  Impl& s = *impl_;
  prepare(p);
  Measurement m;
  s.reset_output(p);
  s.cublas_gemm(p, s.c.get());
  check(cudaStreamSynchronize(s.stream->get()), "cuBLAS");
  m.rel_error = s.relative_error(p);
  s.time(timing, m, p.flops(), [&] { s.cublas_gemm(p, s.c.get()); });
  return m;
}

int GpuSession::driver_occupancy(const KernelConfig& config, Precision precision,
                                 const CompileResult& compiled) {
  gpu::Module module(compiled.cubin, kKernelEntry);
  const std::int64_t smem = shared_bytes(config, precision);
  const auto& d = gpu::DriverApi::get();
  check(d.func_set_attribute(module.function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(smem)),
        "cuFuncSetAttribute");
  int blocks = 0;
  check(d.occupancy(&blocks, module.function(), config.threads(), size_t(smem)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

}  // namespace gemmtune

namespace gemmtune {

Measurement time_launches(const std::function<void()>& launch, void* stream,
                          const TimingOptions& timing, double flops) {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  const gpu::DeviceBuffer<unsigned char> flush(timing.flush_l2 ? size_t(l2) * 2 : 0);
  Measurement m;
  time_on_stream(timing, m, flops, static_cast<cudaStream_t>(stream), flush, launch);
  return m;
}

}  // namespace gemmtune
