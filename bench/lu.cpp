// LU client: a blocked right-looking LU factorization with partial pivoting on the GPU, whose
// trailing updates run through gemmtune::gemm or through cuBLAS (one code path, the engine a
// flag), timed and verified in the same run.
//   lu_client [--precision s,d] [--n N,...] [--nb NB,...] [--repeats R] [--db PATH | --bundle DIR]
//             [--engines cublas,gemmtune] [--threshold T] [--seed S] [--json FILE]
//             [--swaps cusolver|cublas] [--print-problems]
// Each panel: cusolverDn<t>getrf on the (N - j) x nb panel, its row swaps applied left and right
// of it (cusolverDn<t>laswp, or with --swaps cublas one cublas<t>swap per row, the pivots read
// back each panel: a cross-check, slower), U12 by cuBLAS TRSM, then A22 -= L21 * U12 by the
// engine. Verified by ||P A - L U||_F / (||A||_F N eps) on the GPU, P A formed twice: by
// cusolverDn<t>laswp with the whole-matrix pivots, and by gathering A's rows in the order the
// host computes from those pivots (cublas<t>copy, no laswp). --print-problems prints the updates
// as a `gemmtune tune --problems` file, to tune the workload before timing it.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/lu_updates.hpp"
#include "profiler/cuda_handles.hpp"
#include "runtime/runtime.hpp"

using namespace gemmtune;

namespace {

constexpr int kNoGpu = 77;  // what the GPU tests return where they cannot run
constexpr std::int64_t kMinBlock = 64, kMaxBlock = 512;
// Any nb in range runs: where N or nb leaves L21 or U12 unaligned for a kernel's vector loads,
// gemm runs that kernel's scalar-load variant (multiples of 8 of both keep them aligned).

// ---------------------------------------------------------------- errors and owned handles
// CUDA and cuBLAS: the profiler's checks and owners (gpu::check, DeviceBuffer, Stream, Event,
// Cublas); cuSOLVER, which the profiler does not use, here.
using gpu::check;
using GpuError = gpu::CudaError;
template <typename T>
using DeviceArray = gpu::DeviceBuffer<T>;

void check(cusolverStatus_t s, const std::string& what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw GpuError(what + ": cuSOLVER status " + std::to_string(int(s)));
}

// A fixed set of events: one pair per trailing update and one for the whole factorization.
class Events {
 public:
  explicit Events(size_t count) : events_(count) {}
  cudaEvent_t operator[](size_t i) const { return events_.at(i).get(); }
  // Milliseconds between events i and i + 1.
  double elapsed_ms(size_t i) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, (*this)[i], (*this)[i + 1]), "cudaEventElapsedTime");
    return ms;
  }

 private:
  std::vector<gpu::Event> events_;
};

class Cusolver {
 public:
  explicit Cusolver(cudaStream_t stream) {
    check(cusolverDnCreate(&h_), "cusolverDnCreate");
    check(cusolverDnSetStream(h_, stream), "cusolverDnSetStream");
  }
  ~Cusolver() {
    if (h_) cusolverDnDestroy(h_);
  }
  Cusolver(const Cusolver&) = delete;
  Cusolver& operator=(const Cusolver&) = delete;
  cusolverDnHandle_t get() const { return h_; }

 private:
  cusolverDnHandle_t h_ = nullptr;
};

