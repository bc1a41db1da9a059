// gemmtune.gemm's short path for plain torch tensors, in C++: host time per call is the point,
// and each tensor attribute read from the interpreter costs as much as the read itself.
#pragma once

#include <nanobind/nanobind.h>

namespace gemmtune::python {

// torch_register(tensor_type, [(dtype, letter)], current_raw_stream, launch=None) and
// torch_gemm(a, b, c, alpha, beta, trans_a, trans_b) -> c, or None for anything the short path
// does not take (the general path then handles it or words the error), nothing launched or
// allocated. `launch`, for tests, receives the launch's arguments instead of the runtime.
void define_torch_call(nanobind::module_& m);

}  // namespace gemmtune::python
