// The C store, every family's epilogue, ending the kernel's body: C = alpha * acc + beta * C
// through ROW_OF / COL_OF of the warp tile, a vector store per group of VEC_S rows (VEC_C, SIMT),
// 16 bytes a lane from C staged through shared memory (VEC_C, mma), or an atomic sum per element
// under split-K.
const bool read_c = !gt_is_zero(beta);  // BLAS: C is not read when beta is zero
(void)read_c;
#if VEC_C && VEC_S > 1 && !GT_MMA && SPLIT_K == 1
// A thread's VEC_S rows of a group are contiguous in a column of C: one vector store (and with
// beta one vector load) covers them where the column is aligned for it, so a warp's store
// fills whole sectors instead of every VEC_S-th word of them. Misaligned C (ldc or the batch
// stride not a multiple of VEC_S) and the last rows of an edge tile take the scalar path.
const bool c_aligned =
    ldc % VEC_S == 0 && reinterpret_cast<unsigned long long>(C) % (sizeof(out_t) * VEC_S) == 0;
// A group's C values are all read before any is written (see the scalar path below).
#pragma unroll
for (int i = 0; i < THR_M; i += VEC_S) {
  const int m = m0 + ROW_OF(i);
  gt_vec<VEC_S> c_in[THR_N];
  if (read_c) {
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      const int n = n0 + COL_OF(j);
      if (n >= N) continue;
      const out_t* in = C + m + (long long)n * ldc;
      if (c_aligned && m + VEC_S <= M) {
        c_in[j] = *reinterpret_cast<const gt_vec<VEC_S>*>(in);
      } else {
#pragma unroll
        for (int v = 0; v < VEC_S; ++v)
          if (m + v < M) c_in[j].v[v] = in[v];
      }
    }
  }
