// The register-staged main loop's tile phases, in the kernel's body before the warp tile, as the
// cp.async loop's: load_a / load_b (load tile: global -> registers), store_a / store_b (store
// tile: registers -> shared stage s).
elem_t ra[A_COL_STEPS][A_ROW_STEPS][VEC_A];
elem_t rb[B_COL_STEPS][B_ROW_STEPS][VEC_B];
// Load tile: global -> registers for the K step starting at k0.
// load/store/copy of A and B mirror each other on purpose: one walker shared by both
// (tried) changed ptxas' schedule and cost SGEMM 1.5-15%.
auto load_a = [&](int k0) {
  if (inside_mn && k0 + BLK_K <= K) {
#pragma unroll
    for (int c = 0; c < A_COL_STEPS; ++c)
#pragma unroll
      for (int r = 0; r < A_ROW_STEPS; ++r) {
        const int row = txa * VEC_A + r * DIM_XA * VEC_A;
        const int col = tya + c * DIM_YA;
#if GT_OP_A == 0
        gt_load_inside<VEC_A, false>(ra[c][r], A, lda, m0 + row, k0 + col);
#else
        gt_load_inside<VEC_A, GT_OP_A == 2>(ra[c][r], A, lda, k0 + row, m0 + col);
#endif
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
      gt_load<VEC_A, !EDGE_REDIRECT, true, false>(ra[c][r], A, lda, m0 + row, k0 + col, M, K);
#else
      gt_load<VEC_A, true, !EDGE_REDIRECT, GT_OP_A == 2>(ra[c][r], A, lda, k0 + row, m0 + col, K,
                                                         M);
#endif
    }
};
auto load_b = [&](int k0) {
  if (inside_mn && k0 + BLK_K <= K) {
#pragma unroll
    for (int c = 0; c < B_COL_STEPS; ++c)
#pragma unroll
      for (int r = 0; r < B_ROW_STEPS; ++r) {
        const int row = txb * VEC_B + r * DIM_XB * VEC_B;
        const int col = tyb + c * DIM_YB;
#if GT_OP_B == 0
        gt_load_inside<VEC_B, false>(rb[c][r], B, ldb, k0 + row, n0 + col);
#else
        gt_load_inside<VEC_B, GT_OP_B == 2>(rb[c][r], B, ldb, n0 + row, k0 + col);
#endif
      }
    return;
  }
#pragma unroll
  for (int c = 0; c < B_COL_STEPS; ++c)
#pragma unroll
    for (int r = 0; r < B_ROW_STEPS; ++r) {
      const int row = txb * VEC_B + r * DIM_XB * VEC_B;
      const int col = tyb + c * DIM_YB;
#if GT_OP_B == 0
      gt_load<VEC_B, true, !EDGE_REDIRECT, false>(rb[c][r], B, ldb, k0 + row, n0 + col, K, N);
#else
      gt_load<VEC_B, !EDGE_REDIRECT, true, GT_OP_B == 2>(rb[c][r], B, ldb, n0 + row, k0 + col, N,
                                                         K);
#endif
    }
};
// Store tile: registers -> shared stage s.
auto store_a = [&](int s) {
  elem_t* sa = smem + s * (SA_SIZE + SB_SIZE);
#pragma unroll
  for (int c = 0; c < A_COL_STEPS; ++c)
#pragma unroll
    for (int r = 0; r < A_ROW_STEPS; ++r)
#pragma unroll
      for (int v = 0; v < VEC_A; ++v) {
        const int row = txa * VEC_A + r * DIM_XA * VEC_A + v;
        const int col = tya + c * DIM_YA;
#if GT_OP_A == 0
        SA_AT(sa, row, col) = ra[c][r][v];
#else
        SA_AT(sa, col, row) = ra[c][r][v];
#endif
      }
};
auto store_b = [&](int s) {
  elem_t* sb = smem + s * (SA_SIZE + SB_SIZE) + SA_SIZE;
#pragma unroll
  for (int c = 0; c < B_COL_STEPS; ++c)
#pragma unroll
    for (int r = 0; r < B_ROW_STEPS; ++r)
#pragma unroll
      for (int v = 0; v < VEC_B; ++v) {
        const int row = txb * VEC_B + r * DIM_XB * VEC_B + v;
        const int col = tyb + c * DIM_YB;
#if GT_OP_B == 0
        SB_AT(sb, row, col) = rb[c][r][v];
#else
        SB_AT(sb, col, row) = rb[c][r][v];
#endif
      }
};
