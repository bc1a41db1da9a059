// gemm(): a map from (device, shape) to a loaded kernel. The first call of a shape chooses,
// compiles and loads; later calls cost a lookup and a launch.
#include <cuda_runtime.h>

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "store/store.hpp"

namespace gemmtune {
namespace {

struct Key {
  int device;
  Precision precision;
  Op op_a, op_b;
  std::int64_t m, n, k, lda, ldb, ldc;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h =
        size_t(k.device) * 31 + size_t(k.precision) * 7 + size_t(k.op_a) * 3 + size_t(k.op_b);
    for (std::int64_t v : {k.m, k.n, k.k, k.lda, k.ldb, k.ldc}) h = h * 1000003u ^ size_t(v);
    return h;
  }
};
struct Entry {
  std::unique_ptr<LoadedKernel> kernel;
  DispatchChoice choice;
};

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
  void set_bundle(const std::string& dir) {
    std::lock_guard lock(mutex_);
    bundle_dir_ = dir;
    bundles_.clear();
    entries_.clear();
  }
  void run(const Problem& p, const void* a, const void* b, void* c, CudaStream stream) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
      throw InputError("gemmtune::gemm needs a CUDA GPU; none is usable on this machine");
    const Key key{device, p.precision, p.op_a, p.op_b, p.m, p.n, p.k, p.lda, p.ldb, p.ldc};
    const Entry* entry = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(key);
      if (it == entries_.end()) it = entries_.emplace(key, make_entry(device, p)).first;
      entry = &it->second;
    }
    // Entries are never erased while calls may run (only set_dispatch_database clears them).
    entry->kernel->launch(p, a, b, c, stream);
  }
  DispatchChoice last(const Problem& p) {
    int device = 0;
    cudaGetDevice(&device);
    std::lock_guard lock(mutex_);
    const auto it =
        entries_.find(Key{device, p.precision, p.op_a, p.op_b, p.m, p.n, p.k, p.lda, p.ldb, p.ldc});
    if (it == entries_.end())
      throw InputError(p.shape_id() + " was never dispatched on this device");
    return it->second.choice;
  }

 private:
  Entry make_entry(int device, const Problem& p) {
    auto spec = specs_.find(device);
    if (spec == specs_.end()) spec = specs_.emplace(device, query_local_device()).first;
    Entry e;
    if (!bundle_dir_.empty()) {
      auto bundle = bundles_.find(device);
      if (bundle == bundles_.end())
        bundle = bundles_.emplace(device, read_bundle(bundle_dir_, spec->second.arch())).first;
      e.choice = choose_from_bundle(bundle->second, p, spec->second);
      const CompileResult cubin = bundled_cubin(bundle->second, e.choice, p, spec->second.arch());
      e.kernel = std::make_unique<LoadedKernel>(cubin, e.choice.config, p.precision);
      return e;
    }
    e.choice = choose_kernel(p, spec->second, db_path_);
    const CompileCache cache(CompileCache::default_directory());
    const CompileResult compiled = compile_source(
        render_source(e.choice.config, p.precision, p.op_a, p.op_b), spec->second.arch(), &cache);
    e.kernel = std::make_unique<LoadedKernel>(compiled, e.choice.config, p.precision);
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
  std::map<int, Bundle> bundles_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::map<int, DeviceSpec> specs_;
};

template <typename T>
void dispatch(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
              Scalar alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, Scalar beta,
              T* c, std::int64_t ldc, CudaStream stream) {
  Problem p;  // assigned field by field: the hot path validates once, below
  p.precision = precision;
  p.op_a = op_a;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.alpha = alpha;
  p.beta = beta;
  p.validate();
  Dispatcher::get().run(p, a, b, c, stream);
}

}  // namespace

void set_dispatch_database(const std::string& path) {
  Dispatcher::get().set_database(path);
}

void set_dispatch_bundle(const std::string& dir) {
  Dispatcher::get().set_bundle(dir);
}

DispatchChoice last_dispatch(const Problem& p) {
  return Dispatcher::get().last(p);
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