#pragma unroll
  for (int j = 0; j < THR_N; ++j) {
    const int n = n0 + COL_OF(j);
    if (n >= N) continue;
    out_t* out = C + m + (long long)n * ldc;
    gt_vec<VEC_S> w;
#pragma unroll
    for (int v = 0; v < VEC_S; ++v) {
      w.v[v] = gt_mul(alpha, acc[i + v][j]);
      if (read_c) gt_fma(w.v[v], beta, c_in[j].v[v]);
    }
    if (c_aligned && m + VEC_S <= M) {
      *reinterpret_cast<gt_vec<VEC_S>*>(out) = w;
    } else {
#pragma unroll
      for (int v = 0; v < VEC_S; ++v)
        if (m + v < M) out[v] = w.v[v];
    }
  }
}
#else
#if GT_MMA && VEC_C && !GT_COMPLEX && SPLIT_K == 1
// VC1 in the mma family, interior tiles where C is 16-byte aligned: each warp passes its
// accumulators through shared memory one 8-column mma tile at a time, so that a lane stores 16
// contiguous bytes of a column and a warp's store fills whole 128-byte lines, where the mma
// layout stores 4 bytes in each of 4 columns (8 for FP64): 4 (2) times fewer store requests,
// which bound skinny-K problems whose C dominates. Only where the warps' staging fits the tiles'
// shared memory without their padding (KernelConfig::has_vector_c_path says the same); the
// pitch keeps the 32 lanes' writes on distinct banks.
{
  constexpr int kVec = 16 / int(sizeof(out_t));
  constexpr int kRows = THR_M * 8;  // the warp tile's rows
  constexpr int kPitch = kRows + kVec;
  constexpr int kPerColumn = kRows / kVec;
  constexpr int kVectors = 8 * kPerColumn;  // of one 8-column mma tile
  // m16 mma tiles make THR_M even for 4-byte C; 8-byte C gives 32 THR_M vectors.
  static_assert(kVectors % 32 == 0, "a warp stores whole rounds of 32 vectors");
  constexpr int kRounds = kVectors / 32;
  struct __align__(16) gt_out_vec {
    out_t v[kVec];
  };
  constexpr bool kFits = (THREADS / 32) * 8 * kPitch * sizeof(out_t) <=
                         STAGES * (BLK_M + BLK_N) * BLK_K * sizeof(elem_t);
  if constexpr (kFits) {
    if (inside_mn && ldc % kVec == 0 && reinterpret_cast<unsigned long long>(C) % 16 == 0) {
#if ASYNC_COPY
      gt_cp_async_wait<0>();  // no copy may land in the staging area
#endif
      __syncthreads();        // every warp is done with the tiles
      out_t* const stage = reinterpret_cast<out_t*>(gt_smem_raw) + warp * 8 * kPitch;
      out_t* const c_warp = C + (m0 + WARP_ROW0) + (long long)(n0 + WARP_COL0) * ldc;
#pragma unroll
      for (int jn = 0; jn < THR_N / 2; ++jn) {
#pragma unroll
        for (int i = 0; i < THR_M; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            stage[((lane % 4) * 2 + h) * kPitch + i * 8 + lane / 4] =
                gt_mul(alpha, acc[i][2 * jn + h]);
        __syncwarp();
        // With beta, a group's C vectors are read before any is written (see the scalar path
        // below); groups of 2 bound the registers the vectors hold.
#pragma unroll
        for (int r0 = 0; r0 < kRounds; r0 += 2) {
          gt_out_vec c_in[2];
#pragma unroll
          for (int g = 0; g < 2; ++g) {
            const int f = (r0 + g) * 32 + lane;
            if (read_c && r0 + g < kRounds)
              c_in[g] = *reinterpret_cast<const gt_out_vec*>(
                  c_warp + f % kPerColumn * kVec + (long long)(jn * 8 + f / kPerColumn) * ldc);
          }
#pragma unroll
          for (int g = 0; g < 2; ++g) {
            const int f = (r0 + g) * 32 + lane;
            if (r0 + g >= kRounds) continue;
            const int col = f / kPerColumn, row = f % kPerColumn * kVec;
            gt_out_vec w = *reinterpret_cast<const gt_out_vec*>(stage + col * kPitch + row);
            if (read_c)
#pragma unroll
              for (int v = 0; v < kVec; ++v) gt_fma(w.v[v], beta, c_in[g].v[v]);
            *reinterpret_cast<gt_out_vec*>(c_warp + row + (long long)(jn * 8 + col) * ldc) = w;
          }
        }
        __syncwarp();  // the next tile overwrites the stage
      }
      return;
    }
  }
}
#endif
#if SPLIT_K == 1 && GT_REDUCED
// Interior tiles: no bounds, one 64-bit address per column of the thread's tile, its rows at
// compile-time offsets from it (STG [R.64 + imm]), beta tested once. The checked store below
// costs ~24 instructions and a branch per element: 3052 instructions, ~9,700 cycles of static
// stalls per warp for the FP16 256x128 tile, not overlapped with anything at one block per SM.
#define GT_ROW_STEP(i) (ROW_OF(i) - ROW_OF(0))
if (inside_mn) {
  out_t* const c_row0 = C + (m0 + ROW_OF(0));
  if (read_c) {
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      out_t* const col = c_row0 + (long long)(n0 + COL_OF(j)) * ldc;
      out_t c_in[THR_M];
#pragma unroll
      for (int i = 0; i < THR_M; ++i) c_in[i] = col[GT_ROW_STEP(i)];
#pragma unroll
      for (int i = 0; i < THR_M; ++i) {
        out_t value = gt_mul(alpha, acc[i][j]);
        gt_fma(value, beta, c_in[i]);
        col[GT_ROW_STEP(i)] = value;
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      out_t* const col = c_row0 + (long long)(n0 + COL_OF(j)) * ldc;
#pragma unroll
      for (int i = 0; i < THR_M; ++i) col[GT_ROW_STEP(i)] = gt_mul(alpha, acc[i][j]);
    }
  }
} else
#endif
{
// With beta, a row of the thread's tile is read before any of it is written: the compiler cannot
// move a load of C above a store to C it cannot tell apart, so a load beside each store would
// wait out the memory latency once per element (THR_M x THR_N times, exposed where few warps run).
#pragma unroll
  for (int i = 0; i < THR_M; ++i) {
    const int m = m0 + ROW_OF(i);
#if SPLIT_K == 1
    out_t c_in[THR_N];
    if (read_c) {
#pragma unroll
      for (int j = 0; j < THR_N; ++j) {
        const int n = n0 + COL_OF(j);
        if (m < M && n < N) c_in[j] = C[m + (long long)n * ldc];
      }
    }
#endif
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      const int n = n0 + COL_OF(j);
      if (m < M && n < N) {
        out_t* out = C + m + (long long)n * ldc;
        out_t value = gt_mul(alpha, acc[i][j]);
#if SPLIT_K > 1
        gt_atomic_add(out, value);  // gemmtune_scale_c has applied beta
#else
        if (read_c) gt_fma(value, beta, c_in[j]);
        *out = value;
#endif
      }
    }
  }
}
#endif
}
