// The FP64 mma family's instructions: mma.sync on FP64 tensor cores, one m8n8k4 (GT_MMA 1) or
// m16n8 shape (GT_MMA 2, 3, 4), and the shapes of their fragments.
#if !GT_MMA || (GT_PREC != 1 && GT_PREC != 3)
#error "GT_MMA needs double precision, real or complex"
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
// an M-major A (N-major B) tile gives them up as 16-byte vectors.
#define MMA_Q (MMA_K / 4)
#define MMA_VEC_A                                                                           \
  (!GT_COMPLEX && !LA_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)
#define MMA_VEC_B                                                                           \
  (!GT_COMPLEX && !LB_KMAJOR && MMA_Q >= 2 && (BLK_K + PAD) % 2 == 0 && SA_SIZE % 2 == 0 && \
   SB_SIZE % 2 == 0)

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
