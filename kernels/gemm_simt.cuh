// gemmtune SIMT GEMM template. Column-major, BLAS convention:
//   C(M x N) = alpha * op(A) * op(B) + beta * C, strided batch over blockIdx.z.
// The renderer (kernels/render.cpp) prepends one #define per tuning parameter:
//   GT_PREC (0 S, 1 D, 2 C, 3 Z), GT_OP_A / GT_OP_B (0 N, 1 T, 2 C),
//   BLK_M BLK_N BLK_K, DIM_X DIM_Y, DIM_XA DIM_YA, DIM_XB DIM_YB, VEC_A VEC_B,
//   LA_KMAJOR LB_KMAJOR, PAD, PREFETCH, STAGES, UNROLL, EDGE_REDIRECT, RASTER, VEC_S, GT_MMA,
//   ASYNC_COPY (1: STAGES-deep cp.async pipeline, sm_80+; else registers stage the tiles),
//   VEC_C (1: C stored VEC_S rows at a time where it is aligned for that; the SIMT kernel with
//   VEC_S > 1 only: tensor-core and split-K kernels store an element at a time whatever it says).
//   LDS32 (1: the compute loop's vector fragment loads use ld.shared on 32-bit shared addresses;
//   the SIMT kernel with VEC_S > 1 only).
// VEC_S: a thread owns groups of VEC_S contiguous rows (and columns) of its C tile and reads
// each group from shared memory as one vector (needs K-major tiles); 1 is MAGMA's strided tile.
// Read layouts are in stored coordinates: DIM_XA threads run along A's contiguous dimension.
// NVRTC compiles this without any include file.
//
// BATCH_MODE (absent: 0) is the call's batch kind, not a tuning parameter: 0 a strided batch
// (matrix z at A + z * stride_a), 1 arrays of pointers (matrix z at A_array[z], one shape),
// 2 variable sizes (matrix z's sizes and leading dimensions in device arrays; the grid covers
// the largest, M, N and K are the maxima, and blocks past their own matrix's tiles return).
//
// GT_MMA 1 (D and Z, sm_80+): FP64 tensor cores, mma.sync m8n8k4; 2, 3, 4 (sm_90+): m16n8k4,
// m16n8k8, m16n8k16 (BLK_K a multiple of the mma's k); Z takes four real mma per tile. The
// DIM_X x DIM_Y thread grid is then a grid of (DIM_X/8) x (DIM_Y/4) warps of 8 x 4 lanes, the
// mma's layout of C: lane l owns row l/4 and column pair 2*(l%4) of each 8 x 8 mma tile; a warp
// owns THR_M x THR_N/2 of those tiles: THR_M x THR_N accumulators per thread, as in SIMT.
// CROSS_BARRIER 1 (KernelConfig::fragments_cross_barrier: ASYNC_COPY with UNROLL 0)
// selects the main loop that reads the next fragments across the K step's barrier; else the
// plain loop, unrolled UNROLL far.

#if GT_PREC == 0
typedef float real_t;
typedef float elem_t;
#define GT_COMPLEX 0
#elif GT_PREC == 1
typedef double real_t;
typedef double elem_t;
#define GT_COMPLEX 0
#elif GT_PREC == 2
typedef float real_t;
typedef float2 elem_t;
#define GT_COMPLEX 1
#else
typedef double real_t;
typedef double2 elem_t;
#define GT_COMPLEX 1
#endif