// Everything runs in order on one stream: cuSOLVER, cuBLAS and gemmtune::gemm alike.
struct Gpu {
  gpu::Stream stream;
  gpu::Cublas blas;
  Cusolver solver{stream.get()};
  Gpu() { check(cublasSetStream(blas.get(), stream.get()), "cublasSetStream"); }
  void sync() const { check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize"); }
};

// ---------------------------------------------------------------- the library calls per type
template <typename T>
struct Library;
template <>
struct Library<float> {
  static constexpr char name = 's';
  static constexpr Precision precision = Precision::S;
  static constexpr auto getrf_buffer_size = &cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = &cusolverDnSgetrf;
  static constexpr auto laswp = &cusolverDnSlaswp;
  static constexpr auto trsm = &cublasStrsm;
  static constexpr auto trmm = &cublasStrmm;
  static constexpr auto geam = &cublasSgeam;
  static constexpr auto gemm = &cublasSgemm;
  static constexpr auto nrm2 = &cublasSnrm2_64;
  static constexpr auto copy = &cublasScopy;
  static constexpr auto swap = &cublasSswap;
  // As the project's cuBLAS reference: FP32 without TF32.
  static constexpr cublasMath_t math = CUBLAS_PEDANTIC_MATH;
};
template <>
struct Library<double> {
  static constexpr char name = 'd';
  static constexpr Precision precision = Precision::D;
  static constexpr auto getrf_buffer_size = &cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = &cusolverDnDgetrf;
  static constexpr auto laswp = &cusolverDnDlaswp;
  static constexpr auto trsm = &cublasDtrsm;
  static constexpr auto trmm = &cublasDtrmm;
  static constexpr auto geam = &cublasDgeam;
  static constexpr auto gemm = &cublasDgemm;
  static constexpr auto nrm2 = &cublasDnrm2_64;
  static constexpr auto copy = &cublasDcopy;
  static constexpr auto swap = &cublasDswap;
  static constexpr cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

// ---------------------------------------------------------------- input
// splitmix64 of the element's index, in (-1, 1): the same matrix whatever the chunking.
double random_entry(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}

template <typename T>
void fill_random(const Gpu& gpu, T* device, size_t count, std::uint64_t seed) {
  constexpr size_t kChunk = size_t(1) << 22;
  std::vector<T> host(std::min(count, kChunk));
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = std::min(kChunk, count - first);
    for (size_t i = 0; i < n; ++i) host[i] = T(random_entry(seed, first + i));
    check(cudaMemcpyAsync(device + first, host.data(), n * sizeof(T), cudaMemcpyHostToDevice,
                          gpu.stream.get()),
          "copying the random matrix");
    gpu.sync();  // before the chunk is overwritten
  }
}

// ---------------------------------------------------------------- the factorization
enum class Engine { Cublas, Gemmtune };
const char* name_of(Engine e) {
  return e == Engine::Cublas ? "cublas" : "gemmtune";
}

// What applies each panel's row swaps to the columns left and right of it.
enum class Swaps { Cusolver, Cublas };

struct Timing {
  double total_ms = 0;
  double update_ms = 0;  // the trailing updates' events, summed
};

// ||P A - L U||_F / (||A||_F N eps), P A by cusolverDn<t>laswp and by a gather of A's rows.
struct Residuals {
  double laswp = 0, gathered = 0;
};

// One order's matrices, shared by every block size: the input, the factors, and for the check
// L U and P A.
template <typename T>
struct Matrices {
  std::int64_t n;
  DeviceArray<T> input, factors, product, permuted;
  DeviceArray<int> pivots, info;

  explicit Matrices(std::int64_t order)
      : n(order),
        input(elements(order)),
        factors(elements(order)),
        product(elements(order)),
        permuted(elements(order)),
        pivots(size_t(order)),
        info(size_t(order)) {}

  static size_t elements(std::int64_t order) { return size_t(order) * size_t(order); }
};

// Throws naming the order and the sizes when the four matrices would not fit.
template <typename T>
void check_memory(std::int64_t n) {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  const double need = 4.0 * double(n) * double(n) * sizeof(T);
  if (need > 0.95 * double(free))
    throw GpuError("N = " + std::to_string(n) + " in " + Library<T>::name + " needs " +
                   std::to_string(need / 1e9) +
                   " GB of GPU memory (A, its factors, L U and P A); " +
                   std::to_string(double(free) / 1e9) + " GB are free");
}

int as_int(std::int64_t v) {
  if (v > INT_MAX) throw InputError(std::to_string(v) + " exceeds cuSOLVER's int sizes");
  return int(v);
}

template <typename T>
class BlockedLu {
 public:
  BlockedLu(const Gpu& gpu, Matrices<T>& m, std::int64_t nb, Swaps swaps)
      : gpu_(gpu),
        m_(m),
        n_(m.n),
        nb_(nb),
        swaps_(swaps),
        updates_(lu::update_problems(Library<T>::precision, m.n, nb).size()),
        events_(2 * updates_ + 2),
        work_(workspace_elements()) {}

