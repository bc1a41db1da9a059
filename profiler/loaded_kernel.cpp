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
                           Precision precision)
    : impl_(std::make_unique<Impl>()), config_(config), precision_(precision) {
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

void LoadedKernel::launch(const Problem& p, const void* a, const void* b, void* c,
                          void* stream) const {
  const KernelConfig& k = config_;
  const std::int64_t tiles = ((p.m + k.blk_m - 1) / k.blk_m) * ((p.n + k.blk_n - 1) / k.blk_n);
  int M = int(p.m), N = int(p.n), K = int(p.k);
  long long lda = p.lda, ldb = p.ldb, ldc = p.ldc, sa = p.stride_a(), sb = p.stride_b(),
            sc = p.stride_c();
  gpu::TypedScalar alpha = gpu::typed(p.alpha, precision_), beta = gpu::typed(p.beta, precision_);
  const void* A = a;
  const void* B = b;
  void* C = c;
  const gpu::DriverApi& api = gpu::DriverApi::get();
  if (impl_->scale) {
    // Split-K adds partial sums into C: first C = beta * C, on the same stream.
    constexpr unsigned kScaleThreads = 256;
    const std::int64_t blocks =
        std::min<std::int64_t>(1024, (p.m * p.n + kScaleThreads - 1) / kScaleThreads);
    void* scale_args[] = {&M, &N, beta.bytes, &C, &ldc, &sc};
    gpu::check(
        api.launch_kernel(impl_->scale, unsigned(blocks), 1, unsigned(p.batch), kScaleThreads, 1, 1,
                          0, static_cast<CUstream>(stream), scale_args, nullptr),
        "cuLaunchKernel (scale C)");
  }
  void* args[] = {&M, &N, &K, alpha.bytes, &A, &lda, &sa, &B, &ldb, &sb, beta.bytes, &C, &ldc, &sc};
  gpu::check(api.launch_kernel(impl_->module->function(), unsigned(tiles), 1,
                               unsigned(p.batch * k.splits()), unsigned(k.threads()), 1, 1,
                               unsigned(impl_->smem), static_cast<CUstream>(stream), args, nullptr),
             "cuLaunchKernel");
}

}  // namespace gemmtune
