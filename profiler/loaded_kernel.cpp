// LoadedKernel: one module, one function, the launch geometry of the template.
#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"
#include "model/model.hpp"
#include "profiler/cuda_handles.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

struct LoadedKernel::Impl {
  std::unique_ptr<gpu::Module> module;
  CUfunction scale = nullptr;  // gemmtune_scale_c, for split-K kernels
  int smem = 0;
};

LoadedKernel::LoadedKernel(const CompileResult& compiled, const KernelConfig& config,
                           Precision precision, BatchKind batch_kind)
    : impl_(std::make_unique<Impl>()),
      config_(config),
      precision_(precision),
      batch_kind_(batch_kind) {
  if (!compiled.ok)
    throw InputError("configuration " + config.id() + " did not compile: " + compiled.log);
  impl_->module = std::make_unique<gpu::Module>(compiled.cubin, kKernelEntry);
  impl_->smem = int(shared_bytes(config, precision));
  if (config.splits() > 1) impl_->scale = impl_->module->function(kScaleEntry);
  gpu::check(
      gpu::DriverApi::get().func_set_attribute(
          impl_->module->function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, impl_->smem),
      "cuFuncSetAttribute");
}

LoadedKernel::~LoadedKernel() = default;

namespace {

// Launches of one kernel's entry points, whatever the batch kind: the grid of the problem's
// tiles (its maxima for a variable-size batch), batch * splits deep.
struct Launcher {
  const gpu::DriverApi& api;
  const KernelConfig& config;
  const Problem& p;
  CUstream stream;

  // Split-K adds partial sums into C: first C = beta * C, on the same stream.
  void scale(CUfunction f, void** args) const {
    constexpr unsigned kScaleThreads = 256;
    const std::int64_t blocks =
        std::min<std::int64_t>(1024, (p.m * p.n + kScaleThreads - 1) / kScaleThreads);
    gpu::check(api.launch_kernel(f, unsigned(blocks), 1, unsigned(p.batch), kScaleThreads, 1, 1, 0,
                                 stream, args, nullptr),
               "cuLaunchKernel (scale C)");
  }
  void main(CUfunction f, int smem, void** args) const {
    const std::int64_t tiles =
        ((p.m + config.blk_m - 1) / config.blk_m) * ((p.n + config.blk_n - 1) / config.blk_n);
    gpu::check(
        api.launch_kernel(f, unsigned(tiles), 1, unsigned(p.batch * config.splits()),
                          unsigned(config.threads()), 1, 1, unsigned(smem), stream, args, nullptr),
        "cuLaunchKernel");
  }
};

}  // namespace

void LoadedKernel::launch(const Problem& p, const void* a, const void* b, void* c,
                          void* stream) const {
  if (batch_kind_ != BatchKind::Strided)
    throw InputError(std::string("a kernel rendered for a ") + to_string(batch_kind_) +
                     " batch cannot run a strided one");
  const Launcher launcher{gpu::DriverApi::get(), config_, p, static_cast<CUstream>(stream)};
  int M = int(p.m), N = int(p.n), K = int(p.k);
  long long lda = p.lda, ldb = p.ldb, ldc = p.ldc, sa = p.stride_a(), sb = p.stride_b(),
            sc = p.stride_c();
  gpu::TypedScalar alpha = gpu::typed(p.alpha, precision_), beta = gpu::typed(p.beta, precision_);
  const void* A = a;
  const void* B = b;
  void* C = c;
  if (impl_->scale) {
    void* scale_args[] = {&M, &N, beta.bytes, &C, &ldc, &sc};
    launcher.scale(impl_->scale, scale_args);
  }
  void* args[] = {&M, &N, &K, alpha.bytes, &A, &lda, &sa, &B, &ldb, &sb, beta.bytes, &C, &ldc, &sc};
  launcher.main(impl_->module->function(), impl_->smem, args);
}

void LoadedKernel::launch_batched(const Problem& p, const BatchArrays& arrays, void* stream) const {
  if (batch_kind_ == BatchKind::Strided)
    throw InputError(
        "a kernel rendered for a strided batch cannot run pointer arrays or variable sizes");
  if (p.m == 0 || p.n == 0) return;  // no tile: a grid of none is a launch error
  const Launcher launcher{gpu::DriverApi::get(), config_, p, static_cast<CUstream>(stream)};
  int M = int(p.m), N = int(p.n), K = int(p.k);
  long long lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  gpu::TypedScalar alpha = gpu::typed(p.alpha, precision_), beta = gpu::typed(p.beta, precision_);
  const void* A = arrays.a;
  const void* B = arrays.b;
  const void* C = arrays.c;
  if (batch_kind_ == BatchKind::PointerArray) {
    if (impl_->scale) {
      void* scale_args[] = {&M, &N, beta.bytes, &C, &ldc};
      launcher.scale(impl_->scale, scale_args);
    }
    void* args[] = {&M, &N, &K, alpha.bytes, &A, &lda, &B, &ldb, beta.bytes, &C, &ldc};
    launcher.main(impl_->module->function(), impl_->smem, args);
    return;
  }
  const int* ms = arrays.m;
  const int* ns = arrays.n;
  const int* ks = arrays.k;
  const int* ldas = arrays.lda;
  const int* ldbs = arrays.ldb;
  const int* ldcs = arrays.ldc;
  void* args[] = {&M,    &N,         &K, alpha.bytes, &A,  &ldas, &B,
                  &ldbs, beta.bytes, &C, &ldcs,       &ms, &ns,   &ks};
  launcher.main(impl_->module->function(), impl_->smem, args);
}

}  // namespace gemmtune
