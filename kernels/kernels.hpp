// gemmtune kernels: CUDA C++ source for one kernel configuration.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/core.hpp"

namespace gemmtune {

// The name of the kernel's entry point in every rendered source.
inline constexpr const char* kKernelEntry = "gemmtune_kernel";
// C = beta * C over the whole (batched) C: the pass before a split-K kernel's atomic sums; only
// in the modules of split-K configurations.
inline constexpr const char* kScaleEntry = "gemmtune_scale_c";

// The source of c's family after the #defines: its files of kernels/ (kernel_files), as shipped.
std::string kernel_template(const KernelConfig& c);

// Complete, self-contained source for one configuration of one precision and op shape, for a
// batch of `batch` kind (a strided one's source has no BATCH_MODE, as before the other kinds).
// Throws InputError when the op is not valid for the precision (conjugate on a real type), or
// for a split-K configuration of a variable-size batch (its matrices have no common K to split).
std::string render_source(const KernelConfig& config, Precision precision, Op op_a, Op op_b,
                          BatchKind batch = BatchKind::Strided);

// Kernel families: which files of kernels/ make the source of a configuration. A family is a
// warp tile (how a warp's fragments are read from shared memory and multiplied) and the main
// loops it runs (how the shared tiles are filled and the K steps run over them), as CUTLASS
// pairs its warp-level mma with mma_pipelined.h or mma_multistage.h; the prologue, the K step
// and the C store are every family's (kernels/families.cpp).

// A main loop: its rules (its name, the KernelConfig::async_copy value that selects it, what it
// admits; core/families.cpp) and its files.
struct MainLoop {
  const MainLoopRules* rules = nullptr;
  const char* helpers = "";     // file-scope device functions it calls ("" for none)
  const char* load_tiles = "";  // its tile phases, in the kernel's body before the warp tile
  const char* source = "";      // the loop, in the kernel's body after the K step
};

// A family: its rules (name, parameter bit, selection, what it admits) and its files.
struct Family {
  const FamilyRules* rules = nullptr;
  const char* helpers = "";    // file-scope device functions of its warp tile ("" for none)
  const char* warp_tile = "";  // in the kernel's body, before the K step
  std::vector<const MainLoop*> main_loops;
};

// Every family: exactly one selects any configuration.
const std::vector<Family>& kernel_families();
const std::vector<MainLoop>& main_loops();
const Family& family_of(const KernelConfig& c);
const MainLoop& main_loop_of(const KernelConfig& c);
// The tokens of the tuning parameters that shape the family's kernels.
std::vector<std::string> family_parameters(const Family& f);

// The files of c's source after its #defines, in order.
std::vector<std::string> kernel_files(const KernelConfig& c);
// The text of one file of kernels/, as embedded; throws std::out_of_range for another name.
const std::string& kernel_file(std::string_view name);

}  // namespace gemmtune
