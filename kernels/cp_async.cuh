// The cp.async main loop's copies (sm_80+): global memory straight into shared, no registers.
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
