// gemmtune GEMM kernels, the pieces every family shares: element types and arithmetic, the
// tile geometry, global loads with their edge handling, and the split-K pass. Column-major,
// BLAS convention:
//   C(M x N) = alpha * op(A) * op(B) + beta * C, strided batch over blockIdx.z.
// The renderer (kernels/render.cpp) prepends one #define per tuning parameter, then this file,
// the family's helpers, the kernel's prologue (prologue.cuh), its main loop's tile phases
// (load_tiles_*.cuh), its warp tile (warp_simt.cuh or warp_mma.cuh), the K step (k_step.cuh), its
// main loop (main_loop_registers.cuh or main_loop_multistage.cuh) and the C store
// (epilogue.cuh); kernels/families.cpp says which.
//   GT_PREC (0 S, 1 D, 2 C, 3 Z, 4 H, 5 B, 6 T), GT_OP_A / GT_OP_B (0 N, 1 T, 2 C),
//   BLK_M BLK_N BLK_K, DIM_X DIM_Y, DIM_XA DIM_YA, DIM_XB DIM_YB, VEC_A VEC_B,
//   LA_KMAJOR LB_KMAJOR, PAD, PREFETCH, STAGES, UNROLL, EDGE_REDIRECT, RASTER, VEC_S, GT_MMA,
//   ASYNC_COPY (1: STAGES-deep cp.async pipeline, sm_80+; else registers stage the tiles),
//   VEC_C (1: C stored VEC_S rows at a time where it is aligned for that, the SIMT kernel with
//   VEC_S > 1; in the mma family, real C staged through shared memory and stored 16 bytes a
//   lane; split-K kernels store an element at a time whatever it says).
//   LDS32 (1: the compute loop's vector fragment loads use ld.shared on 32-bit shared addresses;
//   the SIMT kernel with VEC_S > 1 only).
// VEC_S: a thread owns groups of VEC_S contiguous rows (and columns) of its C tile and reads
// each group from shared memory as one vector (needs K-major tiles); 1 is MAGMA's strided tile.
// Read layouts are in stored coordinates: DIM_XA threads run along A's contiguous dimension.
// NVRTC compiles the rendered source without any include file.
//
// BATCH_MODE (absent: 0) is the call's batch kind, not a tuning parameter: 0 a strided batch
// (matrix z at A + z * stride_a), 1 arrays of pointers (matrix z at A_array[z], one shape),
// 2 variable sizes (matrix z's sizes and leading dimensions in device arrays; the grid covers
// the largest, M, N and K are the maxima, and blocks past their own matrix's tiles return).
//
// GT_MMA 1 (D and Z, sm_80+): FP64 tensor cores, mma.sync m8n8k4; 2, 3, 4 (sm_90+): m16n8k4,
// m16n8k8, m16n8k16 (warp_mma.cuh). CROSS_BARRIER 1 (KernelConfig::fragments_cross_barrier:
// ASYNC_COPY with UNROLL 0) selects the multistage loop that reads the next fragments across
// the K step's barrier; else the plain loop, unrolled UNROLL far. LDMATRIX 1
// (fragments_by_ldmatrix: H, B, T where shared rows are 16-byte aligned and conflict-free for it)
// reads the mma fragments with ldmatrix; else as 32-bit words.

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
#elif GT_PREC == 3
typedef double real_t;
typedef double2 elem_t;
#define GT_COMPLEX 1
#else
// H (4), B (5): 16-bit inputs held as their bits, never computed on outside the mma; T (6): FP32
// inputs the mma reads as TF32. Accumulators, C, alpha and beta are FP32.
typedef float real_t;
#if GT_PREC == 6
typedef float elem_t;
#else
typedef unsigned short elem_t;
#endif
typedef float out_t;
#define GT_COMPLEX 0
#define GT_REDUCED 1
#endif
#ifndef GT_REDUCED
#define GT_REDUCED 0
typedef elem_t out_t;  // C's element: the inputs' own
#endif
#if GT_REDUCED && !GT_MMA
#error "FP16, BF16 and TF32 inputs need the mma family (GT_MMA)"
#endif