#ifndef VEC_S
#define VEC_S 1
#endif
#ifndef GT_MMA
#define GT_MMA 0
#endif
#ifndef CROSS_BARRIER
#define CROSS_BARRIER 0
#endif
#if CROSS_BARRIER && !ASYNC_COPY
#error "CROSS_BARRIER needs ASYNC_COPY"
#endif
#ifndef VEC_C
#define VEC_C 0
#endif
#ifndef LDS32
#define LDS32 0
#endif
#if LDS32 && (VEC_S == 1 || GT_MMA)
#error "LDS32 needs the SIMT kernel's vector fragment loads (VEC_S > 1, no GT_MMA)"
#endif
#define THREADS (DIM_X * DIM_Y)
#define THR_M (BLK_M / DIM_X)
#define THR_N (BLK_N / DIM_Y)
#if GT_MMA
#if GT_PREC != 1 && GT_PREC != 3
#error "GT_MMA needs double precision, real or complex"
#endif
#define WARPS_X (DIM_X / 8)
// First row and column of this warp's part of the tile.
#define WARP_ROW0 ((warp % WARPS_X) * THR_M * 8)
#define WARP_COL0 ((warp / WARPS_X) * THR_N * 4)
#define ROW_OF(i) (WARP_ROW0 + (i)*8 + lane / 4)
#define COL_OF(j) (WARP_COL0 + ((j) / 2) * 8 + (lane % 4) * 2 + (j) % 2)
#else
// Row of C (within the tile) of a thread's i-th element: groups of VEC_S rows, DIM_X apart.
#define ROW_OF(i) (((i) / VEC_S) * DIM_X * VEC_S + tx * VEC_S + (i) % VEC_S)
#define COL_OF(j) (((j) / VEC_S) * DIM_Y * VEC_S + ty * VEC_S + (j) % VEC_S)
#endif

// Stored tile of A: rows run along the contiguous dimension.
#if GT_OP_A == 0
#define SA_ROWS BLK_M
#define SA_COLS BLK_K
#else
#define SA_ROWS BLK_K
#define SA_COLS BLK_M
#endif
#if GT_OP_B == 0
#define SB_ROWS BLK_K
#define SB_COLS BLK_N
#else
#define SB_ROWS BLK_N
#define SB_COLS BLK_K
#endif

#define A_ROW_STEPS (SA_ROWS / (DIM_XA * VEC_A))
#define A_COL_STEPS (SA_COLS / DIM_YA)
#define B_ROW_STEPS (SB_ROWS / (DIM_XB * VEC_B))
#define B_COL_STEPS (SB_COLS / DIM_YB)

// Shared tiles, one stage each; the compute loop reads A as (m, k) and B as (k, n).
// The indices are linear in both coordinates, so an index splits into a per-thread part and a
// compile-time part (what the cp.async copies use to keep their address arithmetic out of the
// loop).
#if LA_KMAJOR
#define SA_SIZE (BLK_K * (BLK_M + PAD))
#define SA_INDEX(m, k) ((k) * (BLK_M + PAD) + (m))
#else
#define SA_SIZE (BLK_M * (BLK_K + PAD))
#define SA_INDEX(m, k) ((m) * (BLK_K + PAD) + (k))
#endif
#if LB_KMAJOR
#define SB_SIZE (BLK_K * (BLK_N + PAD))
#define SB_INDEX(k, n) ((k) * (BLK_N + PAD) + (n))
#else
#define SB_SIZE (BLK_N * (BLK_K + PAD))
#define SB_INDEX(k, n) ((n) * (BLK_K + PAD) + (k))
#endif
#define SA_AT(s, m, k) s[SA_INDEX(m, k)]
#define SB_AT(s, k, n) s[SB_INDEX(k, n)]

#if GT_MMA
// k of one mma: 4 (m8n8k4, m16n8k4), 8 (m16n8k8) or 16 (m16n8k16).
#if GT_MMA == 4
#define MMA_K 16
#elif GT_MMA == 3
#define MMA_K 8
#else
#define MMA_K 4
#endif
// Values of one fragment per lane. Lane l's q-th value sits in the mma's k slot l%4 + 4q, for A
// and B alike; any bijection of those slots onto the k of the shared tile leaves the sum
// unchanged when A and B share it, so lane l takes the MMA_Q contiguous k from (l%4)*MMA_Q, and
// an M-major A (N-major B) tile gives them up as 16-byte vectors.
#define MMA_Q (MMA_K / 4)
#define MMA_VEC_A                                                                           \
  (!GT_COMPLEX && !LA_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)
#define MMA_VEC_B                                                                           \
  (!GT_COMPLEX && !LB_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)
