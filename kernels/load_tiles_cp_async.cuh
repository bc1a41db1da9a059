// The cp.async main loop's tile phase, in the kernel's body: copy_tiles (load tile: global ->
// shared). Before the warp tile: after it, split-K and variable-batch kernels compile to other
// SASS. Load tile: global -> shared stage s for the K step at k0. A vector copy lands VEC
// contiguous elements in stored order; a one-element copy may transpose (the constraints allow only
// those layouts). Addresses: stage s's shared base, plus this thread's first copy (computed once),
// plus a compile-time offset per copy; the source steps from this thread's first element at k = 0.
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
auto copy_tiles = [&](int s, int k0) {
  const unsigned sa = smem_base + s * stage_bytes;
  const unsigned sb = sa + SA_SIZE * elem_bytes;
  if (inside_mn && k0 + BLK_K <= K) {
    // Interior tile: whole copies from a pointer that steps by columns, no bounds. The checked
    // path below costs ~10 integer instructions per copy (H200 profile).
#if GT_OP_A == 0
    const elem_t* pa = a_src0 + (long long)k0 * lda;
#else
    const elem_t* pa = a_src0 + k0;
#endif
#pragma unroll
    for (int c = 0; c < A_COL_STEPS; ++c, pa += DIM_YA * lda)
#pragma unroll
      for (int r = 0; r < A_ROW_STEPS; ++r) {
#if GT_OP_A == 0
        const unsigned dst = sa + a_dst0 + SA_INDEX(r * DIM_XA * VEC_A, c * DIM_YA) * elem_bytes;
#else
        const unsigned dst = sa + a_dst0 + SA_INDEX(c * DIM_YA, r * DIM_XA * VEC_A) * elem_bytes;
#endif
        gt_cp_async_whole<VEC_A>(dst, pa + r * DIM_XA * VEC_A);
      }
#if GT_OP_B == 0
    const elem_t* pb = b_src0 + k0;
#else
    const elem_t* pb = b_src0 + (long long)k0 * ldb;
#endif
#pragma unroll
    for (int c = 0; c < B_COL_STEPS; ++c, pb += DIM_YB * ldb)
#pragma unroll
      for (int r = 0; r < B_ROW_STEPS; ++r) {
#if GT_OP_B == 0
        const unsigned dst = sb + b_dst0 + SB_INDEX(r * DIM_XB * VEC_B, c * DIM_YB) * elem_bytes;
#else
        const unsigned dst = sb + b_dst0 + SB_INDEX(c * DIM_YB, r * DIM_XB * VEC_B) * elem_bytes;
#endif
        gt_cp_async_whole<VEC_B>(dst, pb + r * DIM_XB * VEC_B);
      }
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