  // A copied into the factors (not timed), then factored in place.
  Timing factor(Engine engine) {
    check(cudaMemcpyAsync(m_.factors.get(), m_.input.get(), m_.factors.bytes(),
                          cudaMemcpyDeviceToDevice, gpu_.stream.get()),
          "copying A");
    check(cublasSetMathMode(gpu_.blas.get(), Library<T>::math), "cublasSetMathMode");
    const size_t whole = 2 * updates_;
    check(cudaEventRecord(events_[whole], gpu_.stream.get()), "cudaEventRecord");
    size_t update = 0;
    for (std::int64_t j = 0; j < n_; j += nb_) {
      const std::int64_t jb = std::min(nb_, n_ - j), rest = n_ - j - jb;
      factor_panel(j, jb);
      // The last panel's swaps too: L's rows left of it must follow them (P A = L U).
      swap_rows(j, jb, rest);
      if (rest == 0) continue;
      solve_row_block(j, jb);
      check(cudaEventRecord(events_[2 * update], gpu_.stream.get()), "cudaEventRecord");
      update_trailing(engine, rest, jb, at(j + jb, j), at(j, j + jb), at(j + jb, j + jb));
      check(cudaEventRecord(events_[2 * update + 1], gpu_.stream.get()), "cudaEventRecord");
      ++update;
    }
    check(cudaEventRecord(events_[whole + 1], gpu_.stream.get()), "cudaEventRecord");
    gpu_.sync();
    check_panels();
    Timing t;
    t.total_ms = events_.elapsed_ms(whole);
    for (size_t u = 0; u < updates_; ++u) t.update_ms += events_.elapsed_ms(2 * u);
    return t;
  }

