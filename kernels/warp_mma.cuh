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
// Column tile of the jj-th product of row tile i: odd row pairs walk the columns backwards
// (CUTLASS's serpentine), so consecutive products share an A or a B fragment (.reuse). FP16,
// BF16 and TF32 only: the FP64 kernels' order with it was never measured on a GPU.
#if GT_REDUCED
#define GT_SERPENTINE(i, jj) (((i) / GT_MMA_ROWS) % 2 ? THR_N / 2 - 1 - (jj) : (jj))
#else
#define GT_SERPENTINE(i, jj) (jj)
#endif
// k of one step of the K loop: one mma.
#define STEP_K MMA_K
// The fragments of one mma step: per lane, the MMA_Q values of k of each A row tile and each
// B column tile of the warp (H, B, T: packed into MMA_WORDS 32-bit words each).
#if GT_REDUCED
struct Fragments {
  unsigned a[THR_M][MMA_WORDS];
  unsigned b[THR_N / 2][MMA_WORDS];
};
#if LDMATRIX
// An instruction reads four 8 x 8 matrices (then two, then one for what is left) into
// consecutive registers, in the order the mma takes them: A's rows r and r + 8 of each k-half
// (tiles i, i + 1 of word 0, then of word 1), B's k-halves of a column tile. Matrix q of an
// instruction is word GT_LDM_*_WORD(q) of tile GT_LDM_*_TILE(q) after its first tile.
#define GT_LDM_A_TILE(q) (MMA_WORDS == 2 ? (q) % 2 : (q))
#define GT_LDM_A_WORD(q) (MMA_WORDS == 2 ? (q) / 2 : 0)
#define GT_LDM_B_TILE(q) ((q) / MMA_WORDS)
#define GT_LDM_B_WORD(q) ((q) % MMA_WORDS)
// Each lane's row, as a byte offset from the instruction's first tile: the same for every
// instruction of one width, so that instructions differ by constants folded into the address.
#define GT_LDM_BYTES(index) (unsigned)((index) * (int)sizeof(elem_t))
// A k-major tile's matrices are read transposed: the lane's row is a k, not an m (n).
#define GT_LDM_A_TRANS (LA_KMAJOR != 0)
#define GT_LDM_B_TRANS (LB_KMAJOR != 0)
#if LA_KMAJOR
#define GT_LDM_A_LANE(q) \
  GT_LDM_BYTES(SA_INDEX(WARP_ROW0 + GT_LDM_A_TILE(q) * 8, GT_LDM_A_WORD(q) * LDM_K + lane % 8))
#else
#define GT_LDM_A_LANE(q) \
  GT_LDM_BYTES(SA_INDEX(WARP_ROW0 + GT_LDM_A_TILE(q) * 8 + lane % 8, GT_LDM_A_WORD(q) * LDM_K))
#endif
#if LB_KMAJOR
#define GT_LDM_B_LANE(q) \
  GT_LDM_BYTES(SB_INDEX(GT_LDM_B_WORD(q) * LDM_K + lane % 8, WARP_COL0 + GT_LDM_B_TILE(q) * 8))
#else
#define GT_LDM_B_LANE(q) \
  GT_LDM_BYTES(SB_INDEX(GT_LDM_B_WORD(q) * LDM_K, WARP_COL0 + GT_LDM_B_TILE(q) * 8 + lane % 8))
