#include "profiler/cuda_handles.hpp"

#include <dlfcn.h>

#include <cstring>

namespace gemmtune::gpu {

TypedScalar typed(Scalar s, Precision p) {
  TypedScalar t;
  if (is_double(p)) {
    const double v[2] = {s.re, s.im};
    std::memcpy(t.bytes, v, is_complex(p) ? 16 : 8);
  } else {
    const float v[2] = {float(s.re), float(s.im)};
    std::memcpy(t.bytes, v, is_complex(p) ? 8 : 4);
  }
  return t;
}

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  const std::string msg =
      std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (is_sticky(e)) throw StickyError(msg);
  throw CudaError(msg);
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* text = "unknown error";
  if (DriverApi::get().get_error_string) DriverApi::get().get_error_string(r, &text);
  const std::string msg =
      std::string(what) + ": " + text + " (CUresult " + std::to_string(int(r)) + ")";
  if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED ||
      r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_ILLEGAL_INSTRUCTION)
    throw StickyError(msg);
  throw CudaError(msg);
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string(what) + ": " + CublasApi::get().status_string(s));
}

const DriverApi& DriverApi::get() {
  static const DriverApi api = [] {
    DriverApi a;
    auto resolve = [](const char* name, auto& fn) {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult q{};
      const cudaError_t e =
          cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q);
      if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !p)
        throw CudaError(std::string("the CUDA driver does not provide ") + name);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    resolve("cuModuleLoadData", a.module_load_data);
    resolve("cuModuleUnload", a.module_unload);
    resolve("cuModuleGetFunction", a.module_get_function);
    resolve("cuFuncSetAttribute", a.func_set_attribute);
    resolve("cuFuncGetAttribute", a.func_get_attribute);
    resolve("cuLaunchKernel", a.launch_kernel);
    resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor", a.occupancy);
    resolve("cuGetErrorString", a.get_error_string);
    resolve("cuCtxGetCurrent", a.ctx_get_current);
    return a;
  }();
  return api;
}

Module::Module(const std::vector<char>& cubin, const char* entry) {
  const DriverApi& d = DriverApi::get();
  check(d.module_load_data(&mod_, cubin.data()), "cuModuleLoadData");
  const CUresult r = d.module_get_function(&fn_, mod_, entry);
  if (r != CUDA_SUCCESS) {
    d.module_unload(mod_);
    mod_ = nullptr;
    check(r, "cuModuleGetFunction");
  }
}

CUfunction Module::function(const char* entry) const {
  CUfunction fn = nullptr;
  check(DriverApi::get().module_get_function(&fn, mod_, entry), "cuModuleGetFunction");
  return fn;
}

Module::~Module() {
  if (mod_) DriverApi::get().module_unload(mod_);
}

namespace {

// A shared library opened with dlopen and closed with its owner.
class SharedLibrary {
 public:
  explicit SharedLibrary(const std::string& name)
      : h_(dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!h_) {
      const char* why = dlerror();
      throw CudaError("cannot open " + name + ": " + (why ? why : "unknown reason"));
    }
  }
  ~SharedLibrary() { dlclose(h_); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  template <typename Fn>
  void resolve(const char* symbol, Fn& fn) const {
    void* p = dlsym(h_, symbol);
    if (!p) throw CudaError(std::string("the cuBLAS library lacks ") + symbol);
    fn = reinterpret_cast<Fn>(p);
  }

 private:
  void* h_;
};

}  // namespace

const CublasApi& CublasApi::get() {
  // Never closed: a cuBLAS handle may be destroyed by a static destructor after this one would
  // run, and the process needs the library until it ends.
  static const SharedLibrary& library =
      *new SharedLibrary("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  static const CublasApi api = [] {
    CublasApi a;
    library.resolve("cublasCreate_v2", a.create);
    library.resolve("cublasDestroy_v2", a.destroy);
    library.resolve("cublasSetStream_v2", a.set_stream);
    library.resolve("cublasSetMathMode", a.set_math_mode);
    library.resolve("cublasGetStatusString", a.status_string);
    library.resolve("cublasSgemmStridedBatched", a.sgemm_strided_batched);
    library.resolve("cublasDgemmStridedBatched", a.dgemm_strided_batched);
    library.resolve("cublasCgemmStridedBatched", a.cgemm_strided_batched);
    library.resolve("cublasZgemmStridedBatched", a.zgemm_strided_batched);
    library.resolve("cublasGemmStridedBatchedEx", a.gemm_strided_batched_ex);
    return a;
  }();
  return api;
}

Cublas::Cublas() {
  check(CublasApi::get().create(&h_), "cublasCreate");
}
Cublas::~Cublas() {
  if (h_) CublasApi::get().destroy(h_);
}

}  // namespace gemmtune::gpu