#endif

// k of one step of the compute loop: one mma, or one k of the SIMT outer products.
#if GT_MMA
#define STEP_K MMA_K
#else
#define STEP_K 1
#endif

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

__device__ __forceinline__ elem_t gt_zero() {
#if GT_COMPLEX
  elem_t z;
  z.x = 0;
  z.y = 0;
  return z;
#else
  return 0;
#endif
}

__device__ __forceinline__ elem_t gt_conj(elem_t a) {
#if GT_COMPLEX
  a.y = -a.y;
#endif
  return a;
}

// c += a * b
__device__ __forceinline__ void gt_fma(elem_t& c, elem_t a, elem_t b) {
#if GT_COMPLEX
  c.x = fma(a.x, b.x, c.x);
  c.x = fma(-a.y, b.y, c.x);
  c.y = fma(a.x, b.y, c.y);
  c.y = fma(a.y, b.x, c.y);
#else
  c = fma(a, b, c);
#endif
}

__device__ __forceinline__ elem_t gt_mul(elem_t a, elem_t b) {
#if GT_COMPLEX
  elem_t r;
  r.x = a.x * b.x - a.y * b.y;
  r.y = a.x * b.y + a.y * b.x;
  return r;
#else
  return a * b;
#endif
}

__device__ __forceinline__ bool gt_is_zero(elem_t a) {
#if GT_COMPLEX
  return a.x == 0 && a.y == 0;
#else
  return a == 0;
#endif
}

template <int V>
struct __align__(sizeof(elem_t) * V) gt_vec {
  elem_t v[V];
};

#if LDS32
// V elements from shared memory at the 32-bit shared byte address addr. NVRTC addresses shared
// memory through 64-bit registers where nvcc uses 32-bit ones; with 32-bit ones ptxas schedules
// some kernels much better and some worse, on about as many instructions. Volatile, so that no load
// moves across the barriers that guard a stage.
template <int V>
__device__ __forceinline__ gt_vec<V> gt_load_shared(unsigned addr) {
  constexpr int kWords = int(sizeof(gt_vec<V>)) / 4;
  union {
    gt_vec<V> v;
    unsigned w[kWords];
  } u;
  if constexpr (kWords % 4 == 0) {
#pragma unroll
    for (int i = 0; i < kWords; i += 4)
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(u.w[i]), "=r"(u.w[i + 1]), "=r"(u.w[i + 2]), "=r"(u.w[i + 3])
                   : "r"(addr + 4 * i));
  } else {
    static_assert(kWords == 2, "a vector fragment is 8 bytes or a multiple of 16");
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(u.w[0]), "=r"(u.w[1]) : "r"(addr));
  }
  return u.v;
}
#endif

// Loads VEC consecutive stored rows [row, row+VEC) of column col into out.
// rows/cols bound the stored matrix; row_zero / col_zero say whether an index past the bound
// must read as zero (the K dimension always, M and N under predication) or may be clamped to
// the last valid index (pointer redirecting: those values only reach outputs never stored).
template <int V, bool RowZero, bool ColZero, bool Conj>
__device__ __forceinline__ void gt_load(elem_t (&out)[V], const elem_t* __restrict__ base,
                                        long long ld, int row, int col, int rows, int cols) {
  bool col_ok = col < cols;
  if (!ColZero && !col_ok) {
    col = cols - 1;
    col_ok = true;
  }
  if (V > 1 && col_ok && row + V <= rows) {
    gt_vec<V> w = *reinterpret_cast<const gt_vec<V>*>(base + row + (long long)col * ld);
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = Conj ? gt_conj(w.v[v]) : w.v[v];
    return;
  }
#pragma unroll
  for (int v = 0; v < V; ++v) {
    int r = row + v;
    bool ok = col_ok && r < rows;
    if (!RowZero && col_ok && !ok) {
      r = rows - 1;
      ok = true;
    }
    elem_t x = ok ? base[r + (long long)col * ld] : gt_zero();
    out[v] = Conj ? gt_conj(x) : x;
  }
}

