// gemm(): a map from (device, shape) to a loaded kernel. The first call of a shape chooses,
// compiles and loads; later calls cost a lookup and a launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune {
namespace {

struct Key {
  int device;
  Precision precision;
  Op op_a, op_b;
  std::int64_t m, n, k, lda, ldb, ldc, batch;
  BatchKind kind;
  bool scalar_loads;  // A or B not aligned for the chosen kernel's vector loads
  Key(int device, const Problem& p, BatchKind kind, bool scalar_loads = false)
      : device(device),
        precision(p.precision),
        op_a(p.op_a),
        op_b(p.op_b),
        m(p.m),
        n(p.n),
        k(p.k),
        lda(p.lda),
        ldb(p.ldb),
        ldc(p.ldc),
        batch(p.batch),
        kind(kind),
        scalar_loads(scalar_loads) {}
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = size_t(k.device) * 31 + size_t(k.precision) * 7 + size_t(k.op_a) * 3 +
               size_t(k.op_b) + size_t(k.kind) * 131 + size_t(k.scalar_loads) * 521;
    for (std::int64_t v : {k.m, k.n, k.k, k.lda, k.ldb, k.ldc, k.batch})
      h = h * 1000003u ^ size_t(v);
    return h;
  }
};
struct Entry {
  std::unique_ptr<LoadedKernel> kernel;
  DispatchChoice choice;
};

using SizesReader = std::function<std::vector<Problem>()>;

// A variable batch's sizes and leading dimensions read back from the device on the call's stream
// (which this waits for), checked against the call's maxima, as problems like the representative.
// Throws InputError naming the first bad matrix.
std::vector<Problem> read_sizes(const Problem& call, const Problem& representative,
                                const BatchArrays& arrays, CudaStream stream) {
  const std::size_t count = std::size_t(call.batch);
  enum { M, N, K, LDA, LDB, LDC };
  const char* names[6] = {"m", "n", "k", "lda", "ldb", "ldc"};
  const int* device[6] = {arrays.m, arrays.n, arrays.k, arrays.lda, arrays.ldb, arrays.ldc};
  std::vector<int> host[6];
  for (int f = 0; f < 6; ++f) {
    host[f].resize(count);
    const cudaError_t e = cudaMemcpyAsync(host[f].data(), device[f], count * sizeof(int),
                                          cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess)
      throw InputError(std::string("gemm_vbatched cannot read ") + names[f] + " (" +
                       std::to_string(count) + " device ints): " + cudaGetErrorString(e));
  }
  if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
    throw InputError(std::string("gemm_vbatched: the stream failed before its sizes were read: ") +
                     cudaGetErrorString(e));
  const std::int64_t most[3] = {call.m, call.n, call.k};
  const char* maxima[3] = {"max_m", "max_n", "max_k"};
  std::vector<Problem> out(count, representative);
  for (std::size_t i = 0; i < count; ++i) {
    const auto bad = [&](int f, const std::string& limit) {
      throw InputError("gemm_vbatched: matrix " + std::to_string(i) + " has " + names[f] + " = " +
                       std::to_string(host[f][i]) + ", " + limit);
    };
    for (int f = M; f <= K; ++f) {
      if (host[f][i] < 0) bad(f, "below 0");
      if (host[f][i] > most[f])
        bad(f, std::string("above ") + maxima[f] + " = " + std::to_string(most[f]));
    }
    const std::int64_t m = host[M][i], n = host[N][i], k = host[K][i];
    // Rows of A, B and C as stored (column-major): op N keeps them, T and C swap.
    const std::int64_t rows[3] = {call.op_a == Op::N ? m : k, call.op_b == Op::N ? k : n, m};
    for (int f = LDA; f <= LDC; ++f)
      if (host[f][i] < std::max<std::int64_t>(1, rows[f - LDA]))
        bad(f, "below its rows (" + std::to_string(std::max<std::int64_t>(1, rows[f - LDA])) + ")");
    out[i].m = m;
    out[i].n = n;
    out[i].k = k;
  }
  return out;
}

