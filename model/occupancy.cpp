// Occupancy through NVIDIA's cuda_occupancy.h: the rules are NVIDIA's, we only feed them.
#include <cuda_occupancy.h>

#include "model/model.hpp"

namespace gemmtune {

const char* to_string(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::Warps:
      return "warps";
    case OccupancyLimit::Registers:
      return "registers";
    case OccupancyLimit::SharedMemory:
      return "shared memory";
    case OccupancyLimit::Blocks:
      return "blocks";
    case OccupancyLimit::None:
      return "none";
  }
  return "?";
}

Occupancy occupancy(const DeviceSpec& d, int threads, int regs, std::int64_t smem_bytes) {
  cudaOccDeviceProp prop;
  prop.computeMajor = d.cc_major;
  prop.computeMinor = d.cc_minor;
  prop.maxThreadsPerBlock = d.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
  prop.regsPerBlock = d.regs_per_block;
  prop.regsPerMultiprocessor = d.regs_per_sm;
  prop.warpSize = d.warp_size;
  prop.sharedMemPerBlock = static_cast<size_t>(d.smem_per_block);
  prop.sharedMemPerMultiprocessor = static_cast<size_t>(d.smem_per_sm);
  prop.numSms = d.sm_count;
  prop.sharedMemPerBlockOptin = static_cast<size_t>(d.smem_per_block_optin);
  prop.reservedSharedMemPerBlock = static_cast<size_t>(d.smem_reserved_per_block);

  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = d.max_threads_per_block;
  attr.numRegs = regs;
  attr.sharedSizeBytes = 0;  // the template uses dynamic shared memory only
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = static_cast<size_t>(d.smem_per_block_optin);
  attr.numBlockBarriers = 1;

  cudaOccDeviceState state;
  cudaOccResult result{};
  const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(
      &result, &prop, &attr, &state, threads, static_cast<size_t>(smem_bytes));
  if (err != CUDA_OCC_SUCCESS) {
    throw InputError(
        "occupancy calculator rejected device '" + d.name + "' (cc " + std::to_string(d.cc_major) +
        "." + std::to_string(d.cc_minor) + ") with " + std::to_string(threads) + " threads, " +
        std::to_string(regs) + " registers, " + std::to_string(smem_bytes) +
        " bytes of shared memory" +
        (err == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? ": unknown device" : ": invalid input"));
  }
  Occupancy o;
  o.blocks_per_sm = result.activeBlocksPerMultiprocessor;
  const int warps_per_block = (threads + d.warp_size - 1) / d.warp_size;
  o.warps_per_sm = o.blocks_per_sm * warps_per_block;
  o.fraction = double(o.warps_per_sm) / double(d.max_threads_per_sm / d.warp_size);
  o.limit_by_warps = result.blockLimitWarps;
  o.limit_by_regs = result.blockLimitRegs;
  o.limit_by_smem = result.blockLimitSharedMem;
  o.limit_by_blocks = result.blockLimitBlocks;
  o.allocated_regs_per_block = result.allocatedRegistersPerBlock;
  o.allocated_smem_per_block = static_cast<std::int64_t>(result.allocatedSharedMemPerBlock);
  // The smallest per-resource limit names the limiter; ties go in NVIDIA's order.
  o.limit = OccupancyLimit::None;
  int best = 1 << 30;
  auto consider = [&](int value, OccupancyLimit which) {
    if (value < best) {
      best = value;
      o.limit = which;
    }
  };
  consider(result.blockLimitWarps, OccupancyLimit::Warps);
  consider(result.blockLimitRegs, OccupancyLimit::Registers);
  consider(result.blockLimitSharedMem, OccupancyLimit::SharedMemory);
  consider(result.blockLimitBlocks, OccupancyLimit::Blocks);
  return o;
}

}  // namespace gemmtune