// gt_load without bounds: the caller knows [row, row+V) x col lies inside the matrix. Interior
// tiles take this path, free of the per-load branches that hold back the scheduler (it matters
// for tensor-core DGEMM with one block per SM, not for SIMT SGEMM).
template <int V, bool Conj>
__device__ __forceinline__ void gt_load_inside(elem_t (&out)[V], const elem_t* __restrict__ base,
                                               long long ld, int row, int col) {
  if (V > 1) {
    gt_vec<V> w = *reinterpret_cast<const gt_vec<V>*>(base + row + (long long)col * ld);
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = Conj ? gt_conj(w.v[v]) : w.v[v];
  } else {
    out[0] = Conj ? gt_conj(base[row + (long long)col * ld]) : base[row + (long long)col * ld];
  }
}

#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef BATCH_MODE
#define BATCH_MODE 0
#endif
#if BATCH_MODE == 2 && SPLIT_K > 1
#error "split-K needs one K for the batch: variable-size batches (BATCH_MODE 2) run unsplit"
#endif
#if SPLIT_K > 1
__device__ __forceinline__ void gt_atomic_add(elem_t* out, elem_t v) {
#if GT_COMPLEX
  atomicAdd(&out->x, v.x);
  atomicAdd(&out->y, v.y);
#else
  atomicAdd(out, v);
#endif
}

// C = beta * C (zero, unread, when beta is zero, as BLAS asks): the pass before a split-K
// kernel. Grid-stride over the M x N elements; blockIdx.z is the batch index.
#if BATCH_MODE == 1
extern "C" __global__ void gemmtune_scale_c(int M, int N, elem_t beta, elem_t* const* C_array,
                                            long long ldc) {
  elem_t* C = C_array[blockIdx.z];
#else
extern "C" __global__ void gemmtune_scale_c(int M, int N, elem_t beta, elem_t* C, long long ldc,
                                            long long stride_c) {
  C += blockIdx.z * stride_c;
#endif
  const long long total = (long long)M * N;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    elem_t* out = C + e % M + (e / M) * ldc;
    *out = gt_is_zero(beta) ? gt_zero() : gt_mul(beta, *out);
  }
}
#endif

#ifndef ASYNC_COPY
#define ASYNC_COPY 0
#endif
#if ASYNC_COPY
__device__ __forceinline__ unsigned gt_shared_address(const elem_t* p) {
  unsigned addr;
  asm("{ .reg .u64 q; cvta.to.shared.u64 q, %1; cvt.u32.u64 %0, q; }" : "=r"(addr) : "l"(p));
  return addr;
}
// cp.async (sm_80+): BYTES from global src to the shared byte address dst without a register
// round trip; bytes past `valid` are zero-filled, which is how the edges of A and B read as zeros.
// Shared addresses stay 32-bit offsets: converting a generic pointer per copy cost ~150
// instructions per K step of a 256x128x16 SGEMM tile (its SASS).
template <int BYTES>
__device__ __forceinline__ void gt_cp_async(unsigned dst, const elem_t* src, int valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src), "n"(BYTES),
               "r"(valid)
               : "memory");
}
// cp.async of V whole elements; 16-byte copies bypass L1 (.cg), as the tile is read from shared.
template <int V>
__device__ __forceinline__ void gt_cp_async_whole(unsigned dst, const elem_t* src) {
  if (V * sizeof(elem_t) == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(src),
                 "n"(V * int(sizeof(elem_t)))
                 : "memory");
}
__device__ __forceinline__ void gt_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void gt_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Copies stored rows [row, row+V) of column col; what lies outside rows x cols reads as zero.
template <int V>
__device__ __forceinline__ void gt_copy(unsigned dst, const elem_t* __restrict__ base, long long ld,
                                        int row, int col, int rows, int cols) {
  const int valid = col < cols ? min(max(rows - row, 0), V) : 0;
  const elem_t* src = valid > 0 ? base + row + (long long)col * ld : base;
  gt_cp_async<V* int(sizeof(elem_t))>(dst, src, valid * int(sizeof(elem_t)));
}
#endif

