// gemmtune kernels: CUDA C++ source for one kernel configuration.
#pragma once

#include <string>

#include "core/core.hpp"

namespace gemmtune {

// The name of the kernel's entry point in every rendered source.
inline constexpr const char* kKernelEntry = "gemmtune_kernel";
// C = beta * C over the whole (batched) C: the pass before a split-K kernel's atomic sums; only
// in the modules of split-K configurations.
inline constexpr const char* kScaleEntry = "gemmtune_scale_c";

// The parametrized template, as shipped (kernels/gemm_simt.cuh).
const std::string& kernel_template();

// Complete, self-contained source for one configuration of one precision and op shape, for a
// batch of `batch` kind (a strided one's source has no BATCH_MODE, as before the other kinds).
// Throws InputError when the op is not valid for the precision (conjugate on a real type), or
// for a split-K configuration of a variable-size batch (its matrices have no common K to split).
std::string render_source(const KernelConfig& config, Precision precision, Op op_a, Op op_b,
                          BatchKind batch = BatchKind::Strided);

}  // namespace gemmtune
