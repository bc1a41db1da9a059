// gemmtune profiler: turns a configuration into a cubin (NVRTC, no GPU needed) and, on a GPU,
// into verified timings.
#pragma once

#include <complex>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/core.hpp"
#include "model/model.hpp"
#include "search/search.hpp"

namespace gemmtune {

// ---------------------------------------------------------------- compilation

struct CompileResult {
  bool ok = false;
  std::string log;          // NVRTC's log: ptxas info on success, the errors on failure
  std::vector<char> cubin;  // empty on failure
  int registers = 0;        // per thread, as ptxas reported
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int static_smem_bytes = 0;
  double seconds = 0;  // compile wall time (0 on a cache hit)
  bool cache_hit = false;
  // What a ranking needs of it (rank_compiled): registers and spills, or a failure.
  CompiledInfo info() const {
    return ok ? CompiledInfo{registers, spill_store_bytes} : CompiledInfo{};
  }
};

// Parses ptxas -v output ("Used 40 registers", "8 bytes spill stores", ...) into the result.
void parse_ptxas_info(const std::string& log, CompileResult& result);
// Registers and stack frame from the cubin itself; false when it is not a readable CUDA ELF.
bool read_cubin_resources(const std::vector<char>& cubin, CompileResult& result);

// A directory of cubins keyed by a hash of (source, options, arch, NVRTC version). Writes go
// through a temporary file and a rename, so a killed run never leaves a torn entry.
class CompileCache {
 public:
  explicit CompileCache(std::string directory);  // "" disables the cache
  static std::string default_directory();        // $GEMMTUNE_CACHE or ~/.cache/gemmtune
  bool lookup(const std::string& key, CompileResult& out) const;
  void store(const std::string& key, const CompileResult& result) const;
  const std::string& directory() const { return dir_; }

