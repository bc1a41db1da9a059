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
// Step-ahead kernels' interior blocks run their K tiles in a steady loop (GT_TILE_AHEAD(1)), all
// but the last STAGES - 1 whole tiles and a ragged last one: every copy in it is whole and in
// bounds, so its body is one basic block with no test (kt < k_tiles, inside_mn, k0 + BLK_K <= K)
// to branch around: ptxas then spreads the copies among the products and keeps no registers for
// the checked path (226 instead of 250 for the FP16 256x128x64 tile; that is what leaves room for
// GT_STEP_AHEAD). Its copies are issued in barrier_step + 1 parts, one per K step up to the
// barrier, and committed before the wait (as CUTLASS's multistage loop does), rather than as one
// burst of 12 per thread.
constexpr int copy_parts = barrier_step + 1;
gt_cp_async_wait<STAGES - 2>();
__syncthreads();
Fragments first;  // step 0 of the tile to come
load_fragments(smem, smem + SA_SIZE, 0, first);
// The copies of step `step` of tile kt: all of tile kt + STAGES - 1 at step 0 (checked, general
// loop), or part `step` of it (steady loop), into tile kt - 1's slot: every warp read it before
// the barrier of tile kt - 1. One group a tile, committed with its copies (general loop) or after
// its last part (steady loop), before the tile's wait either way.
#define GT_TILE_COPIES(STEADY, COPY)                                                   \
  {                                                                                    \
    const int next = kt + STAGES - 1;                                                  \
    if (STEADY) {                                                                      \
      if (step < copy_parts) copy_part(next % STAGES, next * BLK_K, step, copy_parts); \
    } else if (step == 0 && next < k_tiles) {                                          \
      COPY(next % STAGES, next * BLK_K);                                               \
    }                                                                                  \
    if (step == (STEADY ? barrier_step : 0)) gt_cp_async_commit();                     \
  }
// A tile's barrier, SYNC the barrier itself: a plain __syncthreads() (step-ahead reads), or
// GT_SYNC_AFTER_LAST (fragment sets).
#define GT_TILE_BARRIER(SYNC)                                                        \
  if (step == barrier_step) {                                                        \
    gt_cp_async_wait<STAGES - 2>(); /* this thread's copies of tile kt + 1 landed */ \
    SYNC;                           /* everyone's have, everyone has read tile kt */ \
    if (last_step == 0) load_fragments(sa_next, sa_next + SA_SIZE, 0, first);        \
  }
// With fragment sets, `last` is read before the barrier and multiplied after it, and the next
// tile's copies into the slot it is read from may follow the barrier at once. In mma kernels the
// barrier waits for those reads (it takes a word of every `last` fragment): left in flight across
// a plain barrier, FP64 mma kernels with 8-byte (L1) copies computed a wrong C, on every run in
// the whole-tile loop below (bench/RESULTS.md). SIMT kernels, never seen wrong, keep the plain
// barrier and their registers.
#define GT_SYNC_AFTER_LAST                                                \
  if (GT_MMA && last_step > 0)                                            \
    __syncthreads_or((gt_word(last.a) | gt_word(last.b)) == 0x7ff80001u); \
  else                                                                    \
    __syncthreads()
// One tile, fragments read as sets: `first` (step 0, read after the previous tile's barrier),
// `last` (read before this tile's barrier), the others at their own step.
#define GT_TILE_SETS(COPY)                                                                   \
  {                                                                                          \
    const elem_t* sa = smem + (kt % STAGES) * (SA_SIZE + SB_SIZE);                           \
    /* Past the last tile, a slot no copy writes any more: what is read goes unused. */      \
    const elem_t* sa_next = smem + ((kt + 1) % STAGES) * (SA_SIZE + SB_SIZE);                \
    Fragments last;                                                                          \
    GT_FULL_UNROLL_K                                                                         \
    for (int step = 0; step <= last_step; ++step) {                                          \
      Fragments f;                                                                           \
      if (step == 0)                                                                         \
        f = first;                                                                           \
      else if (step == last_step)                                                            \
        f = last;                                                                            \
      else                                                                                   \
        load_fragments(sa, sa + SA_SIZE, step * STEP_K, f);                                  \
      if (step + 1 == last_step) load_fragments(sa, sa + SA_SIZE, last_step * STEP_K, last); \
      if (step == last_step && last_step > 0)                                                \
        load_fragments(sa_next, sa_next + SA_SIZE, 0, first);                                \
      GT_TILE_COPIES(0, COPY)                                                                \
      multiply_fragments(f);                                                                 \
      GT_TILE_BARRIER(GT_SYNC_AFTER_LAST)                                                    \
    }                                                                                        \
  }
