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

enum class DispatchSource { Stored, NearestShape, Model, Measured };
const char* to_string(DispatchSource s);

// A kernel weighed for an untuned shape: from a tuned neighbour ("" from: the model's pick),
// with its anchored prediction for the shape, or why it was dropped.
struct DispatchCandidate {
  KernelConfig config;
  std::string from;
  double predicted_s = 0;  // 0 when dropped
  std::string dropped;     // the hard constraint it breaks here (or how it failed on the batch)
  double measured_s = 0;   // timed on a variable batch (set_vbatched_measure); 0 where not
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
// The choice gemm_vbatched() makes on its first call for a representative (the batch's maxima,
// batched_representative), without a GPU: choose_kernel's kernel for the representative, adapted
// to the kind, against the model's best for the batch's own sizes (rank_for_sizes, with the same
// calibration); the one predicted faster over the sizes as one launch (time_for_sizes) wins. A
// kernel tuned for the representative (stored, or a neighbour's) keeps its measured standing: the
// pick's time is scaled by the tuned kernel's prediction at the maxima over the model's best there
// (the tuned kernel's own, where lower: never below the pick's own prediction). A batch of
// small matrices under large maxima gets a tile made for them, not for the largest.
DispatchChoice choose_for_sizes(const Problem& representative, const std::vector<Problem>& sizes,
                                const DeviceSpec& device, const std::string& db_path);
// What gemm_vbatched's first call times on its batch where set_vbatched_measure asks for it: the
// choice (choose_for_sizes's) first, the others it weighed, then rank_for_sizes's best, up to
// `count` distinct kernels, each with its time over the sizes as the same calibration predicts
// it. Throws InputError for a count below 1.
std::vector<DispatchCandidate> candidates_for_sizes(const DispatchChoice& choice,
                                                    const Problem& representative,
                                                    const std::vector<Problem>& sizes,
                                                    const DeviceSpec& device,
                                                    const std::string& db_path, int count);

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

// gemm_vbatched's first call for a representative, where beta is 0, also times up to
// `candidates` kernels on the call's own matrices (candidates_for_sizes) and keeps the model's
// choice unless another runs at least kMeasuredMargin faster (DispatchSource::Measured;
// last_dispatch lists each candidate's time, or how it failed). That call compiles them all and
// runs the batch 6 times each, holding the dispatcher's lock throughout, as every first call does
// while it compiles and reads the sizes back. A representative whose first call has beta != 0 (C
// is an input, so the candidates cannot run on it) keeps the model's choice for its later calls
// too. The kept kernel depends on the timings, so two processes may keep different ones, whose
// results differ in rounding; 0 (the model's choice alone) chooses the same every time. Clears
// the kernel cache: call it, as the other setters, while no gemm call runs; throws InputError
// outside 0..kMaxVbatchedMeasure.
inline constexpr int kMaxVbatchedMeasure = 16;
// The default: on the H200 the kept kernel ran 1.06-1.27x faster than the model's choice in 8 of
// 12 variable batches (S, D, C, Z up to 32, 128, 512) and held in the rest, for 8 compiles and
// 48 launches of the batch on the first call (bench/RESULTS.md).
inline constexpr int kDefaultVbatchedMeasure = 8;
// Medians of 5 launches of one kernel differ by about 2% from run to run.
inline constexpr double kMeasuredMargin = 0.02;
void set_vbatched_measure(int candidates);
int vbatched_measure();  // what set_vbatched_measure last set, kDefaultVbatchedMeasure before

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

// FP16, BF16 and TF32 inputs on tensor cores (the mma family, sm_80+), FP32 C, alpha, beta and
// accumulation. precision H or B: a and b hold 16-bit values (__half, __nv_bfloat16); T: FP32
// values the kernel rounds to TF32. Otherwise as the typed calls; S, D, C and Z are refused
// (InputError: they take the typed calls above).
void gemm(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta,
          float* c, std::int64_t ldc, CudaStream stream = nullptr);

// ---------------------------------------------------------------- batched
// Pointer-array batches (as cublasGemmBatchedEx): matrix i at a_array[i], b_array[i],
// c_array[i] (device arrays of device pointers), one shape and leading dimensions for all.
// Variable-size batches (as MAGMA's vbatched): matrix i's m[i], n[i], k[i], lda[i], ldb[i],
// ldc[i] in device int arrays too, one launch whose grid covers max_m x max_n (host-known; every
// m[i] <= max_m, n[i] <= max_n, k[i] <= max_k, lda[i] >= its rows of A, and so on, is the
// caller's promise, checked on the first call for a representative only, below). Sizes may be 0: an
// empty C is left alone, and K = 0 gives C = beta * C. Pointers must be aligned as gemm()'s are
// (cudaMalloc's alignment, or at least 16 bytes). batch is 1 to 65535; arrays must not be null.
// Throws InputError naming the bad argument and its limit. A dispatch bundle (set_dispatch_bundle)
// holds strided kernels only: batched calls then throw.
//
// The kernel: the template's source for the batch kind (BATCH_MODE), with the configuration
// chosen as for a representative strided problem (batched_representative), adapted to the kind
// (batched_config). The store holds strided tunings only, so neither kind has entries of its own.
// A variable batch's first call for its representative also reads the sizes and leading
// dimensions back from the device (on the stream, which it waits for: that call cannot be
// captured in a CUDA graph), throws InputError naming the first matrix that breaks the promise,
// and chooses for the sizes (choose_for_sizes); later calls with the same maxima, batch,
// precision and ops reuse that kernel and read nothing back.
void gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                  const float* const* a_array, std::int64_t lda, const float* const* b_array,
                  std::int64_t ldb, float beta, float* const* c_array, std::int64_t ldc,
                  std::int64_t batch, CudaStream stream = nullptr);
void gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                  const double* const* a_array, std::int64_t lda, const double* const* b_array,
                  std::int64_t ldb, double beta, double* const* c_array, std::int64_t ldc,
                  std::int64_t batch, CudaStream stream = nullptr);
void gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  std::complex<float> alpha, const std::complex<float>* const* a_array,
                  std::int64_t lda, const std::complex<float>* const* b_array, std::int64_t ldb,
                  std::complex<float> beta, std::complex<float>* const* c_array, std::int64_t ldc,
                  std::int64_t batch, CudaStream stream = nullptr);
void gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  std::complex<double> alpha, const std::complex<double>* const* a_array,
                  std::int64_t lda, const std::complex<double>* const* b_array, std::int64_t ldb,
                  std::complex<double> beta, std::complex<double>* const* c_array, std::int64_t ldc,
                  std::int64_t batch, CudaStream stream = nullptr);

void gemm_vbatched(Op op_a, Op op_b, const int* m, const int* n, const int* k, float alpha,
                   const float* const* a_array, const int* lda, const float* const* b_array,
                   const int* ldb, float beta, float* const* c_array, const int* ldc,
                   std::int64_t batch, std::int64_t max_m, std::int64_t max_n, std::int64_t max_k,
                   CudaStream stream = nullptr);
void gemm_vbatched(Op op_a, Op op_b, const int* m, const int* n, const int* k, double alpha,
                   const double* const* a_array, const int* lda, const double* const* b_array,
                   const int* ldb, double beta, double* const* c_array, const int* ldc,
                   std::int64_t batch, std::int64_t max_m, std::int64_t max_n, std::int64_t max_k,
                   CudaStream stream = nullptr);
void gemm_vbatched(Op op_a, Op op_b, const int* m, const int* n, const int* k,
                   std::complex<float> alpha, const std::complex<float>* const* a_array,
                   const int* lda, const std::complex<float>* const* b_array, const int* ldb,
                   std::complex<float> beta, std::complex<float>* const* c_array, const int* ldc,
                   std::int64_t batch, std::int64_t max_m, std::int64_t max_n, std::int64_t max_k,
                   CudaStream stream = nullptr);
void gemm_vbatched(Op op_a, Op op_b, const int* m, const int* n, const int* k,
                   std::complex<double> alpha, const std::complex<double>* const* a_array,
                   const int* lda, const std::complex<double>* const* b_array, const int* ldb,
                   std::complex<double> beta, std::complex<double>* const* c_array, const int* ldc,
                   std::int64_t batch, std::int64_t max_m, std::int64_t max_n, std::int64_t max_k,
                   CudaStream stream = nullptr);

// The dispatch rule of the batched calls, without a GPU. `call` holds the call's precision, ops,
// batch, and sizes (a variable batch: its maxima; leading dimensions unused). The representative
// is the strided problem the kernel is chosen for (a variable batch: with its sizes,
// choose_for_sizes) and cached under: pointer-array, the call's own shape
// (leading dimensions and batch included), K at least 1; variable, the maxima packed (K at least
// 1). Throws InputError as the batched calls do for negative sizes or a bad batch.
Problem batched_representative(const Problem& call, BatchKind kind);
// The chosen configuration adapted to the kind: pointer-array unchanged (split-K included: its
// beta pass reads the pointer array); variable, variable_batch_config (split-K off, VA1, VB1: the
// per-matrix leading dimensions, unknown here, may break a vector load's alignment; the C store
// checks its alignment at run time).
KernelConfig batched_config(KernelConfig chosen, BatchKind kind);

// Whether A and B start where the configuration's vector loads of them (VA, VB elements) can
// read: sub-matrix pointers (a panel of an LU, say) need not. gemm() runs such a call with
// scalar_operand_loads(chosen) instead, compiled once per shape.
bool operands_aligned(const KernelConfig& c, Precision precision, const void* a, const void* b);
// The same tiles with one element per global load of A and B (VA1, VB1).
KernelConfig scalar_operand_loads(KernelConfig c);

// The configuration gemm() used for the most recent call with this shape on this thread's
// device (for tests and tools); throws InputError if that shape was never dispatched. For a
// batched call: its representative problem (batched_representative) and kind.
DispatchChoice last_dispatch(const Problem& problem, BatchKind kind = BatchKind::Strided);

}  // namespace gemmtune