#endif
// Shared addresses as 32-bit offsets from one conversion of the base: from each stage's generic
// pointer, BK8 m16n8k8 kernels took the shared window's high word as their ldmatrix address.
const unsigned smem32 = gt_shared_address(smem);
#define GT_SHARED32(p) (smem32 + GT_LDM_BYTES((p)-smem))
const unsigned ldm_a[3] = {GT_LDM_A_LANE(lane / 8), GT_LDM_A_LANE(lane / 8 % 2), GT_LDM_A_LANE(0)};
const unsigned ldm_b[3] = {GT_LDM_B_LANE(lane / 8), GT_LDM_B_LANE(lane / 8 % 2), GT_LDM_B_LANE(0)};
// The address of tile t0's rows for the lane offsets of width w (0: x4, 1: x2, 2: x1), from the
// step's shared addresses a32, b32.
#define GT_LDM_A_AT(t0, w) (a32 + ldm_a[w] + GT_LDM_BYTES(SA_INDEX((t0)*8, 0)))
#define GT_LDM_B_AT(t0, w) (b32 + ldm_b[w] + GT_LDM_BYTES(SB_INDEX(0, (t0)*8)))
// Every matrix of F (COUNT of them, tiles of MMA_WORDS words), with X's tile order.
#define GT_LDM_ALL(F, X, COUNT)                                                               \
  {                                                                                           \
    _Pragma("unroll") for (int m = 0; m + 4 <= (COUNT); m += 4) {                             \
      const int t0 = m / MMA_WORDS;                                                           \
      gt_ldmatrix_x4<X##_TRANS>(                                                              \
          F[t0 + X##_TILE(0)][X##_WORD(0)], F[t0 + X##_TILE(1)][X##_WORD(1)],                 \
          F[t0 + X##_TILE(2)][X##_WORD(2)], F[t0 + X##_TILE(3)][X##_WORD(3)], X##_AT(t0, 0)); \
    }                                                                                         \
    if constexpr ((COUNT) % 4 >= 2) {                                                         \
      constexpr int t0 = (COUNT) / 4 * 4 / MMA_WORDS;                                         \
      gt_ldmatrix_x2<X##_TRANS>(F[t0 + X##_TILE(0)][X##_WORD(0)],                             \
                                F[t0 + X##_TILE(1)][X##_WORD(1)], X##_AT(t0, 1));             \
    }                                                                                         \
    if constexpr ((COUNT) % 2 != 0) {                                                         \
      constexpr int t0 = ((COUNT)-1) / MMA_WORDS;                                             \
      gt_ldmatrix_x1<X##_TRANS>(F[t0][0], X##_AT(t0, 2));                                     \
    }                                                                                         \
  }
// B's fragments of the mma step at kk from the shared tile sb, into b (a step's own, or the next
// step's registers under GT_STEP_AHEAD).
auto load_b_fragments = [&](const elem_t* sb, int kk, unsigned (&b)[THR_N / 2][MMA_WORDS]) {
  const unsigned b32 = GT_SHARED32(sb) + GT_LDM_BYTES(SB_INDEX(kk, 0));
  GT_LDM_ALL(b, GT_LDM_B, THR_N / 2 * MMA_WORDS);
#pragma unroll
  for (int j = 0; j < THR_N / 2; ++j)
#pragma unroll
    for (int w = 0; w < MMA_WORDS; ++w) gt_round_tf32(b[j][w]);
};
auto load_fragments = [&](const elem_t* sa, const elem_t* sb, int kk, Fragments& f) {
  const unsigned a32 = GT_SHARED32(sa) + GT_LDM_BYTES(SA_INDEX(0, kk));
  GT_LDM_ALL(f.a, GT_LDM_A, THR_M * MMA_WORDS);
#pragma unroll
  for (int i = 0; i < THR_M; ++i)
#pragma unroll
    for (int w = 0; w < MMA_WORDS; ++w) gt_round_tf32(f.a[i][w]);
  load_b_fragments(sb, kk, f.b);
};
// Step-ahead reads (GT_STEP_AHEAD, main_loop_multistage.cuh): one x4 per A row pair (MMA_WORDS
// 2: tiles 2p, 2p + 1, both words), and all of B by load_b_fragments into registers of their
// own. Needs two K steps a tile (the barrier sits between the last two).
#if MMA_WORDS == 2 && CROSS_BARRIER && BLK_K >= 2 * STEP_K
#define GT_STEP_AHEAD 1
auto load_a_pair = [&](const elem_t* sa, int kk, Fragments& f, int p) {
  const unsigned a32 = GT_SHARED32(sa) + GT_LDM_BYTES(SA_INDEX(0, kk));
  const int t0 = 2 * p;
  gt_ldmatrix_x4<GT_LDM_A_TRANS>(f.a[t0 + GT_LDM_A_TILE(0)][GT_LDM_A_WORD(0)],
                                 f.a[t0 + GT_LDM_A_TILE(1)][GT_LDM_A_WORD(1)],
                                 f.a[t0 + GT_LDM_A_TILE(2)][GT_LDM_A_WORD(2)],
                                 f.a[t0 + GT_LDM_A_TILE(3)][GT_LDM_A_WORD(3)], GT_LDM_A_AT(t0, 0));
#pragma unroll
  for (int w = 0; w < MMA_WORDS; ++w) {
    gt_round_tf32(f.a[t0][w]);
    gt_round_tf32(f.a[t0 + 1][w]);
  }
};
#endif
#else
auto load_fragments = [&](const elem_t* sa, const elem_t* sb, int kk, Fragments& f) {
  const int k_lane = kk + (lane % 4) * MMA_Q;
#pragma unroll
  for (int i = 0; i < THR_M; ++i)
#if LA_KMAJOR  // TF32 only (mma_sync.cuh): one word, one k
#pragma unroll
    for (int q = 0; q < MMA_WORDS; ++q) {
      f.a[i][q] = __float_as_uint(SA_AT(sa, WARP_ROW0 + i * 8 + lane / 4, k_lane + q));
      gt_round_tf32(f.a[i][q]);
    }
#else
    gt_load_words(f.a[i], &SA_AT(sa, WARP_ROW0 + i * 8 + lane / 4, k_lane));
#endif
#pragma unroll
  for (int j = 0; j < THR_N / 2; ++j)
#if LB_KMAJOR
#pragma unroll
    for (int q = 0; q < MMA_WORDS; ++q) {
      f.b[j][q] = __float_as_uint(SB_AT(sb, k_lane + q, WARP_COL0 + j * 8 + lane / 4));
      gt_round_tf32(f.b[j][q]);
    }
#else
    gt_load_words(f.b[j], &SB_AT(sb, k_lane, WARP_COL0 + j * 8 + lane / 4));
#endif
};
#endif
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
#if !GT_COMPLEX
// The products of row tile i (and i + 1 for the m16 shapes) with every column tile of f.
auto multiply_row_pair = [&](const Fragments& f, int i) {
#pragma unroll
  for (int jj = 0; jj < THR_N / 2; ++jj) {
    const int j = GT_SERPENTINE(i, jj);
    GT_MMA_TILE(, f.a, f.b);
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
  for (int i = 0; i < THR_M; i += GT_MMA_ROWS) multiply_row_pair(f, i);
#endif
};
#if GT_STEP_AHEAD
// The products of f, each row pair's followed by the read of the same row pair of the next
// step (shared tile ns at k offset nk) into f: an A row pair is dead after its THR_N / 2
// products, so the next step's A needs no registers of its own; its B does (load_b_fragments,
// read before the products, THR_N / 2 * MMA_WORDS registers).
auto multiply_ahead = [&](Fragments& f, const elem_t* ns, int nk) {
#pragma unroll
  for (int i = 0; i < THR_M; i += GT_MMA_ROWS) {
    multiply_row_pair(f, i);
    load_a_pair(ns, nk, f, i / GT_MMA_ROWS);
  }
};
#endif