class Dispatcher {
 public:
  static Dispatcher& get() {
    static Dispatcher d;
    return d;
  }
  void set_database(const std::string& path) {
    std::lock_guard lock(mutex_);
    db_path_ = path;
    entries_.clear();
  }
  void set_vbatched_measure(int candidates) {
    std::lock_guard lock(mutex_);
    vbatched_measure_ = candidates;
    entries_.clear();
  }
  int vbatched_measure() {
    std::lock_guard lock(mutex_);
    return vbatched_measure_;
  }
  void set_bundle(const std::string& dir) {
    std::lock_guard lock(mutex_);
    bundle_dir_ = dir;
    bundles_.clear();
    entries_.clear();
  }
  void run(const Problem& p, const void* a, const void* b, void* c, CudaStream stream) {
    const Entry& e = entry(p, BatchKind::Strided);
    if (operands_aligned(e.choice.config, p.precision, a, b)) {
      e.kernel->launch(p, a, b, c, stream);
      return;
    }
    entry(p, BatchKind::Strided, true).kernel->launch(p, a, b, c, stream);
  }
  // `representative` picks and caches the kernel; `call` is what it runs on. `sizes`, where
  // given, reads a variable batch's sizes for the first choice (choose_for_sizes).
  void run_batched(const Problem& representative, BatchKind kind, const Problem& call,
                   const BatchArrays& arrays, CudaStream stream, const SizesReader& sizes = {}) {
    const Launch own{&call, &arrays, stream};
    entry(representative, kind, false, sizes, &own).kernel->launch_batched(call, arrays, stream);
  }
  DispatchChoice last(const Problem& p, BatchKind kind) {
    int device = 0;
    cudaGetDevice(&device);
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(Key(device, p, kind));
    if (it == entries_.end())
      throw InputError(p.shape_id() + " (" + to_string(kind) +
                       " batch) was never dispatched on this device");
    return it->second.choice;
  }

 private:
  // The call a variable batch's first choice may time its candidates on.
  struct Launch {
    const Problem* call;
    const BatchArrays* arrays;
    CudaStream stream;
  };

