// The cp.async main loop's tile phase, in the kernel's body: copy_tiles (load tile: global ->
// shared) and copy_part (a share of an interior tile's copies, for the steady loop). Before the
// warp tile: after it, split-K and variable-batch kernels compile to other SASS. Load tile: global
// -> shared stage s for the K step at k0. A vector copy lands VEC contiguous elements in stored
// order; a one-element copy may transpose (the constraints allow only those layouts). Addresses:
// stage s's shared base, plus this thread's first copy (computed once), plus a compile-time offset
// per copy; the source steps from this thread's first element at k = 0.
constexpr unsigned elem_bytes = sizeof(elem_t);
constexpr unsigned stage_bytes = (SA_SIZE + SB_SIZE) * elem_bytes;
const unsigned smem_base = gt_shared_address(smem);
#if GT_OP_A == 0
const unsigned a_dst0 = SA_INDEX(txa * VEC_A, tya) * elem_bytes;
const elem_t* const a_src0 = A + (m0 + txa * VEC_A) + (long long)tya * lda;
#else
const unsigned a_dst0 = SA_INDEX(tya, txa* VEC_A) * elem_bytes;
const elem_t* const a_src0 = A + txa * VEC_A + (long long)(m0 + tya) * lda;
#endif
#if GT_OP_B == 0
const unsigned b_dst0 = SB_INDEX(txb * VEC_B, tyb) * elem_bytes;
const elem_t* const b_src0 = B + txb * VEC_B + (long long)(n0 + tyb) * ldb;
#else
const unsigned b_dst0 = SB_INDEX(tyb, txb* VEC_B) * elem_bytes;
const elem_t* const b_src0 = B + (n0 + txb * VEC_B) + (long long)tyb * ldb;
#endif
// Interior copies (no bounds): copy (c, r) of A lands at stage offset GT_A_DST(c, r) from this
// thread's first, its source steps by c * DIM_YA columns (rows for op T) and r vectors from the
// thread's first element at the tile's k0 (GT_A_AT_K); B likewise.
#if GT_OP_A == 0
#define GT_A_DST(c, r) SA_INDEX((r)*DIM_XA* VEC_A, (c)*DIM_YA)
#define GT_A_AT_K(k0) (a_src0 + (long long)(k0)*lda)
#else
#define GT_A_DST(c, r) SA_INDEX((c)*DIM_YA, (r)*DIM_XA* VEC_A)
#define GT_A_AT_K(k0) (a_src0 + (k0))
#endif
#if GT_OP_B == 0
#define GT_B_DST(c, r) SB_INDEX((r)*DIM_XB* VEC_B, (c)*DIM_YB)
#define GT_B_AT_K(k0) (b_src0 + (k0))
#else
#define GT_B_DST(c, r) SB_INDEX((c)*DIM_YB, (r)*DIM_XB* VEC_B)
#define GT_B_AT_K(k0) (b_src0 + (long long)(k0)*ldb)
#endif
// The part-th of `parts` equal shares of a tile's interior copies (A's first), so that the
// multistage loop's steady part spreads a tile's copies over its K steps (as CUTLASS's does).
constexpr int gt_copies_a = A_COL_STEPS * A_ROW_STEPS;
constexpr int gt_copies = gt_copies_a + B_COL_STEPS * B_ROW_STEPS;
auto copy_part = [&](int s, int k0, int part, int parts) {
  const unsigned sa = smem_base + s * stage_bytes;
  const unsigned sb = sa + SA_SIZE * elem_bytes;
#pragma unroll
  for (int q = 0; q < gt_copies; ++q) {
    if (q < part * gt_copies / parts || q >= (part + 1) * gt_copies / parts) continue;
    if (q < gt_copies_a) {
      const int c = q / A_ROW_STEPS, r = q % A_ROW_STEPS;
      gt_cp_async_whole<VEC_A>(sa + a_dst0 + GT_A_DST(c, r) * elem_bytes,
                               GT_A_AT_K(k0) + c * DIM_YA * lda + r * DIM_XA * VEC_A);
    } else {
      const int c = (q - gt_copies_a) / B_ROW_STEPS, r = (q - gt_copies_a) % B_ROW_STEPS;
      gt_cp_async_whole<VEC_B>(sb + b_dst0 + GT_B_DST(c, r) * elem_bytes,
                               GT_B_AT_K(k0) + c * DIM_YB * ldb + r * DIM_XB * VEC_B);
    }
  }
};
// Interior tile: whole copies from a pointer that steps by columns, no bounds. The checked path
// of copy_tiles costs ~10 integer instructions per copy (H200 profile). Not copy_part(s, k0, 0,
// 1): its addressing compiles the general loop to other SASS, never measured on a GPU.
auto copy_whole_tiles = [&](int s, int k0) {
  const unsigned sa = smem_base + s * stage_bytes;
  const unsigned sb = sa + SA_SIZE * elem_bytes;
  const elem_t* pa = GT_A_AT_K(k0);
#pragma unroll
  for (int c = 0; c < A_COL_STEPS; ++c, pa += DIM_YA * lda)
#pragma unroll
    for (int r = 0; r < A_ROW_STEPS; ++r)
      gt_cp_async_whole<VEC_A>(sa + a_dst0 + GT_A_DST(c, r) * elem_bytes, pa + r * DIM_XA * VEC_A);
  const elem_t* pb = GT_B_AT_K(k0);
#pragma unroll
  for (int c = 0; c < B_COL_STEPS; ++c, pb += DIM_YB * ldb)
#pragma unroll
    for (int r = 0; r < B_ROW_STEPS; ++r)
      gt_cp_async_whole<VEC_B>(sb + b_dst0 + GT_B_DST(c, r) * elem_bytes, pb + r * DIM_XB * VEC_B);
};
auto copy_tiles = [&](int s, int k0) {
  const unsigned sa = smem_base + s * stage_bytes;
  const unsigned sb = sa + SA_SIZE * elem_bytes;
  if (inside_mn && k0 + BLK_K <= K) {
    copy_whole_tiles(s, k0);
    return;
  }
#pragma unroll
  for (int c = 0; c < A_COL_STEPS; ++c)
#pragma unroll
    for (int r = 0; r < A_ROW_STEPS; ++r) {
      const int row = txa * VEC_A + r * DIM_XA * VEC_A;
      const int col = tya + c * DIM_YA;
#if GT_OP_A == 0
      gt_copy<VEC_A>(sa + SA_INDEX(row, col) * elem_bytes, A, lda, m0 + row, k0 + col, M, K);
#else
      gt_copy<VEC_A>(sa + SA_INDEX(col, row) * elem_bytes, A, lda, k0 + row, m0 + col, K, M);
#endif
    }
#pragma unroll
  for (int c = 0; c < B_COL_STEPS; ++c)
#pragma unroll
    for (int r = 0; r < B_ROW_STEPS; ++r) {
      const int row = txb * VEC_B + r * DIM_XB * VEC_B;
      const int col = tyb + c * DIM_YB;
#if GT_OP_B == 0
      gt_copy<VEC_B>(sb + SB_INDEX(row, col) * elem_bytes, B, ldb, k0 + row, n0 + col, K, N);
#else
      gt_copy<VEC_B>(sb + SB_INDEX(col, row) * elem_bytes, B, ldb, n0 + row, k0 + col, N, K);
#endif
    }
};