 private:
  std::string dir_;
};

std::string compile_key(const std::string& source, const std::string& arch);

// Compiles one source for an architecture such as "sm_90". Never throws for a source that
// fails to compile: ok is false and the log says why. Throws InputError for a bad arch.
CompileResult compile_source(const std::string& source, const std::string& arch,
                             const CompileCache* cache = nullptr);

struct CompileJob {
  KernelConfig config;
  Precision precision = Precision::S;
  Op op_a = Op::N, op_b = Op::N;
  BatchKind batch = BatchKind::Strided;  // the source's batch mode (render_source)
};
// Compiles every job on `threads` worker threads (0 = all cores); results in job order.
std::vector<CompileResult> compile_many(const std::vector<CompileJob>& jobs,
                                        const std::string& arch,
                                        const CompileCache* cache = nullptr, int threads = 0);

std::string nvrtc_version();

// ---------------------------------------------------------------- the GPU

int cuda_device_count();          // 0 when there is no GPU or no driver
DeviceSpec query_local_device();  // throws InputError when there is no GPU

using CounterValues = std::vector<std::pair<std::string, double>>;
struct EnergyMeasurement;

// How an attempt ended, as the seeds classify failures.
enum class Status { Ok, CompileError, LaunchError, ExecuteError, Wrong, Timeout };
const char* to_string(Status s);

struct TimingOptions {
  int warmup = 3;
  int repetitions = 20;
  bool flush_l2 = true;  // overwrite a buffer twice the L2 size before every timed launch
  // After an ok measurement (off by default, so timings are never taken under a profiler):
  bool counters = false;  // the default counter set (CUPTI), stored with the attempt
  bool energy = false;    // joules per run (NVML)
};

struct Measurement {
  Status status = Status::Ok;
  std::string error;  // the message behind a failure
  double median_s = 0, min_s = 0, max_s = 0;
  int repetitions = 0;
  double gflops = 0;     // from the median
  double rel_error = 0;  // ||C - C_cublas||_F / ||C_cublas||_F
};

// What one measurement of a compiled configuration gave, as a store keeps it (no energy or
// counters: the caller adds those it took).
Evaluation evaluation_of(const KernelConfig& config, const CompileResult& compiled,
                         const Measurement& m);

// Relative-error threshold per precision for agreement with cuBLAS.
double verify_tolerance(Precision p, std::int64_t k = 1);

// Where C (got, as the kernel stored it) differs from the FP64 reference (want, as the runner
// keeps it: real and imaginary parts interleaved): how many elements lie off by more than
// `tolerance` times the reference's RMS element, in which of the kernel's tile_m x tile_n C
// tiles (the first few named, with their rows and columns, edge tiles marked, and the element
// furthest off in each: its row, column, value and reference in full precision).
std::string locate_mismatch(const double* got, const double* want, const Problem& p, int tile_m,
                            int tile_n, double tolerance);
std::string locate_mismatch(const float* got, const double* want, const Problem& p, int tile_m,
                            int tile_n, double tolerance);

// One GPU, its stream, cuBLAS handle and the buffers of the last problem. Inputs are random
// (never zeros); the output is poisoned before each verified launch; timings use events after
// warm-up, with the L2 flushed before each repetition. A StickyError-class failure (illegal
// address and the like) leaves the context unusable: status ExecuteError, and the session
// reports poisoned() so a caller can start a fresh process.
class GpuSession {
 public:
  explicit GpuSession(int device = 0);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const DeviceSpec& device() const;
  // Allocates and fills A, B, C for the problem (kept until another problem comes); throws
  // InputError when the problem does not fit in free device memory.
  void prepare(const Problem& problem);
  Measurement measure(const Problem& problem, const KernelConfig& config,
                      const CompileResult& compiled, const TimingOptions& timing = {});
  Measurement measure_cublas(const Problem& problem, const TimingOptions& timing = {});
  // Hardware counters of one launch of a configuration (CUPTI range profiler, user replay:
  // the L2 is flushed and C re-poisoned or restored before every pass). Throws CounterError.
  CounterValues profile(const Problem& problem, const KernelConfig& config,
                        const CompileResult& compiled, const std::vector<std::string>& metrics);
  // Joules per launch (NVML), over a loop of launches lasting at least min_seconds.
  // seconds_per_run sizes the loop. Throws EnergyError.
  EnergyMeasurement energy(const Problem& problem, const KernelConfig& config,
                           const CompileResult& compiled, double seconds_per_run,
                           double min_seconds = 0.5);
  // The driver's occupancy for a compiled configuration
  // (cuOccupancyMaxActiveBlocksPerMultiprocessor).
  int driver_occupancy(const KernelConfig& config, Precision precision,
                       const CompileResult& compiled);
  bool poisoned() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The device arrays of a pointer-array or variable-size batch: one entry per matrix.
struct BatchArrays {
  const void* a = nullptr;  // const T* [batch]
  const void* b = nullptr;  // const T* [batch]
  const void* c = nullptr;  // T* [batch]
  // Variable-size only: int [batch] each.
  const int* m = nullptr;
  const int* n = nullptr;
  const int* k = nullptr;
  const int* lda = nullptr;
  const int* ldb = nullptr;
  const int* ldc = nullptr;
};

// A compiled configuration loaded into the current CUDA context, ready to launch on any
// problem of its precision and op shape, for the batch kind it was rendered for.
class LoadedKernel {
 public:
  LoadedKernel(const CompileResult& compiled, const KernelConfig& config, Precision precision,
               BatchKind batch_kind = BatchKind::Strided);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  // Asynchronous on `stream` (a cudaStream_t; nullptr for the default stream). Throws on a
  // launch error. A strided kernel only.
  void launch(const Problem& problem, const void* a, const void* b, void* c, void* stream) const;
  // A pointer-array kernel: the problem's sizes, leading dimensions and batch for every matrix
  // (K may be 0: C = beta * C). A variable-size kernel: the problem's M, N, K are the batch's
  // maxima, which size the grid; its leading dimensions are unused. Nothing runs when M or N
  // is 0. Throws on a launch error, or when the kernel was rendered for another kind.
  void launch_batched(const Problem& problem, const BatchArrays& arrays, void* stream) const;
  const KernelConfig& config() const { return config_; }
  BatchKind batch_kind() const { return batch_kind_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  KernelConfig config_;
  Precision precision_;
  BatchKind batch_kind_;
};

// Times `launch` (which enqueues work on `stream`, a cudaStream_t) as GpuSession::measure does:
// warm-up, then per repetition an L2 flush (if asked) and an event pair; the median, extremes,
// and GFLOP/s of `flops`. Throws on a CUDA error.
Measurement time_launches(const std::function<void()>& launch, void* stream,
                          const TimingOptions& timing, double flops);

// ---------------------------------------------------------------- batched data

// One matrix of a pointer-array or variable-size batch; leading dimensions of 0 are packed (at
// least 1).
struct MatrixShape {
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool operator==(const MatrixShape&) const = default;
};
// The matrices' sizes as problems like `like` (its precision, ops and scalars), for the model:
// rank_for_sizes ranks a variable batch's kernels on them.
std::vector<Problem> matrix_problems(const Problem& like, const std::vector<MatrixShape>& shapes);
// `count` matrices with m, n, k each uniform in [1, the maximum], std::mt19937(seed) drawing m, n,
// k per matrix in turn: vs_cublas's variable batches, which bench/vbatched_score draws again.
std::vector<MatrixShape> uniform_shapes(std::int64_t count, std::int64_t max_m, std::int64_t max_n,
                                        std::int64_t max_k, unsigned seed);

// C = alpha op(A) op(B) + beta C in FP64 on the host, one column-major matrix of `shape`
// (leading dimensions filled in), complex arithmetic whatever the precision; C is read only
// where beta is not 0, as BLAS asks. BatchedData's reference, matrix by matrix.
void reference_gemm(Op op_a, Op op_b, const MatrixShape& shape, Scalar alpha, Scalar beta,
                    const std::complex<double>* a, const std::complex<double>* b,
                    std::complex<double>* c);

// A batch of matrices of their own shapes in the current CUDA context: random inputs (uniform in
// [-1, 1], a fixed seed), the device arrays batched kernels read, and an FP64 host reference of
// every matrix (empty ones included: K = 0 gives beta * C). A uniform batch is laid out as a
// strided one (matrix i at i * stride of the first), so that strided kernels and cuBLAS's strided
// call run on the same data; otherwise each matrix starts 256-byte aligned.
class BatchedData {
 public:
  BatchedData(Precision precision, Op op_a, Op op_b, std::vector<MatrixShape> shapes, Scalar alpha,
              Scalar beta, unsigned seed = 1);
  ~BatchedData();
  BatchedData(const BatchedData&) = delete;
  BatchedData& operator=(const BatchedData&) = delete;