  const Entry& entry(const Problem& p, BatchKind kind, bool scalar_loads = false,
                     const SizesReader& sizes = {}, const Launch* own = nullptr) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
      throw InputError("gemmtune::gemm needs a CUDA GPU; none is usable on this machine");
    const Key key(device, p, kind, scalar_loads);
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      it = entries_.emplace(key, make_entry(device, p, kind, scalar_loads, sizes, own)).first;
    // Entries are never erased while calls may run (only the setters above clear them).
    return it->second;
  }

  Entry make_entry(int device, const Problem& p, BatchKind kind, bool scalar_loads,
                   const SizesReader& sizes, const Launch* own) {
    auto spec = specs_.find(device);
    if (spec == specs_.end()) spec = specs_.emplace(device, query_local_device()).first;
    Entry e;
    if (!bundle_dir_.empty()) {
      if (scalar_loads)
        throw InputError(
            "A or B of " + p.shape_id() +
            " is not aligned for the bundled kernel's vector loads, and a bundle cannot compile "
            "another; pass operands aligned as cudaMalloc's are, or use the store");
      if (kind != BatchKind::Strided)
        throw InputError(std::string("a dispatch bundle holds strided kernels only; a ") +
                         to_string(kind) + " batch needs the store (set_dispatch_bundle(\"\"))");
      auto bundle = bundles_.find(device);
      if (bundle == bundles_.end())
        bundle = bundles_.emplace(device, read_bundle(bundle_dir_, spec->second.arch())).first;
      e.choice = choose_from_bundle(bundle->second, p, spec->second);
      const CompileResult cubin = bundled_cubin(bundle->second, e.choice, p, spec->second.arch());
      e.kernel = std::make_unique<LoadedKernel>(cubin, e.choice.config, p.precision);
      return e;
    }
    if (kind == BatchKind::Variable && sizes) {
      const std::vector<Problem> shapes = sizes();
      e.choice = choose_for_sizes(p, shapes, spec->second, db_path_);
      // beta = 0: every candidate writes the same C from A and B, so timing them on the call's
      // own matrices leaves the call's result as the chosen kernel's launch will write it.
      const bool beta_zero = own && own->call->beta.re == 0.0 && own->call->beta.im == 0.0;
      if (vbatched_measure_ > 0 && beta_zero)
        return measured_entry(p, spec->second, shapes, std::move(e.choice), *own);
    } else {
      e.choice = choose_kernel(p, spec->second, db_path_);
      e.choice.config = batched_config(e.choice.config, kind);
    }
    if (scalar_loads) {
      e.choice.config = scalar_operand_loads(e.choice.config);
      // Estimated registers may grow with scalar loads; the compiler keeps within the launch
      // bounds by spilling, so only the other hard constraints refuse the variant.
      const auto v = check_hard(p, spec->second, e.choice.config);
      if (v && v->stage != Stage::RegistersPerThread && v->stage != Stage::RegistersPerBlock)
        throw InputError(
            "A or B of " + p.shape_id() +
            " is not aligned for the chosen kernel's vector loads, and its scalar-load "
            "variant cannot run: " +
            v->message);
    }
    const CompileCache cache(CompileCache::default_directory());
    const CompileResult compiled =
        compile_source(render_source(e.choice.config, p.precision, p.op_a, p.op_b, kind),
                       spec->second.arch(), &cache);
    e.kernel = std::make_unique<LoadedKernel>(compiled, e.choice.config, p.precision, kind);
    return e;
  }

  // candidates_for_sizes, each timed on the call's own batch (one warm-up, the median of 5
  // launches): the model's choice unless another runs at least kMeasuredMargin faster. A
  // candidate that fails there is listed with its error; one that leaves the context broken (a
  // sticky fault) ends the call.
  Entry measured_entry(const Problem& p, const DeviceSpec& d, const std::vector<Problem>& shapes,
                       DispatchChoice model_choice, const Launch& own) {
    std::vector<DispatchCandidate> list =
        candidates_for_sizes(model_choice, p, shapes, d, db_path_, vbatched_measure_);
    std::vector<CompileJob> jobs;
    for (const DispatchCandidate& c : list)
      jobs.push_back({c.config, p.precision, p.op_a, p.op_b, BatchKind::Variable});
    const CompileCache cache(CompileCache::default_directory());
    const std::vector<CompileResult> compiled = compile_many(jobs, d.arch(), &cache);
    TimingOptions timing;
    timing.warmup = 1;
    timing.repetitions = 5;
    timing.flush_l2 = false;
    std::vector<std::unique_ptr<LoadedKernel>> kernels(list.size());
    std::exception_ptr failure;
    std::size_t fastest = list.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!compiled[i].ok) {
        list[i].dropped = "did not compile";
        continue;
      }
      try {
        kernels[i] = std::make_unique<LoadedKernel>(compiled[i], list[i].config, p.precision,
                                                    BatchKind::Variable);
        list[i].measured_s =
            time_launches([&] { kernels[i]->launch_batched(*own.call, *own.arrays, own.stream); },
                          own.stream, timing, 0.0)
                .median_s;
      } catch (const std::exception& e) {
        list[i].dropped = std::string("failed on the batch: ") + e.what();
        failure = std::current_exception();
        (void)cudaGetLastError();  // a launch error; a fault stays and fails the next call
        if (cudaStreamSynchronize(own.stream) != cudaSuccess) throw;
        kernels[i].reset();  // after the stream: a launch of it may have been queued
        continue;
      }
      if (fastest == list.size() || list[i].measured_s < list[fastest].measured_s) fastest = i;
    }
    if (fastest == list.size()) {
      if (failure) std::rethrow_exception(failure);
      throw InputError("no candidate kernel for the variable batch of " + p.shape_id() +
                       " compiled (" + std::to_string(list.size()) + " tried)");
    }
    const double model_s = list.front().measured_s;
    const std::size_t kept =
        model_s > 0 && !(list[fastest].measured_s < (1 - kMeasuredMargin) * model_s) ? 0 : fastest;
    std::string times;
    for (std::size_t i = 0; i < list.size(); ++i) {
      char us[32];
      std::snprintf(us, sizeof us, "%.1f us", list[i].measured_s * 1e6);
      times += (i ? ", candidate " + std::to_string(i + 1) : std::string("the model's choice")) +
               " " + (kernels[i] ? std::string(us) : list[i].dropped);
    }
    Entry e;
    e.kernel = std::move(kernels[kept]);
    e.choice = model_choice;
    e.choice.config = list[kept].config;
    e.choice.candidates = list;
    char head[128];
    std::snprintf(head, sizeof head, "measured on the batch, %s of %zu candidates (%.1f us): ",
                  kept == 0 ? "the model's choice kept" : "the fastest", list.size(),
                  list[kept].measured_s * 1e6);
    e.choice.why = head + times + "; the model chose: " + model_choice.why;
    if (kept != 0) {
      e.choice.source = DispatchSource::Measured;
      e.choice.from = list[kept].from;
    }
    return e;
  }

  // The cubin of the chosen kernel for this precision and op shape, as a compile would give it.
  CompileResult bundled_cubin(const Bundle& b, const DispatchChoice& choice, const Problem& p,
                              const std::string& arch) const {
    for (const BundleKernel& k : b.kernels) {
      if (!(k.config == choice.config) || k.precision != p.precision || k.op_a != p.op_a ||
          k.op_b != p.op_b)
        continue;
      for (const auto& [a, file] : k.cubins) {
        if (a != arch) continue;
        const std::string path = bundle_dir_ + "/" + file;
        std::ifstream in(path, std::ios::binary);
        CompileResult r;
        r.cubin.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        r.ok = !r.cubin.empty() && read_cubin_resources(r.cubin, r);
        if (!r.ok) throw InputError("the bundle's cubin " + path + " is missing or unreadable");
        return r;
      }
    }
    throw InputError("the bundle has no " + arch + " cubin of " + choice.config.id());
  }

  std::mutex mutex_;
  std::string db_path_ = Database::default_path();
  std::string bundle_dir_;
  int vbatched_measure_ = kDefaultVbatchedMeasure;
  std::map<int, Bundle> bundles_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::map<int, DeviceSpec> specs_;
};

