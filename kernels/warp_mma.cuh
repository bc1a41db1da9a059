// The mma warp tile, in the kernel's body. The DIM_X x DIM_Y thread grid is a grid of
// (DIM_X/8) x (DIM_Y/4) warps of 8 x 4 lanes, the mma's layout of C: lane l owns row l/4 and
// column pair 2*(l%4) of each 8 x 8 mma tile; a warp owns THR_M x THR_N/2 of those tiles: THR_M x
// THR_N accumulators per thread, as in SIMT. Z takes four real mma per tile. Phases:
// load_fragments (shared -> registers, one mma's k), multiply_fragments (the mma instructions).
#define WARPS_X (DIM_X / 8)
// First row and column of this warp's part of the tile.
#define WARP_ROW0 ((warp % WARPS_X) * THR_M * 8)
#define WARP_COL0 ((warp / WARPS_X) * THR_N * 4)
#define ROW_OF(i) (WARP_ROW0 + (i)*8 + lane / 4)
#define COL_OF(j) (WARP_COL0 + ((j) / 2) * 8 + (lane % 4) * 2 + (j) % 2)
// k of one step of the K loop: one mma.
#define STEP_K MMA_K
// The fragments of one mma step: per lane, the MMA_Q values of k of each A row tile and each
// B column tile of the warp (H, B, T: packed into MMA_WORDS 32-bit words each).
#if GT_REDUCED
struct Fragments {
  unsigned a[THR_M][MMA_WORDS];
  unsigned b[THR_N / 2][MMA_WORDS];
};
auto load_fragments = [&](const elem_t* sa, const elem_t* sb, int kk, Fragments& f) {
  const int k_lane = kk + (lane % 4) * MMA_Q;
#pragma unroll
  for (int i = 0; i < THR_M; ++i)
    gt_load_words(f.a[i], &SA_AT(sa, WARP_ROW0 + i * 8 + lane / 4, k_lane));
#pragma unroll
  for (int j = 0; j < THR_N / 2; ++j)
    gt_load_words(f.b[j], &SB_AT(sb, k_lane, WARP_COL0 + j * 8 + lane / 4));
};
#else
struct Fragments {
  elem_t a[THR_M][MMA_Q];
  elem_t b[THR_N / 2][MMA_Q];
};
// Reads the fragments of the mma step at kk from the shared tiles sa, sb.
auto load_fragments = [&](const elem_t* sa, const elem_t* sb, int kk, Fragments& f) {
  // Lane l's q-th fragment value of A and of B takes k = kk + (l%4)*MMA_Q + q (see MMA_Q).
  const int k_lane = kk + (lane % 4) * MMA_Q;
  elem_t(&a)[THR_M][MMA_Q] = f.a;
  elem_t(&b)[THR_N / 2][MMA_Q] = f.b;
#pragma unroll
  for (int i = 0; i < THR_M; ++i) {
#if MMA_VEC_A
#pragma unroll
    for (int q = 0; q < MMA_Q; q += 2) {
      const double2 w =
          *reinterpret_cast<const double2*>(&SA_AT(sa, WARP_ROW0 + i * 8 + lane / 4, k_lane + q));
      a[i][q] = w.x;
      a[i][q + 1] = w.y;
    }
#else
#pragma unroll
    for (int q = 0; q < MMA_Q; ++q) a[i][q] = SA_AT(sa, WARP_ROW0 + i * 8 + lane / 4, k_lane + q);
#endif
  }
#pragma unroll
  for (int j = 0; j < THR_N / 2; ++j) {
#if MMA_VEC_B
#pragma unroll
    for (int q = 0; q < MMA_Q; q += 2) {
      const double2 w =
          *reinterpret_cast<const double2*>(&SB_AT(sb, k_lane + q, WARP_COL0 + j * 8 + lane / 4));
      b[j][q] = w.x;
      b[j][q + 1] = w.y;
    }
#else
#pragma unroll
    for (int q = 0; q < MMA_Q; ++q) b[j][q] = SB_AT(sb, k_lane + q, WARP_COL0 + j * 8 + lane / 4);
#endif
  }
};
#endif
auto multiply_fragments = [&](const Fragments& f) {
#if GT_COMPLEX
  const elem_t(&a)[THR_M][MMA_Q] = f.a;
  const elem_t(&b)[THR_N / 2][MMA_Q] = f.b;
  // A complex product on real tensor cores, four mma per tile:
  // re += ar br - ai bi, im += ar bi + ai br.
  double ar[THR_M][MMA_Q], ai[THR_M][MMA_Q], nai[THR_M][MMA_Q];
  double br[THR_N / 2][MMA_Q], bi[THR_N / 2][MMA_Q];
#pragma unroll
  for (int q = 0; q < MMA_Q; ++q) {
#pragma unroll
    for (int i = 0; i < THR_M; ++i) {
      ar[i][q] = a[i][q].x;
      ai[i][q] = a[i][q].y;
      nai[i][q] = -a[i][q].y;
    }
#pragma unroll
    for (int j = 0; j < THR_N / 2; ++j) {
      br[j][q] = b[j][q].x;
      bi[j][q] = b[j][q].y;
    }
  }
#pragma unroll
  for (int i = 0; i < THR_M; i += GT_MMA_ROWS)
#pragma unroll
    for (int j = 0; j < THR_N / 2; ++j) {
      GT_MMA_TILE(.x, ar, br);
      GT_MMA_TILE(.x, nai, bi);
      GT_MMA_TILE(.y, ar, bi);
      GT_MMA_TILE(.y, ai, br);
    }
#else
#pragma unroll
  for (int i = 0; i < THR_M; i += GT_MMA_ROWS)
#pragma unroll
    for (int j = 0; j < THR_N / 2; ++j) GT_MMA_TILE(, f.a, f.b);
#endif
};
