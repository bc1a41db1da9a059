// Renders the source of one configuration: a block of #defines, then its family's files.
#include <algorithm>
#include <sstream>

#include "kernels/kernels.hpp"

namespace gemmtune {

namespace {

// Derived, so that the kernel and the model (predict's barrier wait) follow one rule; it sits
// between the parameters' source ranks 24 and 26, where kernels have always had it.
constexpr int kCrossBarrierRank = 25;

}  // namespace

std::string kernel_template(const KernelConfig& c) {
  std::string text;
  for (const std::string& file : kernel_files(c)) text += kernel_file(file);
  return text;
}

std::string render_source(const KernelConfig& c, Precision precision, Op op_a, Op op_b,
                          BatchKind batch) {
  if (!is_complex(precision) && (op_a == Op::C || op_b == Op::C))
    throw InputError(std::string("op 'c' (conjugate transpose) needs a complex precision, got ") +
                     to_char(precision));
  if (batch == BatchKind::Variable && c.splits() > 1)
    throw InputError("split-K (SK" + std::to_string(c.split_k) + " in " + c.id() +
                     ") cannot run a variable-size batch: its matrices have no common K; use SK0");
  std::ostringstream s;
  s << "// gemmtune kernel " << c.id() << "\n"
    << "// precision " << to_char(precision) << ", op(A) " << to_char(op_a) << ", op(B) "
    << to_char(op_b) << "\n"
    << "// family " << family_of(c).rules->name << ", main loop " << main_loop_of(c).rules->name
    << "\n";
  auto def = [&](const char* name, int value) { s << "#define " << name << ' ' << value << '\n'; };
  def("GT_PREC", static_cast<int>(precision));
  def("GT_OP_A", static_cast<int>(op_a));
  def("GT_OP_B", static_cast<int>(op_b));
  // Only for the other kinds, so that strided kernels keep their source and cached cubins.
  if (batch != BatchKind::Strided) def("BATCH_MODE", static_cast<int>(batch));
  std::vector<std::pair<int, const TuningParameter*>> defines;
  for (const TuningParameter& p : tuning_parameters()) defines.emplace_back(p.source_rank, &p);
  defines.emplace_back(kCrossBarrierRank, nullptr);
  std::sort(defines.begin(), defines.end());
  for (const auto& [rank, p] : defines) {
    if (!p) {
      def("CROSS_BARRIER", c.fragments_cross_barrier() ? 1 : 0);
      // Only where it holds: every other kernel's defines stay as they were.
      if (fragments_by_ldmatrix(c, precision)) def("LDMATRIX", 1);
      continue;
    }
    const int value = p->get(c);
    // Set: only when set, so older kernels keep their cached cubins. Split: unsplit kernels
    // compile without the split-K pass (gemmtune_scale_c).
    if ((p->macro_when == MacroWhen::Set && value == 0) ||
        (p->macro_when == MacroWhen::Split && value <= 1))
      continue;
    def(p->macro, value);
  }
  s << kernel_template(c);
  return s.str();
}

}  // namespace gemmtune
