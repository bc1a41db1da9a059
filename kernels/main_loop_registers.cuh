// The register-staged main loop (as CUTLASS's pipelined one), in the kernel's body: tiles go
// global -> registers -> shared (load_tiles_registers.cuh), in one stage or two (double
// buffering), the next tile's loads (PREFETCH: before the K step) in flight while a K step
// computes. Phases: the fill of stage 0, then per K step: prefetch, compute, load and store of
// the next tile, barrier.
// Fill: stage 0 holds the first tile.
load_a(0);
load_b(0);
store_a(0);
store_b(0);
__syncthreads();

for (int kt = 0; kt < k_tiles; ++kt) {
  const int cur = STAGES == 2 ? (kt & 1) : 0;
  const int nxt = STAGES == 2 ? (cur ^ 1) : 0;
  const bool has_next = kt + 1 < k_tiles;
  const int k_next = (kt + 1) * BLK_K;
  // Prefetched operands are in flight while this step computes.
  if ((PREFETCH & 1) && has_next) load_a(k_next);
  if ((PREFETCH & 2) && has_next) load_b(k_next);

  compute(smem + cur * (SA_SIZE + SB_SIZE), smem + cur * (SA_SIZE + SB_SIZE) + SA_SIZE);

  if (STAGES == 1) __syncthreads();  // one buffer: all reads of it end before it is refilled
  if (has_next) {
    if (!(PREFETCH & 1)) load_a(k_next);
    if (!(PREFETCH & 2)) load_b(k_next);
    store_a(nxt);
    store_b(nxt);
  }
  __syncthreads();
}
