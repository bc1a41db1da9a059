// The cp.async main loop (as CUTLASS's multistage one), in the kernel's body: a STAGES-deep
// pipeline of cp.async copies straight into shared memory (sm_80+, load_tiles_cp_async.cuh), no
// register staging. Phases: the fill of the first STAGES - 1 stages, then per K step: wait and
// barrier, copies of a later tile, compute; CROSS_BARRIER moves the barrier inside the K step.
// Fill: the copies of tile kt + STAGES - 1 are in flight while tile kt computes. Group g holds
// tile g.
#pragma unroll
for (int s = 0; s < STAGES - 1; ++s) {
  if (s < k_tiles) copy_tiles(s, s * BLK_K);
  gt_cp_async_commit();
}
#if CROSS_BARRIER
// Fully unrolled kernels keep their pipe (tensor or FMA) fed across K steps (as CUTLASS's
// multistage main loop does): the barrier sits after the second last step (one mma, or one k
// of the SIMT outer product), the last step's fragments are read before it and the next
// tile's first fragments after it, while the last step's products run; the copies of a new
// tile are issued before the first step's products. The plain order below (barrier, copies,
// then the tile's first fragment reads) idles the pipe at every K step of a block that has
// the SM to itself; with UNROLL > 0 it stays, as the variant that wins where co-resident
// blocks cover the barrier or the second set of fragments costs too many registers.
constexpr int last_step = BLK_K / STEP_K - 1;
constexpr int barrier_step = last_step > 0 ? last_step - 1 : 0;
gt_cp_async_wait<STAGES - 2>();
__syncthreads();
Fragments first;  // step 0 of the tile to come
load_fragments(smem, smem + SA_SIZE, 0, first);
for (int kt = 0; kt < k_tiles; ++kt) {
  const elem_t* sa = smem + (kt % STAGES) * (SA_SIZE + SB_SIZE);
  // Past the last tile this is a slot no copy writes any more; what is read from it goes unused.
  const elem_t* sa_next = smem + ((kt + 1) % STAGES) * (SA_SIZE + SB_SIZE);
  Fragments last;  // read before the barrier: after it, the copies of step kt + 1 refill sa
  GT_FULL_UNROLL_K
  for (int step = 0; step <= last_step; ++step) {
    Fragments f;
    if (step == 0)
      f = first;
    else if (step == last_step)
      f = last;
    else
      load_fragments(sa, sa + SA_SIZE, step * STEP_K, f);
    if (step + 1 == last_step) load_fragments(sa, sa + SA_SIZE, last_step * STEP_K, last);
    if (step == last_step && last_step > 0) load_fragments(sa_next, sa_next + SA_SIZE, 0, first);
    if (step == 0) {
      // Into tile kt - 1's slot: every warp read it before the barrier of step kt - 1.
      const int next = kt + STAGES - 1;
      if (next < k_tiles) copy_tiles(next % STAGES, next * BLK_K);
      gt_cp_async_commit();
    }
    multiply_fragments(f);
    if (step == barrier_step) {
      gt_cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt + 1 have landed
      __syncthreads();                 // everyone's have, and everyone has read tile kt
      if (last_step == 0) load_fragments(sa_next, sa_next + SA_SIZE, 0, first);
    }
  }
}
#else
for (int kt = 0; kt < k_tiles; ++kt) {
  gt_cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed
  __syncthreads();                 // everyone's have, and everyone is done with tile kt - 1
  const int next = kt + STAGES - 1;
  if (next < k_tiles) copy_tiles(next % STAGES, next * BLK_K);  // into tile kt - 1's slot
  gt_cp_async_commit();
  const int cur = kt % STAGES;
  compute(smem + cur * (SA_SIZE + SB_SIZE), smem + cur * (SA_SIZE + SB_SIZE) + SA_SIZE);
}
#endif