// The call as a problem, unchecked: gemm() validates it once, the batched calls name what is
// wrong in batched_representative.
Problem call_problem(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int64_t batch, Scalar alpha, Scalar beta) {
  Problem p;
  p.precision = precision;
  p.op_a = op_a;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

void dispatch(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
              Scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
              Scalar beta, void* c, std::int64_t ldc, CudaStream stream) {
  Problem p = call_problem(precision, op_a, op_b, m, n, k, 1, alpha, beta);
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.validate();
  Dispatcher::get().run(p, a, b, c, stream);
}

Scalar real_scalar(double v) {
  return {v, 0};
}
template <typename R>
Scalar complex_scalar(std::complex<R> v) {
  return {double(v.real()), double(v.imag())};
}

// Null arrays, before anything else, naming the argument (sizes and batch: batched_representative).
void check_arrays(std::initializer_list<std::pair<const char*, const void*>> arrays) {
  for (const auto& [name, array] : arrays)
    if (!array) throw InputError(std::string(name) + " is null: it must be a device array");
}

template <typename T>
void dispatch_batched(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                      std::int64_t k, Scalar alpha, const T* const* a, std::int64_t lda,
                      const T* const* b, std::int64_t ldb, Scalar beta, T* const* c,
                      std::int64_t ldc, std::int64_t batch, CudaStream stream) {
  check_arrays({{"a_array", a}, {"b_array", b}, {"c_array", c}});
  Problem call = call_problem(precision, op_a, op_b, m, n, k, batch, alpha, beta);
  call.lda = lda;
  call.ldb = ldb;
  call.ldc = ldc;
  const Problem representative = batched_representative(call, BatchKind::PointerArray);
  if (m == 0 || n == 0) return;
  BatchArrays arrays;
  arrays.a = a;
  arrays.b = b;
  arrays.c = c;
  Dispatcher::get().run_batched(representative, BatchKind::PointerArray, call, arrays, stream);
}

template <typename T>
void dispatch_vbatched(Precision precision, Op op_a, Op op_b, const int* m, const int* n,
                       const int* k, Scalar alpha, const T* const* a, const int* lda,
                       const T* const* b, const int* ldb, Scalar beta, T* const* c, const int* ldc,
                       std::int64_t batch, std::int64_t max_m, std::int64_t max_n,
                       std::int64_t max_k, CudaStream stream) {
  check_arrays({{"m", m},
                {"n", n},
                {"k", k},
                {"a_array", a},
                {"lda", lda},
                {"b_array", b},
                {"ldb", ldb},
                {"c_array", c},
                {"ldc", ldc}});
  const Problem call = call_problem(precision, op_a, op_b, max_m, max_n, max_k, batch, alpha, beta);
  const Problem representative = batched_representative(call, BatchKind::Variable);
  if (max_m == 0 || max_n == 0) return;
  const BatchArrays arrays{a, b, c, m, n, k, lda, ldb, ldc};
  const SizesReader sizes = [&] { return read_sizes(call, representative, arrays, stream); };
  Dispatcher::get().run_batched(representative, BatchKind::Variable, call, arrays, stream, sizes);
}

}  // namespace