  const std::vector<MatrixShape>& shapes() const;  // leading dimensions filled in
  bool uniform() const;                            // every shape the same
  const BatchArrays& arrays() const;
  // What a kernel of this kind is launched with (LoadedKernel::launch / launch_batched): strided
  // and pointer-array (uniform batches only; InputError otherwise), the shape and the batch;
  // variable, the maxima of M, N and K and the batch.
  Problem call(BatchKind kind) const;
  // Device addresses of matrix i (a strided batch's bases: i = 0).
  const void* a(std::size_t i = 0) const;
  const void* b(std::size_t i = 0) const;
  void* c(std::size_t i = 0) const;
  double flops() const;  // of the whole batch
  // C before a verified run (asynchronous on `stream`): NaN everywhere when beta is 0 (C must
  // not be read, and an unwritten entry shows), else the input C.
  void reset_output(void* stream) const;
  // After one run on a reset C: each matrix's ||C - C_ref|| / ||C_ref|| over its M x N (0 for an
  // empty one; NaN where an entry was left unwritten). Synchronizes the device.
  std::vector<double> errors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- counters (CUPTI)

// A failure of the CUPTI profiler (not permitted, another profiler attached, unsupported
// device): the tuner goes on without counters. code is the CUptiResult.
struct CounterError : std::runtime_error {
  CounterError(const std::string& what, int code) : std::runtime_error(what), code(code) {}
  int code;
};

// The default set for GEMM analysis: duration and cycles, SM and FMA-pipe throughput, achieved
// occupancy, DRAM and L2 bytes and hit rate, shared-memory wavefronts and bank conflicts, the
// executed FFMA (S, C) or DFMA (D, Z) count, local-memory traffic, issue utilization and the
// main warp-stall reasons.
const std::vector<std::string>& default_counter_metrics(Precision p);

// Host side, no GPU: the configuration image of a metric list for a chip ("GH100", "GA100",
// ...) and the passes it needs. Throws InputError for an unknown chip or metric, naming the
// closest valid names.
struct CounterPlan {
  std::string chip;
  std::vector<std::string> metrics;
  std::vector<std::uint8_t> config_image;
  int passes = 0;
};
CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics,
                          const std::vector<std::uint8_t>& counter_availability = {});
std::vector<std::string> supported_chips();
std::vector<std::string> metric_names(const std::string& chip);  // base metrics

// Target side, in the current CUDA context of `device`: the one kernel `launch` starts and
// waits for is the range; with user replay it runs once per pass, each pass after
// `before_pass` (outside the range: restore inputs, re-poison the output, flush the L2, so
// every pass sees the same work). Throws CounterError.
CounterValues collect_counters(int device, const std::vector<std::string>& metrics,
                               const std::function<void()>& before_pass,
                               const std::function<void()>& launch);

// One quantity both the hardware and the model give: "why is this configuration fast or slow?"
struct CounterComparison {
  std::string quantity;  // "time (us)", "achieved occupancy", "DRAM bytes", ...
  std::string metrics;   // the counters it comes from
  double counter = 0;    // NaN when the counters lack it
  double model = 0;
  double ratio() const { return model != 0 ? counter / model : 0.0; }
};
std::vector<CounterComparison> compare_with_model(const CounterValues& counters,
                                                  const Prediction& prediction);
// The warp-stall reasons among the counters, largest first (percent of active warps).
std::vector<std::pair<std::string, double>> top_stall_reasons(const CounterValues& counters,
                                                              size_t count = 3);

// ---------------------------------------------------------------- energy (NVML)

// Joules the GPU consumed while `run` ran `runs` times (NVML's total-energy counter, read
// around the loop; the loop is made at least min_seconds long for the counter's resolution).
// Throws EnergyError when NVML is missing or the GPU does not report energy.
struct EnergyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct EnergyMeasurement {
  double joules_per_run = 0;
  int runs = 0;
  double seconds = 0;
};
EnergyMeasurement measure_energy(int device, const std::function<void()>& run_once,
                                 double seconds_per_run, double min_seconds = 0.5);

// ---------------------------------------------------------------- isolation

// Problems and measurements as one JSON line each: the worker protocol.
std::string problem_to_json(const Problem& p);
Problem problem_from_json(const std::string& text);

// Serves measurement requests, one JSON line in, one out, on a GpuSession of its own
// (`gemmtune worker`). Exits with status 3 after a fault that poisons its CUDA context.
int run_worker(std::FILE* in, std::FILE* out);

// The Evaluator of a real GPU: compiles in this process (all cores, on-disk cache), measures in
// a worker process (`<executable> worker`) that is restarted after a fault or a timeout, so a
// tuning run survives kernels that crash or hang.
class GpuEvaluator : public Evaluator {
 public:
  GpuEvaluator(std::string executable, TimingOptions timing = {}, double timeout_s = 60);
  // With a given device description: the worker is any program that speaks the protocol
  // (tests drive the isolation logic with a scripted one, no GPU needed).
  GpuEvaluator(std::string executable, DeviceSpec device, TimingOptions timing, double timeout_s);
  ~GpuEvaluator() override;
  GpuEvaluator(const GpuEvaluator&) = delete;
  GpuEvaluator& operator=(const GpuEvaluator&) = delete;
  const DeviceSpec& device() const override { return device_; }
  std::vector<CompiledInfo> compile(const Problem& problem,
                                    const std::vector<KernelConfig>& configs) override;
  std::vector<Evaluation> measure(const Problem& problem,
                                  const std::vector<KernelConfig>& configs) override;
  int compile_width() const override;
  // cuBLAS timed in the worker (a failure is reported on stderr and answers none).
  std::optional<Evaluation> reference(const Problem& problem) override;
  int restarts() const { return restarts_; }

 private:
  Evaluation measure_one(const Problem& problem, const KernelConfig& config);
  // Sends one request line to the worker (started if needed) and fills e from its reply; a
  // dead, silent or garbled worker is a failed e, and the worker is restarted for the next.
  Evaluation exchange(const std::string& request, Evaluation e);
  void start_worker();
  void stop_worker();
  std::string executable_;
  TimingOptions timing_;
  double timeout_s_;
  DeviceSpec device_;
  CompileCache cache_;
  int pid_ = -1, to_worker_ = -1, from_worker_ = -1;
  std::string pending_;  // bytes read past the last reply line
  int restarts_ = 0;
  std::set<std::string> warned_;  // extras (counters, energy) already reported missing
};

}  // namespace gemmtune
