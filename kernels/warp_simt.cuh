// The SIMT warp tile, in the kernel's body: a thread owns THR_M x THR_N elements of C and runs
// their outer products one k at a time. Phases: load_fragments (shared -> registers, one k),
// multiply_fragments (the FMAs into the accumulators).
// Row of C (within the tile) of a thread's i-th element: groups of VEC_S rows, DIM_X apart.
#define ROW_OF(i) (((i) / VEC_S) * DIM_X * VEC_S + tx * VEC_S + (i) % VEC_S)
#define COL_OF(j) (((j) / VEC_S) * DIM_Y * VEC_S + ty * VEC_S + (j) % VEC_S)
// k of one step of the K loop: one k of the outer products.
#define STEP_K 1
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