  // ||P A - L U||_F / (||A||_F N eps) of the last factorization. L U is formed without either
  // factor: W = I, W = triu(LU) W, W = unit-tril(LU) W (two in-place TRMMs). P A twice: laswp
  // with the whole-matrix pivots, then A's rows gathered in the order the host derives from them.
  Residuals residual() {
    const std::vector<int> pivots = global_pivots();
    const std::vector<std::int64_t> rows = lu::row_permutation(pivots);
    check(cudaMemcpyAsync(m_.pivots.get(), pivots.data(), pivots.size() * sizeof(int),
                          cudaMemcpyHostToDevice, gpu_.stream.get()),
          "copying the pivots");
    T* w = m_.product.get();
    check(cudaMemsetAsync(w, 0, m_.product.bytes(), gpu_.stream.get()), "cudaMemsetAsync");
    const std::vector<T> ones(static_cast<size_t>(n_), T(1));
    check(cudaMemcpy2DAsync(w, size_t(n_ + 1) * sizeof(T), ones.data(), sizeof(T), sizeof(T),
                            size_t(n_), cudaMemcpyHostToDevice, gpu_.stream.get()),
          "writing the identity's diagonal");
    const T one = 1, minus_one = -1;
    const int n = as_int(n_);
    cublasHandle_t h = gpu_.blas.get();
    check(Library<T>::trmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                           CUBLAS_DIAG_NON_UNIT, n, n, &one, m_.factors.get(), n, w, n, w, n),
          "trmm U");
    check(Library<T>::trmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                           CUBLAS_DIAG_UNIT, n, n, &one, m_.factors.get(), n, w, n, w, n),
          "trmm L");
    T* pa = m_.permuted.get();
    check(cudaMemcpyAsync(pa, m_.input.get(), m_.permuted.bytes(), cudaMemcpyDeviceToDevice,
                          gpu_.stream.get()),
          "copying A");
    check(Library<T>::laswp(gpu_.solver.get(), n, pa, n, 1, n, m_.pivots.get(), 1), "laswp P A");
    check(Library<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, &one, pa, n, &minus_one, w, n, pa, n),
          "geam P A - L U");
    T error = 0, gathered_error = 0, norm = 0;
    const std::int64_t count = n_ * n_;
    check(Library<T>::nrm2(h, count, pa, 1, &error), "nrm2 of P A - L U");
    // Row i of P A is row rows[i] of A: one strided copy per row, no cuSOLVER.
    for (std::int64_t i = 0; i < n_; ++i)
      check(Library<T>::copy(h, n, m_.input.get() + rows[size_t(i)], n, pa + i, n),
            ("copying row " + std::to_string(rows[size_t(i)]) + " of A").c_str());
    check(Library<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, &one, pa, n, &minus_one, w, n, pa, n),
          "geam gathered P A - L U");
    check(Library<T>::nrm2(h, count, pa, 1, &gathered_error), "nrm2 of gathered P A - L U");
    check(Library<T>::nrm2(h, count, m_.input.get(), 1, &norm), "nrm2 of A");
    gpu_.sync();
    const double scale = double(norm) * double(n_) * double(std::numeric_limits<T>::epsilon());
    return {double(error) / scale, double(gathered_error) / scale};
  }

 private:
  T* at(std::int64_t row, std::int64_t col) const { return m_.factors.get() + row + col * n_; }

  // The largest getrf workspace of any panel (the first, tallest, in practice).
  size_t workspace_elements() const {
    int most = 0;
    for (std::int64_t j = 0; j < n_; j += nb_) {
      int lwork = 0;
      check(Library<T>::getrf_buffer_size(gpu_.solver.get(), as_int(n_ - j),
                                          as_int(std::min(nb_, n_ - j)), at(j, j), as_int(n_),
                                          &lwork),
            "getrf_bufferSize");
      most = std::max(most, lwork);
    }
    return size_t(std::max(most, 1));
  }

  // getrf of the (N - j) x jb panel; its pivots are numbered from the panel's first row.
  void factor_panel(std::int64_t j, std::int64_t jb) {
    check(Library<T>::getrf(gpu_.solver.get(), as_int(n_ - j), as_int(jb), at(j, j), as_int(n_),
                            work_.get(), m_.pivots.get() + j, m_.info.get() + j / nb_),
          "getrf of the panel at column " + std::to_string(j));
  }

  // The panel's row swaps on the columns left and right of it (getrf swapped its own).
  void swap_rows(std::int64_t j, std::int64_t jb, std::int64_t rest) {
    const int n = as_int(n_);
    if (swaps_ == Swaps::Cublas) {
      std::vector<int> local(static_cast<size_t>(jb));
      check(cudaMemcpyAsync(local.data(), m_.pivots.get() + j, local.size() * sizeof(int),
                            cudaMemcpyDeviceToHost, gpu_.stream.get()),
            "copying the panel's pivots");
      gpu_.sync();
      for (std::int64_t i = 0; i < jb; ++i) {
        const std::int64_t row = j + i, other = j + local[size_t(i)] - 1;
        if (other < row || other >= n_)
          throw GpuError("getrf's pivot " + std::to_string(local[size_t(i)]) + " of row " +
                         std::to_string(row) + " lies outside the panel at column " +
                         std::to_string(j));
        if (other == row) continue;
        cublasHandle_t h = gpu_.blas.get();
        if (j > 0)
          check(Library<T>::swap(h, as_int(j), at(row, 0), n, at(other, 0), n), "swap left");
        if (rest > 0)
          check(Library<T>::swap(h, as_int(rest), at(row, j + jb), n, at(other, j + jb), n),
                "swap right");
      }
      return;
    }
    cusolverDnHandle_t s = gpu_.solver.get();
    const int* pivots = m_.pivots.get() + j;
    if (j > 0)
      check(Library<T>::laswp(s, as_int(j), at(j, 0), n, 1, as_int(jb), pivots, 1), "laswp left");
    if (rest > 0)
      check(Library<T>::laswp(s, as_int(rest), at(j, j + jb), n, 1, as_int(jb), pivots, 1),
            "laswp right");
  }

  // U12 = L11^-1 A12, after the swaps.
  void solve_row_block(std::int64_t j, std::int64_t jb) {
    const int n = as_int(n_), rest = as_int(n_ - j - jb);
    const T one = 1;
    check(Library<T>::trsm(gpu_.blas.get(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                           CUBLAS_DIAG_UNIT, as_int(jb), rest, &one, at(j, j), n, at(j, j + jb), n),
          "trsm U12");
  }

  // A22 -= L21 * U12, m x m by k, every operand inside the matrix: the one call that differs.
  void update_trailing(Engine engine, std::int64_t m, std::int64_t k, const T* l21, const T* u12,
                       T* a22) {
    const T one = 1, minus_one = -1;
    if (engine == Engine::Gemmtune) {
      gemmtune::gemm(Op::N, Op::N, m, m, k, minus_one, l21, n_, u12, n_, one, a22, n_,
                     gpu_.stream.get());
      return;
    }
    const int n = as_int(n_);
    check(Library<T>::gemm(gpu_.blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, as_int(m), as_int(m),
                           as_int(k), &minus_one, l21, n, u12, n, &one, a22, n),
          "cublas gemm");
  }

  // getrf's info per panel: > 0 is an exact zero pivot, < 0 a bad argument.
  void check_panels() const {
    std::vector<int> info(size_t(lu::panel_count(n_, nb_)));
    check(cudaMemcpy(info.data(), m_.info.get(), info.size() * sizeof(int), cudaMemcpyDeviceToHost),
          "copying getrf's info");
    for (size_t p = 0; p < info.size(); ++p)
      if (info[p] != 0)
        throw GpuError("getrf of the panel at column " + std::to_string(std::int64_t(p) * nb_) +
                       " returned info " + std::to_string(info[p]) +
                       (info[p] > 0 ? " (an exact zero pivot)" : " (a bad argument)"));
  }

  std::vector<int> global_pivots() const {
    std::vector<int> local(static_cast<size_t>(n_));
    check(cudaMemcpy(local.data(), m_.pivots.get(), local.size() * sizeof(int),
                     cudaMemcpyDeviceToHost),
          "copying the pivots");
    return lu::global_pivots(local, nb_);
  }

  const Gpu& gpu_;
  Matrices<T>& m_;
  std::int64_t n_, nb_;
  Swaps swaps_;
  size_t updates_;
  Events events_;
  DeviceArray<T> work_;
};