Problem batched_representative(const Problem& call, BatchKind kind) {
  const bool variable = kind == BatchKind::Variable;
  const char* suffix = variable ? " (the batch's largest)" : "";
  for (const auto& [name, value] :
       {std::pair{variable ? "max_m" : "m", call.m}, std::pair{variable ? "max_n" : "n", call.n},
        std::pair{variable ? "max_k" : "k", call.k}})
    if (value < 0)
      throw InputError(std::string(name) + " = " + std::to_string(value) + suffix +
                       " is invalid: it must be >= 0");
  if (call.batch < 1 || call.batch > 65535)
    throw InputError("batch = " + std::to_string(call.batch) +
                     " is invalid: it must be 1 to 65535 (the grid's z extent)");
  // Empty sizes choose as size 1: the kernel is still launched for K = 0 (C = beta * C).
  Problem p = call;
  p.m = std::max<std::int64_t>(p.m, 1);
  p.n = std::max<std::int64_t>(p.n, 1);
  p.k = std::max<std::int64_t>(p.k, 1);
  if (!variable) {
    p.validate();  // the call's leading dimensions, ops, scalars
    return p;
  }
  p.lda = p.ldb = p.ldc = 0;  // packed for the maxima
  return p.normalized();
}

KernelConfig batched_config(KernelConfig chosen, BatchKind kind) {
  return kind == BatchKind::Variable ? variable_batch_config(chosen) : chosen;
}

KernelConfig scalar_operand_loads(KernelConfig c) {
  c.vec_a = c.vec_b = 1;
  return c;
}

bool operands_aligned(const KernelConfig& c, Precision precision, const void* a, const void* b) {
  const auto bytes = std::uintptr_t(element_bytes(precision));
  return reinterpret_cast<std::uintptr_t>(a) % (bytes * std::uintptr_t(c.vec_a)) == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % (bytes * std::uintptr_t(c.vec_b)) == 0;
}

void set_dispatch_database(const std::string& path) {
  Dispatcher::get().set_database(path);
}

void set_dispatch_bundle(const std::string& dir) {
  Dispatcher::get().set_bundle(dir);
}

