// The kernel's entry and prologue, shared by every family: this block's tile of C (rasterized),
// its matrix of the batch, its part of K under split-K, the thread's coordinates in each layout
// and its accumulators. The main loop's tile phases, the family's warp tile, the K step, the
// main loop and the C store (epilogue.cuh) follow inside this body.
#if BATCH_MODE == 1
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, out_t alpha, const elem_t* const* __restrict__ A_array,
                    long long lda, const elem_t* const* __restrict__ B_array, long long ldb,
                    out_t beta, out_t* const* __restrict__ C_array, long long ldc) {
#elif BATCH_MODE == 2
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, out_t alpha, const elem_t* const* __restrict__ A_array,
                    const int* __restrict__ lda_array, const elem_t* const* __restrict__ B_array,
                    const int* __restrict__ ldb_array, out_t beta,
                    out_t* const* __restrict__ C_array, const int* __restrict__ ldc_array,
                    const int* __restrict__ m_array, const int* __restrict__ n_array,
                    const int* __restrict__ k_array) {
#else
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, out_t alpha, const elem_t* __restrict__ A, long long lda,
                    long long stride_a, const elem_t* __restrict__ B, long long ldb,
                    long long stride_b, out_t beta, out_t* __restrict__ C, long long ldc,
                    long long stride_c) {
#endif
  extern __shared__ __align__(16) unsigned char gt_smem_raw[];
  elem_t* smem = reinterpret_cast<elem_t*>(gt_smem_raw);

  const int tid = threadIdx.x;
  const int tiles_m = (M + BLK_M - 1) / BLK_M;
  const int tiles_n = (N + BLK_N - 1) / BLK_N;
  int bm, bn;
#if RASTER <= 1
  bm = blockIdx.x % tiles_m;
  bn = blockIdx.x / tiles_m;
#else
  {
    // Groups of RASTER tile columns: blocks running together share panels of A and B in L2.
    const int per_group = RASTER * tiles_m;
    const int group = blockIdx.x / per_group;
    const int first_n = group * RASTER;
    const int group_n = min(tiles_n - first_n, RASTER);
    const int in_group = blockIdx.x % per_group;
    bn = first_n + in_group % group_n;
    bm = in_group / group_n;
  }
#endif
  if (bn >= tiles_n) return;

#if SPLIT_K > 1
  const int batch_index = blockIdx.z / SPLIT_K;
#else
  const int batch_index = blockIdx.z;
#endif
#if BATCH_MODE == 2
  // M and N were the batch's largest, for the grid; now this matrix's own. A block past its
  // matrix's tiles leaves before it reads anything more (an empty matrix: every block).
  M = m_array[batch_index];
  N = n_array[batch_index];
  if (bm * BLK_M >= M || bn * BLK_N >= N) return;
  K = k_array[batch_index];
  const long long lda = lda_array[batch_index];
  const long long ldb = ldb_array[batch_index];
  const long long ldc = ldc_array[batch_index];
#endif
#if BATCH_MODE
  const elem_t* __restrict__ A = A_array[batch_index];
  const elem_t* __restrict__ B = B_array[batch_index];
  out_t* __restrict__ C = C_array[batch_index];
#endif
#if SPLIT_K > 1
  // This block's part of K: A and B start at its first k, and K becomes its length; the rest
  // of the kernel runs as if the problem were that thin.
  {
    const int k_per_split = ((K + BLK_K - 1) / BLK_K + SPLIT_K - 1) / SPLIT_K * BLK_K;
    const int k_begin = int(blockIdx.z % SPLIT_K) * k_per_split;
    if (k_begin >= K) return;  // nothing left to add (C was scaled by beta before)
#if GT_OP_A == 0
    A += (long long)k_begin * lda;
#else
    A += k_begin;
#endif
#if GT_OP_B == 0
    B += k_begin;
#else
    B += (long long)k_begin * ldb;
#endif
    K = min(K - k_begin, k_per_split);
  }
#endif
#if BATCH_MODE == 0
  A += batch_index * stride_a;
  B += batch_index * stride_b;
  C += batch_index * stride_c;
#endif
  const int m0 = bm * BLK_M;
  const int n0 = bn * BLK_N;

  const int txa = tid % DIM_XA, tya = tid / DIM_XA;
  const int txb = tid % DIM_XB, tyb = tid / DIM_XB;
  const int tx = tid % DIM_X, ty = tid / DIM_X;
  const int lane = tid % 32, warp = tid / 32;
  (void)tx, (void)ty, (void)lane, (void)warp;  // each kernel kind uses one pair

  out_t acc[THR_M][THR_N];
#pragma unroll
  for (int i = 0; i < THR_M; ++i)
#pragma unroll
    for (int j = 0; j < THR_N; ++j) acc[i][j] = gt_zero_out();

  // Tiles wholly inside M x N (all but the last row and column of tiles) skip the bounds checks
  // for every K step that is wholly inside K.
  const bool inside_mn = m0 + BLK_M <= M && n0 + BLK_N <= N;
