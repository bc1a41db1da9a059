// gemmtune runtime: install-time tuning, run-time selection. gemm() dispatches the best stored
// kernel for a call, compiled and loaded once per device and shape.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "core/core.hpp"

struct CUstream_st;

namespace gemmtune {

using CudaStream = CUstream_st*;  // the same type as cudaStream_t

enum class DispatchSource { Stored, NearestShape, Model };
const char* to_string(DispatchSource s);

// A kernel weighed for an untuned shape: from a tuned neighbour ("" from: the model's pick),
// with its anchored prediction for the shape, or why it was dropped.
struct DispatchCandidate {
  KernelConfig config;
  std::string from;
  double predicted_s = 0;  // 0 when dropped
  std::string dropped;     // the hard constraint it breaks here
};

struct DispatchChoice {
  KernelConfig config;
  DispatchSource source = DispatchSource::Model;
  std::string from;  // the stored problem it came from, if any
  // Unless stored: the calibration the model ranked with (choose_calibration's description, and
  // why a refused one was not used).
  std::string calibration;
  // Unless stored: each candidate weighed, with its predicted time for this shape, or why it
  // was dropped.
  std::string why;
  std::vector<DispatchCandidate> candidates;
};

// The choice gemm() makes, without a GPU: the stored best of this exact shape (precision, ops,
// sizes, leading dimensions, batch). Else the candidates are the stored bests of the nearest few
// tuned shapes of the same precision and op shape and the model's pick, ranked with the
// calibration `gemmtune predict` uses by default (the store's for the device, else the shipped
// one); those that break a hard constraint here are dropped, and the one predicted fastest for
// this shape wins. Each prediction is anchored where it was measured: scaled by the kernel's
// measured/predicted ratio at its tuned shape (the model's pick: its own ratio where a neighbour
// measured it, else the nearest shape's tuned best over the prediction of the model's pick
// there), so that tuning corrects the model's bias rather than the model's own argmin always
// winning. db_path may not exist.
DispatchChoice choose_kernel(const Problem& problem, const DeviceSpec& device,
                             const std::string& db_path);

// ---------------------------------------------------------------- bundles
// A deployable kernel set: cubins per architecture and a table of problem -> kernel, so that an
// application ships without the store or NVRTC (bundle.json beside the cubins).
struct BundleKernel {
  KernelConfig config;
  Precision precision = Precision::S;
  Op op_a = Op::N, op_b = Op::N;
  std::vector<std::pair<std::string, std::string>> cubins;  // arch ("sm_90"), file in the bundle
};
struct BundleProblem {
  Problem problem;
  double weight = 1;
  std::size_t kernel = 0;  // into kernels
  double time_s = 0;
  bool predicted = false;  // time_s from the model, never measured
};
struct Bundle {
  std::string device;  // the spec the set was chosen on
  int model_version = 0;
  std::vector<std::string> archs;
  std::vector<BundleKernel> kernels;
  std::vector<BundleProblem> problems;
};
void write_bundle_table(const std::string& dir, const Bundle& bundle);
// Reads dir/bundle.json for a GPU of `arch`. Throws InputError naming what is wrong: no table, a
// table of another model version, no cubin for the architecture, a cubin file missing.
Bundle read_bundle(const std::string& dir, const std::string& arch);
// A bundle's choice for a call: the kernel of this exact shape, else that of the nearest shape
// of the same precision and op shape (log-distance of the sizes) whose kernel is valid here.
// Throws InputError when no kernel of the bundle can run it.
DispatchChoice choose_from_bundle(const Bundle& bundle, const Problem& problem,
                                  const DeviceSpec& device);

// The store gemm() reads: $GEMMTUNE_DB or the default store, unless set here. Clears the
// kernel cache.
void set_dispatch_database(const std::string& path);

// gemm() reads kernels from this bundle (export --bundle) instead of the store: no SQLite, no
// NVRTC at run time; "" goes back to the store. Clears the kernel cache; the bundle is read, and
// checked against the GPU's architecture, at the first call.
void set_dispatch_bundle(const std::string& dir);

// BLAS-like, column-major, device pointers, asynchronous on `stream`. Thread-safe. Throws
// InputError for bad arguments (the message names them).
void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc, CudaStream stream = nullptr);
void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc, CudaStream stream = nullptr);
void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
          std::complex<float> alpha, const std::complex<float>* a, std::int64_t lda,
          const std::complex<float>* b, std::int64_t ldb, std::complex<float> beta,
          std::complex<float>* c, std::int64_t ldc, CudaStream stream = nullptr);
void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
          std::complex<double> alpha, const std::complex<double>* a, std::int64_t lda,
          const std::complex<double>* b, std::int64_t ldb, std::complex<double> beta,
          std::complex<double>* c, std::int64_t ldc, CudaStream stream = nullptr);

// The configuration gemm() used for the most recent call with this shape on this thread's
// device (for tests and tools); throws InputError if that shape was never dispatched.
DispatchChoice last_dispatch(const Problem& problem);

}  // namespace gemmtune