void set_vbatched_measure(int candidates) {
  if (candidates < 0 || candidates > kMaxVbatchedMeasure)
    throw InputError("set_vbatched_measure(" + std::to_string(candidates) +
                     "): 0 (choose by the model alone) to " + std::to_string(kMaxVbatchedMeasure) +
                     " candidates");
  Dispatcher::get().set_vbatched_measure(candidates);
}

int vbatched_measure() {
  return Dispatcher::get().vbatched_measure();
}

DispatchChoice last_dispatch(const Problem& p, BatchKind kind) {
  return Dispatcher::get().last(p, kind);
}

void gemm(Precision precision, Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta,
          float* c, std::int64_t ldc, CudaStream stream) {
  if (!is_reduced(precision))
    throw InputError(std::string("precision ") + char(std::tolower(to_char(precision))) +
                     ": this gemm takes h, b or t (FP16, BF16 or TF32 inputs, FP32 C); s, d, c "
                     "and z have typed calls");
  dispatch(precision, oa, ob, m, n, k, {alpha, 0}, a, lda, b, ldb, {beta, 0}, c, ldc, stream);
}

void gemm(Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc, CudaStream stream) {
  dispatch(Precision::S, oa, ob, m, n, k, {alpha, 0}, a, lda, b, ldb, {beta, 0}, c, ldc, stream);
}
void gemm(Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc, CudaStream stream) {
  dispatch(Precision::D, oa, ob, m, n, k, {alpha, 0}, a, lda, b, ldb, {beta, 0}, c, ldc, stream);
}
void gemm(Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k, std::complex<float> alpha,
          const std::complex<float>* a, std::int64_t lda, const std::complex<float>* b,
          std::int64_t ldb, std::complex<float> beta, std::complex<float>* c, std::int64_t ldc,
          CudaStream stream) {
  dispatch(Precision::C, oa, ob, m, n, k, {alpha.real(), alpha.imag()}, a, lda, b, ldb,
           {beta.real(), beta.imag()}, c, ldc, stream);
}
void gemm(Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k, std::complex<double> alpha,
          const std::complex<double>* a, std::int64_t lda, const std::complex<double>* b,
          std::int64_t ldb, std::complex<double> beta, std::complex<double>* c, std::int64_t ldc,
          CudaStream stream) {
  dispatch(Precision::Z, oa, ob, m, n, k, {alpha.real(), alpha.imag()}, a, lda, b, ldb,
           {beta.real(), beta.imag()}, c, ldc, stream);
}

}  // namespace gemmtune

namespace gemmtune {

#define GEMMTUNE_BATCHED(T, PREC, TO_SCALAR)                                                       \
  void gemm_batched(Op oa, Op ob, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,         \
                    const T* const* a, std::int64_t lda, const T* const* b, std::int64_t ldb,      \
                    T beta, T* const* c, std::int64_t ldc, std::int64_t batch,                     \
                    CudaStream stream) {                                                           \
    dispatch_batched(PREC, oa, ob, m, n, k, TO_SCALAR(alpha), a, lda, b, ldb, TO_SCALAR(beta), c,  \
                     ldc, batch, stream);                                                          \
  }                                                                                                \
  void gemm_vbatched(Op oa, Op ob, const int* m, const int* n, const int* k, T alpha,              \
                     const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta, \
                     T* const* c, const int* ldc, std::int64_t batch, std::int64_t max_m,          \
                     std::int64_t max_n, std::int64_t max_k, CudaStream stream) {                  \
    dispatch_vbatched(PREC, oa, ob, m, n, k, TO_SCALAR(alpha), a, lda, b, ldb, TO_SCALAR(beta), c, \
                      ldc, batch, max_m, max_n, max_k, stream);                                    \
  }
GEMMTUNE_BATCHED(float, Precision::S, real_scalar)
GEMMTUNE_BATCHED(double, Precision::D, real_scalar)
GEMMTUNE_BATCHED(std::complex<float>, Precision::C, complex_scalar)
GEMMTUNE_BATCHED(std::complex<double>, Precision::Z, complex_scalar)
#undef GEMMTUNE_BATCHED

}  // namespace gemmtune