// ---------------------------------------------------------------- results
struct DispatchSummary {
  int stored = 0, nearest = 0, model = 0;
  size_t kernels = 0;
};

// Where gemmtune took each update's kernel from, and how many distinct kernels that made.
DispatchSummary summarize_dispatch(Precision precision, std::int64_t n, std::int64_t nb) {
  DispatchSummary s;
  std::set<std::string> kernels;
  for (const Problem& p : lu::update_problems(precision, n, nb)) {
    const DispatchChoice c = last_dispatch(p);
    kernels.insert(c.config.id());
    if (c.source == DispatchSource::Stored)
      ++s.stored;
    else if (c.source == DispatchSource::NearestShape)
      ++s.nearest;
    else
      ++s.model;
  }
  s.kernels = kernels.size();
  return s;
}

struct Result {
  char precision = 'd';
  std::int64_t n = 0, nb = 0;
  Engine engine = Engine::Cublas;
  Timing first;               // the warm-up: library loading, and gemmtune's compiles
  std::vector<Timing> timed;  // the repeats after it
  Timing median;
  Residuals residual;
  bool pass = false;
  DispatchSummary dispatch;  // gemmtune only
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

Timing median_timing(const std::vector<Timing>& runs) {
  std::vector<double> total, update;
  for (const Timing& t : runs) {
    total.push_back(t.total_ms);
    update.push_back(t.update_ms);
  }
  return {median_of(total), median_of(update)};
}

void print_header() {
  std::printf("%-4s %6s %4s %-9s %11s %11s %10s %10s %5s %9s %8s %9s %9s  %s\n", "prec", "N", "nb",
              "engine", "first_ms", "first_upd", "median_ms", "update_ms", "upd%", "upd_TF/s",
              "LU_TF/s", "residual", "gathered", "check");
}

void print_result(const Result& r) {
  const double n = double(r.n), lu_flops = 2.0 / 3 * n * n * n;
  const double update_flops = lu::update_flops(r.n, r.nb);
  std::printf(
      "%-4c %6lld %4lld %-9s %11.2f %11.2f %10.2f %10.2f %5.1f %9.2f %8.2f %9.2e %9.2e  %s\n",
      r.precision, static_cast<long long>(r.n), static_cast<long long>(r.nb), name_of(r.engine),
      r.first.total_ms, r.first.update_ms, r.median.total_ms, r.median.update_ms,
      100 * r.median.update_ms / r.median.total_ms,
      r.median.update_ms > 0 ? update_flops / (r.median.update_ms * 1e9) : 0.0,
      lu_flops / (r.median.total_ms * 1e9), r.residual.laswp, r.residual.gathered,
      r.pass ? "PASS" : "FAIL");
  if (r.engine == Engine::Gemmtune)
    std::printf(
        "     gemmtune dispatch of the %d updates: %d stored, %d nearest tuned shape, %d "
        "model; %zu distinct kernels\n",
        r.dispatch.stored + r.dispatch.nearest + r.dispatch.model, r.dispatch.stored,
        r.dispatch.nearest, r.dispatch.model, r.dispatch.kernels);
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const Timing& t : r.timed)
    runs.push_back({{"total_ms", t.total_ms}, {"update_ms", t.update_ms}});
  nlohmann::json j = {{"precision", std::string(1, r.precision)},
                      {"n", r.n},
                      {"nb", r.nb},
                      {"engine", name_of(r.engine)},
                      {"first_total_ms", r.first.total_ms},
                      {"first_update_ms", r.first.update_ms},
                      {"median_total_ms", r.median.total_ms},
                      {"median_update_ms", r.median.update_ms},
                      {"runs", runs},
                      {"update_flops", lu::update_flops(r.n, r.nb)},
                      {"residual_fro", r.residual.laswp},
                      {"residual_fro_gathered", r.residual.gathered},
                      {"pass", r.pass}};
  if (r.engine == Engine::Gemmtune)
    j["dispatch"] = {{"stored", r.dispatch.stored},
                     {"nearest_shape", r.dispatch.nearest},
                     {"model", r.dispatch.model},
                     {"distinct_kernels", r.dispatch.kernels}};
  return j;
}

