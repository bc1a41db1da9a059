// Hand-worked occupancy cases, one limiter at a time, each with the arithmetic written out.
#include "core/core.hpp"
#include "model/model.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

TEST_CASE("occupancy: H100 (9.0) limited by warps, registers, shared memory and blocks",
          "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");

  // 1024 threads = 32 warps; 2048 threads per SM -> 2 blocks. Registers: 16 x 32 = 512 per
  // warp, 16 384 per block, 4 blocks would fit. Warps limit.
  Occupancy o = occupancy(h100, 1024, 16, 0);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limit == OccupancyLimit::Warps);
  CHECK(o.fraction == Approx(1.0));

  // Register granularity: 256 per warp. 64 registers x 32 = 2048 per warp; each of the 4
  // sub-partitions has 16 384 registers -> 8 warps each, 32 per SM -> 4 blocks of 8 warps.
  o = occupancy(h100, 256, 64, 0);
  CHECK(o.blocks_per_sm == 4);
  // 65 registers x 32 = 2080, rounded up to 2304 per warp -> 7 warps per sub-partition, 28 per
  // SM -> 3 blocks. One register more costs a whole block.
  o = occupancy(h100, 256, 65, 0);
  CHECK(o.blocks_per_sm == 3);
  CHECK(o.limit == OccupancyLimit::Registers);
  CHECK(o.allocated_regs_per_block == 8 * 2304);

  // Shared memory with the 1 KB per-block reservation: 58 368 + 1024 = 59 392 bytes per
  // block; 233 472 / 59 392 = 3.93 -> 3 blocks. Without the reservation it would be 4.
  o = occupancy(h100, 128, 32, 58368);
  CHECK(o.blocks_per_sm == 3);
  CHECK(o.limit == OccupancyLimit::SharedMemory);
  CHECK(o.allocated_smem_per_block == 59392);

  // One warp per block, few registers: the 32-blocks-per-SM limit binds before 64 warps do.
  o = occupancy(h100, 32, 16, 0);
  CHECK(o.blocks_per_sm == 32);
  CHECK(o.limit == OccupancyLimit::Blocks);
  CHECK(o.fraction == Approx(0.5));

  // Above the opt-in limit (227 KB) nothing runs.
  CHECK(occupancy(h100, 128, 32, 232448 + 1024).blocks_per_sm == 0);
}

TEST_CASE("occupancy: A100 (8.0) shared memory and its reservation", "[model]") {
  const DeviceSpec a100 = find_builtin_device("A100");
  // 41 984 + 1024 = 43 008 per block; 167 936 / 43 008 = 3.9 -> 3 (4 without reservation).
  CHECK(occupancy(a100, 128, 32, 41984).blocks_per_sm == 3);
  // 40 960 + 1024 = 41 984; 167 936 / 41 984 = 4 exactly.
  CHECK(occupancy(a100, 128, 32, 40960).blocks_per_sm == 4);
}

TEST_CASE("occupancy: RTX 4090 (8.9) has 24 blocks and 48 warps per SM", "[model]") {
  const DeviceSpec ada = find_builtin_device("RTX4090");
  Occupancy o = occupancy(ada, 32, 16, 0);
  CHECK(o.blocks_per_sm == 24);
  CHECK(o.limit == OccupancyLimit::Blocks);
  CHECK(o.fraction == Approx(0.5));
  // 512 threads = 16 warps; 48 / 16 = 3 blocks.
  o = occupancy(ada, 512, 32, 0);
  CHECK(o.blocks_per_sm == 3);
  CHECK(o.limit == OccupancyLimit::Warps);
}

TEST_CASE("occupancy: V100 (7.0) and GTX 1060 (6.1) register limits", "[model]") {
  // 128 registers x 32 = 4096 per warp -> 4 warps per sub-partition, 16 per SM -> 2 blocks of 8.
  Occupancy o = occupancy(find_builtin_device("V100"), 256, 128, 0);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limit == OccupancyLimit::Registers);
  // Pascal, same arithmetic at 64 registers: 8 warps per sub-partition -> 4 blocks of 8 warps.
  o = occupancy(find_builtin_device("GTX1060"), 256, 64, 0);
  CHECK(o.blocks_per_sm == 4);
  // 48 KB is the most a Pascal block may have; two fit in 96 KB.
  CHECK(occupancy(find_builtin_device("GTX1060"), 256, 32, 49152).blocks_per_sm == 2);
}
