// One K step, in the kernel's body: the warp tile's phases over the BLK_K of one stage of
// shared tiles, as both main loops run it.
#define GT_STR2(x) #x
#define GT_STR(x) GT_STR2(x)
// UR0 unrolls the K step's loop fully. Under LDS32 the trip count is spelled out: a bare
// "unroll" is a request NVRTC's unroller may turn down by its size estimate, and it did for the
// inline-PTX loads (the S 4096^3 winner ran its 32 steps as two rounds of 16, 20% slower). The
// count changed the 64-bit kernels' code a little and one of them lost 2%, so they
// keep the bare request their recorded measurements were taken with.
#if LDS32
#define GT_FULL_UNROLL_K _Pragma(GT_STR(unroll(BLK_K / STEP_K)))
#else
#define GT_FULL_UNROLL_K _Pragma("unroll")
#endif
#if UNROLL == 0
#define GT_UNROLL_K GT_FULL_UNROLL_K
#else
#define GT_UNROLL_K _Pragma(GT_STR(unroll UNROLL))
#endif
// One K step on the shared tiles sa, sb.
auto compute = [&](const elem_t* sa, const elem_t* sb) {
  GT_UNROLL_K
  for (int kk = 0; kk < BLK_K; kk += STEP_K) {
    Fragments f;
    load_fragments(sa, sb, kk, f);
    multiply_fragments(f);
  }
};

const int k_tiles = (K + BLK_K - 1) / BLK_K;
