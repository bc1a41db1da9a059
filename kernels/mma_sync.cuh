// The mma family's instructions: mma.sync on tensor cores and the shapes of their fragments.
// D and Z (FP64): m8n8k4 (GT_MMA 1) or m16n8k4, m16n8k8, m16n8k16 (GT_MMA 2, 3, 4). H and B
// (FP16, BF16 inputs, FP32 accumulators): m16n8k8 or m16n8k16 (3, 4). T (TF32): m16n8k4 or
// m16n8k8 (2, 3).
#if !GT_MMA || (GT_PREC != 1 && GT_PREC != 3 && !GT_REDUCED)
#error "GT_MMA needs D, Z, H, B or T"
#endif
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
// an M-major A (N-major B) tile gives them up as 16-byte vectors. (The 16-bit and TF32 shapes
// hold their slots in another order, but the same bijection argument holds: see gt_mma16.)
#define MMA_Q (MMA_K / 4)
#define MMA_VEC_A                                                                           \
  (!GT_COMPLEX && !LA_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)
#define MMA_VEC_B                                                                           \
  (!GT_COMPLEX && !LB_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)

#if GT_REDUCED
// A lane's MMA_Q values of one row (A) or column (B) as 32-bit words: two 16-bit values a word
// (H, B), one TF32 value a word (T). In a tile stored [M][K] ([N][K]) they are contiguous in k;
// a tile stored k-major ([K][M], LA_KMAJOR; [K][N], LB_KMAJOR: the stored order of op N A and
// op T B, which cp.async copies as it is) gives them up by ldmatrix.trans (H, B) or one TF32
// word at a time.
#if GT_PREC == 6
#define MMA_WORDS MMA_Q
#else
#define MMA_WORDS (MMA_Q / 2)
#endif
#if GT_MMA < 2 || (GT_PREC == 6 && GT_MMA > 3) || (GT_PREC != 6 && GT_MMA < 3)
#error "H and B take GT_MMA 3 or 4, T takes 2 or 3"
#endif
#if (BLK_K + PAD) % MMA_Q != 0
#error "FP16, BF16 and TF32 fragments need shared rows of whole fragments"
#endif
#if (LA_KMAJOR || LB_KMAJOR) && GT_PREC != 6 && !LDMATRIX
#error "FP16 and BF16 fragments of k-major tiles are read by ldmatrix.trans only"
#endif
#if GT_PREC == 4
#define GT_MMA_TYPE "f16"
#elif GT_PREC == 5
#define GT_MMA_TYPE "bf16"
#else
#define GT_MMA_TYPE "tf32"
#endif
#if MMA_K == 16
#define GT_MMA_K_TEXT "16"
#elif MMA_K == 8
#define GT_MMA_K_TEXT "8"
#else
#define GT_MMA_K_TEXT "4"
#endif
#define GT_MMA_INSTR \
  "mma.sync.aligned.m16n8k" GT_MMA_K_TEXT ".row.col.f32." GT_MMA_TYPE "." GT_MMA_TYPE ".f32 "
// One m16 mma: C rows r and r + 8 (c0, c1 and c2, c3, column pairs) += A rows r (a0) and r + 8
// (a1) times B (b). Word w of a lane's fragment is the mma's register of A for k-half w (rows r
// and r + 8 interleaved, as the instruction lists them) and B's register w; A and B map the
// lane's shared k onto the same k slots, so the sum is unchanged.
__device__ __forceinline__ void gt_mma16(float& c0, float& c1, float& c2, float& c3,
                                         const unsigned (&a0)[MMA_WORDS],
                                         const unsigned (&a1)[MMA_WORDS],
                                         const unsigned (&b)[MMA_WORDS]) {
#if MMA_WORDS == 2
  asm(GT_MMA_INSTR "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a0[0]), "r"(a1[0]), "r"(a0[1]), "r"(a1[1]), "r"(b[0]), "r"(b[1]));
#else
  asm(GT_MMA_INSTR "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a0[0]), "r"(a1[0]), "r"(b[0]));
#endif
}
// A TF32 word rounded to nearest in place, as cuBLAS's TF32 mode rounds its inputs (FP16 and
// BF16 words are left as they are).
__device__ __forceinline__ void gt_round_tf32(unsigned& w) {
#if GT_PREC == 6
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(w) : "f"(__uint_as_float(w)));
#endif
}
// A lane's words of one fragment row from the shared tile at p (MMA_Q values, contiguous in k).
__device__ __forceinline__ void gt_load_words(unsigned (&w)[MMA_WORDS], const elem_t* p) {
#if MMA_WORDS == 2
  const uint2 v = *reinterpret_cast<const uint2*>(p);
  w[0] = v.x;
  w[1] = v.y;
#else
  w[0] = *reinterpret_cast<const unsigned*>(p);
#endif
#pragma unroll
  for (int q = 0; q < MMA_WORDS; ++q) gt_round_tf32(w[q]);
}
#if LDMATRIX
// Elements of k in one row of an 8 x 8 matrix of 16-bit values: 8 (H, B) or 4 (T).
#if GT_PREC == 6
#define LDM_K 4
#else
#define LDM_K 8
#endif
#if (BLK_K + PAD) % LDM_K != 0 || (LA_KMAJOR && (BLK_M + PAD) % LDM_K != 0) || \
    (LB_KMAJOR && (BLK_N + PAD) % LDM_K != 0)
#error "LDMATRIX needs shared rows of whole 16-byte groups"
#endif
#if GT_PREC == 6 && (LA_KMAJOR || LB_KMAJOR)
#error "TF32 fragments of k-major tiles are read a word at a time, not by ldmatrix.trans"
#endif
// Word w of an A row tile (B column tile) is the 8 x 8 matrix of its rows at k + w * LDM_K: lane l
// receives row l/4, 16-bit values 2(l%4) and 2(l%4) + 1 (one TF32 value, l%4), which is the mma's
// own fragment layout. Lane l gives the address of row l%8 of matrix l/8 (x4), of matrix
// (l/8)%2 (x2), or of the one matrix (x1), as a 32-bit shared address (GT_SHARED32), so
// that the instructions of one step differ by constants the compiler folds into their addresses.
// TRANS: the 8 x 8 matrices are stored transposed (rows of k, a k-major tile), and lane l still
// receives row l/4 of the fragment's matrix, 16-bit values of k 2(l%4) and 2(l%4) + 1.
template <bool TRANS>
__device__ __forceinline__ void gt_ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2,
                                               unsigned& r3, unsigned row) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(row));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(row));
}
template <bool TRANS>
__device__ __forceinline__ void gt_ldmatrix_x2(unsigned& r0, unsigned& r1, unsigned row) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r0), "=r"(r1)
                 : "r"(row));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r0), "=r"(r1)
                 : "r"(row));
}
template <bool TRANS>
__device__ __forceinline__ void gt_ldmatrix_x1(unsigned& r0, unsigned row) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(r0)
                 : "r"(row));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(row));
}
#endif
#define GT_MMA_TILE(P, A_, B_)                                                                 \
  gt_mma16(acc[i][2 * j] P, acc[i][2 * j + 1] P, acc[i + 1][2 * j] P, acc[i + 1][2 * j + 1] P, \
           A_[i], A_[i + 1], B_[j])
#define GT_MMA_ROWS 2
#elif GT_MMA >= 2
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