#ifndef VEC_S
#define VEC_S 1
#endif
#ifndef GT_MMA
#define GT_MMA 0
#endif
#ifndef ASYNC_COPY
#define ASYNC_COPY 0
#endif
#ifndef CROSS_BARRIER
#define CROSS_BARRIER 0
#endif
#if CROSS_BARRIER && !ASYNC_COPY
#error "CROSS_BARRIER needs ASYNC_COPY"
#endif
#if ASYNC_COPY && STAGES < 2
#error "ASYNC_COPY needs STAGES >= 2: a tile's copies land while the one before it computes"
#endif
#ifndef VEC_C
#define VEC_C 0
#endif
#ifndef LDMATRIX
#define LDMATRIX 0
#endif
#if LDMATRIX && !GT_REDUCED
#error "LDMATRIX reads FP16, BF16 or TF32 fragments only"
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

// A shared-memory pointer as the 32-bit shared address cp.async and ldmatrix take.
__device__ __forceinline__ unsigned gt_shared_address(const elem_t* p) {
  unsigned addr;
  asm("{ .reg .u64 q; cvta.to.shared.u64 q, %1; cvt.u32.u64 %0, q; }" : "=r"(addr) : "l"(p));
  return addr;
}

// A 32-bit word that only exists once x is loaded: what a barrier is made to wait for.
__device__ __forceinline__ unsigned gt_word(unsigned x) {
  return x;
}
__device__ __forceinline__ unsigned gt_word(float x) {
  return __float_as_uint(x);
}
__device__ __forceinline__ unsigned gt_word(double x) {
  return unsigned(__double2hiint(x));
}
__device__ __forceinline__ unsigned gt_word(float2 x) {
  return gt_word(x.x) | gt_word(x.y);
}
__device__ __forceinline__ unsigned gt_word(double2 x) {
  return gt_word(x.x) | gt_word(x.y);
}
template <class T, int N>
__device__ __forceinline__ unsigned gt_word(const T (&x)[N]) {
  unsigned w = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) w |= gt_word(x[i]);
  return w;
}

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

// Zero of C's element type.
__device__ __forceinline__ out_t gt_zero_out() {
  return out_t{};
}

__device__ __forceinline__ elem_t gt_conj(elem_t a) {
#if GT_COMPLEX
  a.y = -a.y;
#endif
  return a;
}

// c += a * b, on C's element type (the inputs' own but for H, B, T).
__device__ __forceinline__ void gt_fma(out_t& c, out_t a, out_t b) {
#if GT_COMPLEX
  c.x = fma(a.x, b.x, c.x);
  c.x = fma(-a.y, b.y, c.x);
  c.y = fma(a.x, b.y, c.y);
  c.y = fma(a.y, b.x, c.y);
#else
  c = fma(a, b, c);
#endif
}

__device__ __forceinline__ out_t gt_mul(out_t a, out_t b) {
#if GT_COMPLEX
  out_t r;
  r.x = a.x * b.x - a.y * b.y;
  r.y = a.x * b.y + a.y * b.x;
  return r;
#else
  return a * b;
#endif
}

__device__ __forceinline__ bool gt_is_zero(out_t a) {
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
__device__ __forceinline__ void gt_atomic_add(out_t* out, out_t v) {
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
extern "C" __global__ void gemmtune_scale_c(int M, int N, out_t beta, out_t* const* C_array,
                                            long long ldc) {
  out_t* C = C_array[blockIdx.z];
#else
extern "C" __global__ void gemmtune_scale_c(int M, int N, out_t beta, out_t* C, long long ldc,
                                            long long stride_c) {
  C += blockIdx.z * stride_c;
#endif
  const long long total = (long long)M * N;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    out_t* out = C + e % M + (e / M) * ldc;
    *out = gt_is_zero(beta) ? gt_zero_out() : gt_mul(beta, *out);
  }
}
#endif