#if GT_STEP_AHEAD
// One tile, fragments read a K step ahead (warp_mma.cuh): B of step + 1 into registers of its
// own before the products of step, each A row pair of step + 1 in place right after its
// products. Step last_step - 1 reads step last_step before the barrier, step last_step the next
// tile's step 0 after it, as the sets above. `first` carries the step's fragments.
#define GT_TILE_AHEAD(STEADY)                                                             \
  {                                                                                       \
    const elem_t* sa = smem + (kt % STAGES) * (SA_SIZE + SB_SIZE);                        \
    const elem_t* sa_next = smem + ((kt + 1) % STAGES) * (SA_SIZE + SB_SIZE);             \
    GT_FULL_UNROLL_K                                                                      \
    for (int step = 0; step <= last_step; ++step) {                                       \
      const elem_t* ns = step == last_step ? sa_next : sa;                                \
      const int nk = step == last_step ? 0 : (step + 1) * STEP_K;                         \
      unsigned nb[THR_N / 2][MMA_WORDS];                                                  \
      load_b_fragments(ns + SA_SIZE, nk, nb);                                             \
      GT_TILE_COPIES(STEADY, copy_tiles)                                                  \
      multiply_ahead(first, ns, nk);                                                      \
      _Pragma("unroll") for (int j = 0; j < THR_N / 2; ++j)                               \
          _Pragma("unroll") for (int w = 0; w < MMA_WORDS; ++w) first.b[j][w] = nb[j][w]; \
      GT_TILE_BARRIER(__syncthreads())                                                    \
    }                                                                                     \
  }
#endif
// The mma family's step-ahead kernels only: the SIMT S 128x128x16 kernel took 2 registers more
// (128 -> 130, past the 2-blocks-per-SM limit), and FP64 mma kernels of 3 and 4 stages computed
// wrong C in interior blocks alone on some runs in the fragment sets' steady loop (its barrier did
// not wait for the last step's reads: GT_SYNC_AFTER_LAST): kernels without step-ahead reads run
// the general loop's tiles.
#define GT_STEADY_LOOP (GT_MMA && GT_STEP_AHEAD)
int kt = 0;
#if GT_STEADY_LOOP
if (inside_mn) {
  const int steady_end = K / BLK_K - (STAGES - 1);
  for (; kt < steady_end; ++kt) GT_TILE_AHEAD(1)
}
#endif
// The general loop keeps the fragment sets: with the checked copies, the step-ahead B
// registers spill (255 registers, 12 bytes). Interior blocks of a K the tiles divide run the
// same loop, its copies, commits and barriers where they are, every tile through, with whole
// copies alone: no registers kept for the checked path (D 128x64x16 m16n8k4: 255 registers and
// an 8-byte spill -> 240), and ptxas reads fragments earlier (D 192x96x16: 33 -> 19 of a K
// tile's 72 DMMAs wait on their shared loads). Unlike the steady loop that was wrong on some
// runs, no block hands its tiles from one loop to another. Only where a thread may hold 255
// registers: 512-thread kernels, capped at 128, spilled more with the loop's second copy.
#if GT_MMA && !GT_STEADY_LOOP && THREADS <= 256
if (inside_mn && K % BLK_K == 0) {
  for (; kt < k_tiles; ++kt) GT_TILE_SETS(copy_whole_tiles)
}
#endif
for (; kt < k_tiles; ++kt) GT_TILE_SETS(copy_tiles)
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
