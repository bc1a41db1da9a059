// DeviceSpec of the GPU in this machine, from the CUDA runtime (statically linked, so the
// program also starts where no driver is installed and says so).
#include <cuda_runtime.h>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) return 0;
  return value;
}

// FP32 and FP64 FMA lanes per SM by compute capability (CUDA C Programming Guide, arithmetic
// instruction throughput table).
std::pair<int, int> fma_lanes(int major, int minor) {
  if (major == 6) return minor == 0 ? std::pair{64, 32} : std::pair{128, 4};
  if (major == 7) return minor == 0 ? std::pair{64, 32} : std::pair{64, 2};
  if (major == 8) return minor == 0 ? std::pair{64, 32} : std::pair{128, 2};
  if (major == 9) return {128, 64};
  return {128, 2};
}

// FP64 tensor cores at full rate: the data-centre parts (GA100, GH100); the others run
// mma.sync f64 at a trickle, so the space leaves it out there.
int fp64_mma_fmas(int major, int minor) {
  if (major == 8 && minor == 0) return 64;
  if (major == 9 && minor == 0) return 128;
  return 0;
}

// FP16/BF16 FMAs per clock per SM through mma.sync, as the built-in table has them (TF32 at
// half): the data-centre parts; the consumer ones accumulate FP32 at a part-rate the space does
// not model.
int fp16_mma_fmas(int major, int minor) {
  return (major == 8 || major == 9) && minor == 0 ? 1024 : 0;
}

}  // namespace

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

DeviceSpec query_local_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    throw InputError(std::string("no CUDA GPU on this machine (") +
                     (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") +
                     "); use a built-in spec such as --gpu H100-SXM (" +
                     join(builtin_device_names(), ", ") + ") or a JSON spec file");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    throw std::runtime_error("cudaGetDeviceProperties failed for device 0");
  DeviceSpec d;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.sm_clock_mhz = attribute(cudaDevAttrClockRate, 0) / 1000.0;
  const double mem_khz = attribute(cudaDevAttrMemoryClockRate, 0);
  const double bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, 0);
  d.dram_bandwidth_gbs = 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9;  // double data rate
  d.l2_bytes = prop.l2CacheSize;
  auto [fp32, fp64] = fma_lanes(prop.major, prop.minor);
  d.fp32_lanes_per_sm = fp32;
  d.fp64_lanes_per_sm = fp64;
  d.fp64_mma_per_sm = fp64_mma_fmas(prop.major, prop.minor);
  d.fp16_mma_per_sm = fp16_mma_fmas(prop.major, prop.minor);
  d.tf32_mma_per_sm = d.fp16_mma_per_sm / 2;
  d.regs_per_sm = prop.regsPerMultiprocessor;
  d.regs_per_block = prop.regsPerBlock;
  d.smem_per_sm = std::int64_t(prop.sharedMemPerMultiprocessor);
  d.smem_per_block = std::int64_t(prop.sharedMemPerBlock);
  d.smem_per_block_optin = std::int64_t(prop.sharedMemPerBlockOptin);
  d.smem_reserved_per_block = std::int64_t(prop.reservedSharedMemPerBlock);
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.max_threads_per_block = prop.maxThreadsPerBlock;
  d.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  d.warp_size = prop.warpSize;
  d.validate();
  return d;
}

}  // namespace gemmtune
