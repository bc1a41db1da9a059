// Renders the SIMT template for one configuration: a block of #defines, then the template.
#include <sstream>

#include "kernels/kernels.hpp"

namespace gemmtune {

extern const char* const kEmbeddedGemmSimt;  // generated from gemm_simt.cuh by CMake

const std::string& kernel_template() {
  static const std::string text(kEmbeddedGemmSimt);
  return text;
}

std::string render_source(const KernelConfig& c, Precision precision, Op op_a, Op op_b) {
  if (!is_complex(precision) && (op_a == Op::C || op_b == Op::C))
    throw InputError(std::string("op 'c' (conjugate transpose) needs a complex precision, got ") +
                     to_char(precision));
  std::ostringstream s;
  s << "// gemmtune kernel " << c.id() << "\n"
    << "// precision " << to_char(precision) << ", op(A) " << to_char(op_a) << ", op(B) "
    << to_char(op_b) << "\n";
  auto def = [&](const char* name, int value) { s << "#define " << name << ' ' << value << '\n'; };
  def("GT_PREC", static_cast<int>(precision));
  def("GT_OP_A", static_cast<int>(op_a));
  def("GT_OP_B", static_cast<int>(op_b));
  def("BLK_M", c.blk_m);
  def("BLK_N", c.blk_n);
  def("BLK_K", c.blk_k);
  def("DIM_X", c.dim_x);
  def("DIM_Y", c.dim_y);
  def("DIM_XA", c.dim_xa);
  def("DIM_YA", c.dim_ya);
  def("DIM_XB", c.dim_xb);
  def("DIM_YB", c.dim_yb);
  def("VEC_A", c.vec_a);
  def("VEC_B", c.vec_b);
  def("LA_KMAJOR", c.smem_a_kmajor);
  def("LB_KMAJOR", c.smem_b_kmajor);
  def("PAD", c.pad);
  def("PREFETCH", c.prefetch);
  def("STAGES", c.stages);
  def("UNROLL", c.unroll);
  def("EDGE_REDIRECT", static_cast<int>(c.edge));
  def("RASTER", c.raster);
  def("VEC_S", c.vec_s);
  def("GT_MMA", c.mma);
  def("ASYNC_COPY", c.async_copy);
  def("VEC_C", c.vec_c);
  if (c.shared32) def("LDS32", 1);  // only when set, so older kernels keep their cached cubins
  // Derived, so that the kernel and the model (predict's barrier wait) follow one rule.
  def("CROSS_BARRIER", c.fragments_cross_barrier() ? 1 : 0);
  // Only when set: unsplit kernels compile without the split-K pass (gemmtune_scale_c).
  if (c.splits() > 1) def("SPLIT_K", c.splits());
  s << kernel_template();
  return s.str();
}

}  // namespace gemmtune