#if GT_MMA >= 2
// One m16 mma: C rows r and r + 8 (c0, c1 and c2, c3, column pairs) += A rows r (a0) and r + 8
// (a1) times B (b), each fragment MMA_Q values of k; A value 2q + h is row h, k slot q.
__device__ __forceinline__ void gt_mma16(double& c0, double& c1, double& c2, double& c3,
                                         const double (&a0)[MMA_Q], const double (&a1)[MMA_Q],
                                         const double (&b)[MMA_Q]) {
#if GT_MMA == 4
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
      : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
      : "d"(a0[0]), "d"(a1[0]), "d"(a0[1]), "d"(a1[1]), "d"(a0[2]), "d"(a1[2]), "d"(a0[3]),
        "d"(a1[3]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#elif GT_MMA == 3
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
      : "d"(a0[0]), "d"(a1[0]), "d"(a0[1]), "d"(a1[1]), "d"(b[0]), "d"(b[1]));
#else
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
      : "d"(a0[0]), "d"(a1[0]), "d"(b[0]));
#endif
}
// Accumulators P (empty: real; .x or .y: a complex part) of row tiles i, i + 1 and column pair j.
#define GT_MMA_TILE(P, A_, B_)                                                                 \
  gt_mma16(acc[i][2 * j] P, acc[i][2 * j + 1] P, acc[i + 1][2 * j] P, acc[i + 1][2 * j + 1] P, \
           A_[i], A_[i + 1], B_[j])
#define GT_MMA_ROWS 2
#elif GT_MMA == 1
__device__ __forceinline__ void gt_mma8(double& c0, double& c1, const double (&a)[MMA_Q],
                                        const double (&b)[MMA_Q]) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(c0), "+d"(c1)
      : "d"(a[0]), "d"(b[0]));
}
#define GT_MMA_TILE(P, A_, B_) gt_mma8(acc[i][2 * j] P, acc[i][2 * j + 1] P, A_[i], B_[j])
#define GT_MMA_ROWS 1
#endif

