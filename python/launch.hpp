// The runtime's gemm() behind gemmtune.gemm(): column-major BLAS arguments derived from the
// arrays, device pointers as integers, on the arrays' CUDA device.
#pragma once

#include <cstdint>

namespace gemmtune::python {

struct ColumnMajorCall {
  char precision = 's';  // s, d, c, z; h, b, t (tensor-core inputs, FP32 C)
  char op_a = 'n', op_b = 'n';
  std::int64_t m = 0, n = 0, k = 0;
  double alpha_re = 1, alpha_im = 0;
  std::uintptr_t a = 0;
  std::int64_t lda = 0;
  std::uintptr_t b = 0;
  std::int64_t ldb = 0;
  double beta_re = 0, beta_im = 0;
  std::uintptr_t c = 0;
  std::int64_t ldc = 0;
  std::uintptr_t stream = 0;
  int device = 0;
};

// Switches the calling thread to call.device when it is on another (the runtime dispatches on
// the current device), then launches; InputError names a bad precision, op or device.
void launch(const ColumnMajorCall& call);

}  // namespace gemmtune::python