// ---------------------------------------------------------------- options
struct Options {
  std::vector<std::string> precisions{"d"};
  std::vector<std::int64_t> sizes{8192};
  std::vector<std::int64_t> blocks{256};
  std::vector<std::string> engines{"cublas", "gemmtune"};
  int repeats = 3;
  std::string db, bundle, json;
  double threshold = 10;
  std::uint64_t seed = 1;
  bool print_problems = false;
  std::string swaps = "cusolver";
};

std::vector<Precision> precisions_of(const Options& o) {
  std::vector<Precision> out;
  for (const std::string& p : o.precisions) {
    if (p == "both") {
      out.push_back(Precision::S);
      out.push_back(Precision::D);
    } else if (p == "s" || p == "d") {
      out.push_back(parse_precision(p));
    } else {
      throw InputError("--precision '" + p + "' is not s, d or both");
    }
  }
  return out;
}

std::vector<Engine> engines_of(const Options& o) {
  std::vector<Engine> out;
  for (const std::string& e : o.engines) {
    if (e == "cublas")
      out.push_back(Engine::Cublas);
    else if (e == "gemmtune")
      out.push_back(Engine::Gemmtune);
    else
      throw InputError("--engines '" + e + "' is not cublas or gemmtune");
  }
  return out;
}

Swaps swaps_of(const Options& o) {
  if (o.swaps == "cusolver") return Swaps::Cusolver;
  if (o.swaps == "cublas") return Swaps::Cublas;
  throw InputError("--swaps '" + o.swaps + "' is not cusolver or cublas");
}