#if BATCH_MODE == 1
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, elem_t alpha, const elem_t* const* __restrict__ A_array,
                    long long lda, const elem_t* const* __restrict__ B_array, long long ldb,
                    elem_t beta, elem_t* const* __restrict__ C_array, long long ldc) {
#elif BATCH_MODE == 2
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, elem_t alpha, const elem_t* const* __restrict__ A_array,
                    const int* __restrict__ lda_array, const elem_t* const* __restrict__ B_array,
                    const int* __restrict__ ldb_array, elem_t beta,
                    elem_t* const* __restrict__ C_array, const int* __restrict__ ldc_array,
                    const int* __restrict__ m_array, const int* __restrict__ n_array,
                    const int* __restrict__ k_array) {
#else
extern "C" __global__ void __launch_bounds__(THREADS)
    gemmtune_kernel(int M, int N, int K, elem_t alpha, const elem_t* __restrict__ A, long long lda,
                    long long stride_a, const elem_t* __restrict__ B, long long ldb,
                    long long stride_b, elem_t beta, elem_t* __restrict__ C, long long ldc,
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
  elem_t* __restrict__ C = C_array[batch_index];
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

  elem_t ra[A_COL_STEPS][A_ROW_STEPS][VEC_A];
  elem_t rb[B_COL_STEPS][B_ROW_STEPS][VEC_B];
  elem_t acc[THR_M][THR_N];
#pragma unroll
  for (int i = 0; i < THR_M; ++i)
#pragma unroll
    for (int j = 0; j < THR_N; ++j) acc[i][j] = gt_zero();

  // Global -> registers for the K step starting at k0.
  // Tiles wholly inside M x N (all but the last row and column of tiles) skip the bounds checks
  // for every K step that is wholly inside K.
  // load/store/copy of A and B mirror each other on purpose: one walker shared by both
  // (tried) changed ptxas' schedule and cost SGEMM 1.5-15%.
  const bool inside_mn = m0 + BLK_M <= M && n0 + BLK_N <= N;
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
  // Registers -> shared stage s.
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

#if ASYNC_COPY
  // Global -> shared stage s for the K step at k0. A vector copy lands VEC contiguous elements in
  // stored order; a one-element copy may transpose (the constraints allow only those layouts).
  // Addresses: stage s's shared base, plus this thread's first copy (computed once), plus a
  // compile-time offset per copy; the source steps from this thread's first element at k = 0.
  constexpr unsigned elem_bytes = sizeof(elem_t);
  constexpr unsigned stage_bytes = (SA_SIZE + SB_SIZE) * elem_bytes;
  const unsigned smem_base = gt_shared_address(smem);
#if GT_OP_A == 0
  const unsigned a_dst0 = SA_INDEX(txa * VEC_A, tya) * elem_bytes;
  const elem_t* const a_src0 = A + (m0 + txa * VEC_A) + (long long)tya * lda;
#else
  const unsigned a_dst0 = SA_INDEX(tya, txa * VEC_A) * elem_bytes;
  const elem_t* const a_src0 = A + txa * VEC_A + (long long)(m0 + tya) * lda;
#endif
#if GT_OP_B == 0
  const unsigned b_dst0 = SB_INDEX(txb * VEC_B, tyb) * elem_bytes;
  const elem_t* const b_src0 = B + txb * VEC_B + (long long)(n0 + tyb) * ldb;
#else
  const unsigned b_dst0 = SB_INDEX(tyb, txb * VEC_B) * elem_bytes;
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
#endif

#if GT_MMA
  // The fragments of one mma step: per lane, the MMA_Q values of k of each A row tile and each
  // B column tile of the warp.
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
#else
  // The operands of one k: a thread's THR_M values of A and THR_N of B.
  struct Fragments {
    elem_t a[THR_M];
    elem_t b[THR_N];
  };
  auto load_fragments = [&](const elem_t* sa, const elem_t* sb, int kk, Fragments& f) {
#if VEC_S > 1
  // K-major tiles: a group of VEC_S rows is contiguous and aligned, one vector load.
#if LDS32
    const unsigned sa32 = unsigned(__cvta_generic_to_shared(sa));
    const unsigned sb32 = unsigned(__cvta_generic_to_shared(sb));
#define GT_FRAGMENT_A(i) \
  gt_load_shared<VEC_S>(sa32 + unsigned(SA_INDEX(ROW_OF(i), kk)) * unsigned(sizeof(elem_t)))
#define GT_FRAGMENT_B(j) \
  gt_load_shared<VEC_S>(sb32 + unsigned(SB_INDEX(kk, COL_OF(j))) * unsigned(sizeof(elem_t)))
#else
#define GT_FRAGMENT_A(i) *reinterpret_cast<const gt_vec<VEC_S>*>(&SA_AT(sa, ROW_OF(i), kk))
#define GT_FRAGMENT_B(j) *reinterpret_cast<const gt_vec<VEC_S>*>(&SB_AT(sb, kk, COL_OF(j)))
#endif
#pragma unroll
    for (int i = 0; i < THR_M; i += VEC_S) {
      const gt_vec<VEC_S> w = GT_FRAGMENT_A(i);
#pragma unroll
      for (int v = 0; v < VEC_S; ++v) f.a[i + v] = w.v[v];
    }
#pragma unroll
    for (int j = 0; j < THR_N; j += VEC_S) {
      const gt_vec<VEC_S> w = GT_FRAGMENT_B(j);
#pragma unroll
      for (int v = 0; v < VEC_S; ++v) f.b[j + v] = w.v[v];
    }
#undef GT_FRAGMENT_A
#undef GT_FRAGMENT_B
#else
#pragma unroll
    for (int i = 0; i < THR_M; ++i) f.a[i] = SA_AT(sa, ROW_OF(i), kk);
#pragma unroll
    for (int j = 0; j < THR_N; ++j) f.b[j] = SB_AT(sb, kk, COL_OF(j));
#endif
  };
  auto multiply_fragments = [&](const Fragments& f) {
#pragma unroll
    for (int i = 0; i < THR_M; ++i)
#pragma unroll
      for (int j = 0; j < THR_N; ++j) gt_fma(acc[i][j], f.a[i], f.b[j]);
  };
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
#if ASYNC_COPY
  // STAGES-deep pipeline of cp.async copies straight into shared memory (sm_80+): the copies of
  // tile kt + STAGES - 1 are in flight while tile kt computes. Group g holds tile g.
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
#else
  load_a(0);
  load_b(0);
  store_a(0);
  store_b(0);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = STAGES == 2 ? (kt & 1) : 0;
    const int nxt = STAGES == 2 ? (cur ^ 1) : 0;
    const bool has_next = kt + 1 < k_tiles;
    const int k_next = (kt + 1) * BLK_K;
    // Prefetched operands are in flight while this step computes.
    if ((PREFETCH & 1) && has_next) load_a(k_next);
    if ((PREFETCH & 2) && has_next) load_b(k_next);

    compute(smem + cur * (SA_SIZE + SB_SIZE), smem + cur * (SA_SIZE + SB_SIZE) + SA_SIZE);

    if (STAGES == 1) __syncthreads();  // one buffer: all reads of it end before it is refilled
    if (has_next) {
      if (!(PREFETCH & 1)) load_a(k_next);
      if (!(PREFETCH & 2)) load_b(k_next);
      store_a(nxt);
      store_b(nxt);
    }
    __syncthreads();
  }

#endif

  const bool read_c = !gt_is_zero(beta);  // BLAS: C is not read when beta is zero
  (void)read_c;
#if VEC_C && VEC_S > 1 && !GT_MMA && SPLIT_K == 1
  // A thread's VEC_S rows of a group are contiguous in a column of C: one vector store (and with
  // beta one vector load) covers them where the column is aligned for it, so a warp's store
  // fills whole sectors instead of every VEC_S-th word of them. Misaligned C (ldc or the batch
  // stride not a multiple of VEC_S) and the last rows of an edge tile take the scalar path.
  const bool c_aligned =
      ldc % VEC_S == 0 && reinterpret_cast<unsigned long long>(C) % (sizeof(elem_t) * VEC_S) == 0;
#pragma unroll
  for (int i = 0; i < THR_M; i += VEC_S) {
    const int m = m0 + ROW_OF(i);
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      const int n = n0 + COL_OF(j);
      if (n >= N) continue;
      elem_t* out = C + m + (long long)n * ldc;
      if (c_aligned && m + VEC_S <= M) {
        gt_vec<VEC_S> w;
        if (read_c) w = *reinterpret_cast<const gt_vec<VEC_S>*>(out);
#pragma unroll
        for (int v = 0; v < VEC_S; ++v) {
          elem_t value = gt_mul(alpha, acc[i + v][j]);
          if (read_c) gt_fma(value, beta, w.v[v]);
          w.v[v] = value;
        }
        *reinterpret_cast<gt_vec<VEC_S>*>(out) = w;
      } else {
#pragma unroll
        for (int v = 0; v < VEC_S; ++v)
          if (m + v < M) {
            elem_t value = gt_mul(alpha, acc[i + v][j]);
            if (read_c) gt_fma(value, beta, out[v]);
            out[v] = value;
          }
      }
    }
  }
#else
#pragma unroll
  for (int i = 0; i < THR_M; ++i) {
    const int m = m0 + ROW_OF(i);
#pragma unroll
    for (int j = 0; j < THR_N; ++j) {
      const int n = n0 + COL_OF(j);
      if (m < M && n < N) {
        elem_t* out = C + m + (long long)n * ldc;
        elem_t value = gt_mul(alpha, acc[i][j]);
#if SPLIT_K > 1
        gt_atomic_add(out, value);  // gemmtune_scale_c has applied beta
#else
        if (read_c) gt_fma(value, beta, *out);
        *out = value;
#endif
      }
    }
  }
#endif
}
