// Internal to profiler: RAII owners of CUDA runtime, driver and cuBLAS handles, and the driver
// entry points (resolved through the runtime, so nothing links libcuda.so.1 at build time and
// programs start on machines without a driver). cuBLAS is opened on first use: its start-up
// costs a process about 0.09 s of CPU, which commands that never time it should not pay.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace gemmtune::gpu {

// A scalar in the kernel's (and cuBLAS's) own type, 16-byte aligned for a launch argument.
struct alignas(16) TypedScalar {
  unsigned char bytes[16] = {};
};
TypedScalar typed(Scalar s, Precision p);

// A CUDA error after which the context is unusable (illegal address, launch failure, ...).
struct StickyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_sticky(cudaError_t e);
void check(cudaError_t e, const char* what);
void check(CUresult r, const char* what);
void check(cublasStatus_t s, const char* what);

struct DriverApi {
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleUnload) module_unload = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
  decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy = nullptr;
  decltype(&cuGetErrorString) get_error_string = nullptr;
  decltype(&cuCtxGetCurrent) ctx_get_current = nullptr;
  static const DriverApi& get();  // throws CudaError when the driver lacks a symbol
};

// Where a Buffer's memory lives: device memory, or page-locked host memory (copies into it run
// at full PCIe speed, several times faster than into pageable memory).
struct DeviceMemory {
  static void allocate(void** p, size_t bytes) { check(cudaMalloc(p, bytes), "cudaMalloc"); }
  static void release(void* p) { cudaFree(p); }
};
struct PinnedHostMemory {
  static void allocate(void** p, size_t bytes) {
    check(cudaMallocHost(p, bytes), "cudaMallocHost");
  }
  static void release(void* p) { cudaFreeHost(p); }
};

template <typename T, typename Memory>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t count) : count_(count) {
    if (count) Memory::allocate(reinterpret_cast<void**>(&ptr_), count * sizeof(T));
  }
  ~Buffer() {
    if (ptr_) Memory::release(ptr_);
  }
  Buffer(Buffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

template <typename T>
using DeviceBuffer = Buffer<T, DeviceMemory>;
template <typename T>
using PinnedHostBuffer = Buffer<T, PinnedHostMemory>;

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// A module loaded from a cubin and its one kernel.
class Module {
 public:
  Module(const std::vector<char>& cubin, const char* entry);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function() const { return fn_; }
  CUfunction function(const char* entry) const;  // another entry point of the module

 private:
  CUmodule mod_ = nullptr;
  CUfunction fn_ = nullptr;
};

// The cuBLAS entry points the profiler calls, from libcublas.so.<major> opened on first use;
// throws CudaError naming the library and the loader's reason when it cannot be opened.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched = nullptr;
  decltype(&cublasCgemmStridedBatched) cgemm_strided_batched = nullptr;
  decltype(&cublasZgemmStridedBatched) zgemm_strided_batched = nullptr;
  // H, B, T; the C entry point (the header adds a C++ overload, so no decltype).
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                            int, int, int, const void*, const void*, cudaDataType,
                                            int, long long, const void*, cudaDataType, int,
                                            long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t,
                                            cublasGemmAlgo_t) = nullptr;
  static const CublasApi& get();
};

class Cublas {
 public:
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace gemmtune::gpu