// Every (precision, N, nb) asked for; throws InputError naming a bad value.
std::vector<lu::Blocking> blockings_of(const Options& o) {
  if (o.repeats < 1) throw InputError("--repeats " + std::to_string(o.repeats) + " is below 1");
  if (!(o.threshold > 0))
    throw InputError("--threshold " + std::to_string(o.threshold) + " is not above 0");
  if (!o.db.empty() && !o.bundle.empty())
    throw InputError("--db '" + o.db + "' and --bundle '" + o.bundle + "' exclude each other");
  for (std::int64_t n : o.sizes)
    if (n < 1 || n > INT_MAX)
      throw InputError("--n " + std::to_string(n) + " is outside 1.." + std::to_string(INT_MAX));
  for (std::int64_t nb : o.blocks)
    if (nb < kMinBlock || nb > kMaxBlock)
      throw InputError("--nb " + std::to_string(nb) + " is outside " + std::to_string(kMinBlock) +
                       ".." + std::to_string(kMaxBlock));
  std::vector<lu::Blocking> out;
  for (Precision p : precisions_of(o))
    for (std::int64_t n : o.sizes)
      for (std::int64_t nb : o.blocks) out.push_back({p, n, nb});
  return out;
}

// ---------------------------------------------------------------- the runs
// Each engine's warm-up factorization (checked), then the repeats, engines alternating so that
// neither gains from the order (clocks, L2). cuBLAS goes first: the panel's cuSOLVER and cuBLAS
// kernels are then loaded before gemmtune's first run, which pays only its own dispatch.
template <typename T>
std::vector<Result> run_blocking(const Gpu& gpu, Matrices<T>& m, std::int64_t nb,
                                 const std::vector<Engine>& engines, const Options& o) {
  BlockedLu<T> factorization(gpu, m, nb, swaps_of(o));
  std::vector<Result> results;
  for (Engine e : engines) {
    Result r;
    r.precision = Library<T>::name;
    r.n = m.n;
    r.nb = nb;
    r.engine = e;
    r.first = factorization.factor(e);
    r.residual = factorization.residual();
    r.pass = std::isfinite(r.residual.laswp) && r.residual.laswp < o.threshold &&
             std::isfinite(r.residual.gathered) && r.residual.gathered < o.threshold;
    if (e == Engine::Gemmtune) r.dispatch = summarize_dispatch(Library<T>::precision, m.n, nb);
    results.push_back(r);
  }
  for (int i = 0; i < o.repeats; ++i)
    for (Result& r : results) r.timed.push_back(factorization.factor(r.engine));
  for (Result& r : results) r.median = median_timing(r.timed);
  return results;
}

// The time ratios gemmtune / cuBLAS of one blocking, when both ran.
nlohmann::json print_ratio(const std::vector<Result>& results) {
  const Result* cublas = nullptr;
  const Result* tuned = nullptr;
  for (const Result& r : results) (r.engine == Engine::Cublas ? cublas : tuned) = &r;
  if (!cublas || !tuned) return nullptr;
  const double total = tuned->median.total_ms / cublas->median.total_ms;
  const double update = tuned->median.update_ms > 0 && cublas->median.update_ms > 0
                            ? tuned->median.update_ms / cublas->median.update_ms
                            : 0.0;
  std::printf(
      "     time gemmtune/cuBLAS (below 1: gemmtune faster): factorization %.3f, updates "
      "%.3f\n",
      total, update);
  return {{"precision", std::string(1, cublas->precision)},
          {"n", cublas->n},
          {"nb", cublas->nb},
          {"total_ratio", total},
          {"update_ratio", update}};
}

template <typename T>
bool run_precision(const Gpu& gpu, const Options& o, const std::vector<Engine>& engines,
                   nlohmann::json& out) {
  bool all_pass = true;
  for (std::int64_t n : o.sizes) {
    check_memory<T>(n);
    Matrices<T> m(n);
    fill_random(gpu, m.input.get(), Matrices<T>::elements(n), o.seed);
    for (std::int64_t nb : o.blocks) {
      const std::vector<Result> results = run_blocking(gpu, m, nb, engines, o);
      for (const Result& r : results) {
        print_result(r);
        out["results"].push_back(to_json(r));
        all_pass = all_pass && r.pass;
      }
      if (const nlohmann::json ratio = print_ratio(results); !ratio.is_null())
        out["ratios"].push_back(ratio);
      std::fflush(stdout);
    }
  }
  return all_pass;
}

