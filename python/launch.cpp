#include "python/launch.hpp"

#include <cuda_runtime.h>

#include <complex>
#include <string>
#include <string_view>

#include "runtime/runtime.hpp"

namespace gemmtune::python {
namespace {

template <typename T>
void typed_launch(const ColumnMajorCall& q, Op oa, Op ob, T alpha, T beta) {
  gemm(oa, ob, q.m, q.n, q.k, alpha, reinterpret_cast<const T*>(q.a), q.lda,
       reinterpret_cast<const T*>(q.b), q.ldb, beta, reinterpret_cast<T*>(q.c), q.ldc,
       reinterpret_cast<CudaStream>(q.stream));
}

}  // namespace

void launch(const ColumnMajorCall& q) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != q.device) {
    if (cudaSetDevice(q.device) != cudaSuccess)
      throw InputError("CUDA device " + std::to_string(q.device) +
                       " cannot be used: " + cudaGetErrorString(cudaGetLastError()));
  }
  const Op oa = parse_op(std::string_view(&q.op_a, 1));
  const Op ob = parse_op(std::string_view(&q.op_b, 1));
  switch (q.precision) {
    case 's':
      return typed_launch<float>(q, oa, ob, float(q.alpha_re), float(q.beta_re));
    case 'd':
      return typed_launch<double>(q, oa, ob, q.alpha_re, q.beta_re);
    case 'c':
      return typed_launch<std::complex<float>>(q, oa, ob, {float(q.alpha_re), float(q.alpha_im)},
                                               {float(q.beta_re), float(q.beta_im)});
    case 'z':
      return typed_launch<std::complex<double>>(q, oa, ob, {q.alpha_re, q.alpha_im},
                                                {q.beta_re, q.beta_im});
    case 'h':
    case 'b':
    case 't':
      // Tensor-core inputs (16-bit values for h and b, FP32 for t) with FP32 C.
      return gemm(parse_precision(std::string(1, q.precision)), oa, ob, q.m, q.n, q.k,
                  float(q.alpha_re), reinterpret_cast<const void*>(q.a), q.lda,
                  reinterpret_cast<const void*>(q.b), q.ldb, float(q.beta_re),
                  reinterpret_cast<float*>(q.c), q.ldc, reinterpret_cast<CudaStream>(q.stream));
    default:
      throw InputError(std::string("precision '") + q.precision +
                       "' is not one of s, d, c, z, h, b, t");
  }
}

}  // namespace gemmtune::python