std::string device_name() {
  int device = 0;
  cudaDeviceProp prop{};
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return prop.name;
}

int run(const Options& o) {
  const std::vector<lu::Blocking> blockings = blockings_of(o);
  const std::vector<Engine> engines = engines_of(o);
  swaps_of(o);
  if (o.print_problems) {
    std::fputs(lu::workload_text(blockings).c_str(), stdout);
    return 0;
  }
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: lu_client needs a CUDA GPU; none is usable on this machine (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return kNoGpu;
  }
  std::ofstream json_file;
  if (!o.json.empty()) {
    json_file.open(o.json);
    if (!json_file) throw InputError("--json '" + o.json + "' cannot be written");
  }
  if (!o.db.empty()) set_dispatch_database(o.db);
  if (!o.bundle.empty()) set_dispatch_bundle(o.bundle);
  const Gpu gpu;
  nlohmann::json out = {{"device", device_name()},
                        {"db", o.db},
                        {"bundle", o.bundle},
                        {"repeats", o.repeats},
                        {"threshold", o.threshold},
                        {"residual", "||P A - L U||_F / (||A||_F N eps)"},
                        {"swaps", o.swaps},
                        {"results", nlohmann::json::array()},
                        {"ratios", nlohmann::json::array()}};
  std::printf(
      "lu_client on %s; gemmtune kernels from %s; median of %d runs after a warm-up; "
      "residual ||P A - L U||_F / (||A||_F N eps) with P A by laswp and gathered, PASS when both "
      "below %g; row swaps by %s\n",
      out["device"].get<std::string>().c_str(),
      !o.bundle.empty() ? ("the bundle " + o.bundle).c_str()
      : !o.db.empty()   ? ("the store " + o.db).c_str()
                        : "$GEMMTUNE_DB or the default store",
      o.repeats, o.threshold, o.swaps.c_str());
  print_header();
  bool pass = true;
  for (const std::string& p : o.precisions) {
    const bool both = p == "both";
    if (both || p == "s") pass = run_precision<float>(gpu, o, engines, out) && pass;
    if (both || p == "d") pass = run_precision<double>(gpu, o, engines, out) && pass;
  }
  if (json_file.is_open()) json_file << out.dump(2) << "\n";
  std::printf("%s\n",
              pass ? "all factorizations PASS" : "FAIL: a residual is at or above the threshold");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"blocked LU with partial pivoting: trailing updates by gemmtune::gemm and cuBLAS"};
  app.add_option("--precision,-p", o.precisions, "s, d or both (a list)")->delimiter(',');
  app.add_option("--n", o.sizes, "matrix orders (a list, or repeated)")->delimiter(',');
  app.add_option("--nb", o.blocks, "block sizes, multiples of 8 in 64..512 (a list, or repeated)")
      ->delimiter(',');
  app.add_option("--repeats", o.repeats, "timed factorizations after the warm-up");
  app.add_option("--engines", o.engines, "trailing-update engines: cublas, gemmtune")
      ->delimiter(',');
  app.add_option("--db", o.db, "the store gemmtune::gemm reads (default: $GEMMTUNE_DB or its own)");
  app.add_option("--bundle", o.bundle, "read kernels from this bundle (export --bundle) instead");
  app.add_option("--threshold", o.threshold, "PASS below this scaled residual");
  app.add_option("--seed", o.seed, "of the random matrix");
  app.add_option("--json", o.json, "write every run and ratio to this file");
  app.add_option("--swaps", o.swaps,
                 "what applies each panel's row swaps: cusolver (laswp) or cublas (a swap per row, "
                 "slower: a cross-check)");
  app.add_flag("--print-problems", o.print_problems,
               "print the updates as a `gemmtune tune --problems` file and exit (no GPU needed)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const InputError& e) {
    std::fprintf(stderr, "lu_client: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lu_client: %s\n", e.what());
    return 1;
  }
}
