// BatchedData: a batch of matrices of their own shapes on the device, with an FP64 host reference
// per matrix, for verifying and timing pointer-array and variable-size kernels.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>

#include "profiler/cuda_handles.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

using gpu::check;

namespace {

using Complex = std::complex<double>;

constexpr std::int64_t kAlignElements = 256;  // bytes a non-uniform batch aligns each matrix to

// Elements of A, B, C of one matrix (an empty one holds none).
std::int64_t a_elements(const MatrixShape& s, Op op) {
  return s.lda * (op == Op::N ? s.k : s.m);
}
std::int64_t b_elements(const MatrixShape& s, Op op) {
  return s.ldb * (op == Op::N ? s.n : s.k);
}
std::int64_t c_elements(const MatrixShape& s) {
  return s.ldc * s.n;
}

// op(X)(i, j) of a column-major X.
Complex op_at(const Complex* x, std::int64_t ld, Op op, std::int64_t i, std::int64_t j) {
  if (op == Op::N) return x[i + j * ld];
  const Complex v = x[j + i * ld];
  return op == Op::C ? std::conj(v) : v;
}

}  // namespace

void reference_gemm(Op op_a, Op op_b, const MatrixShape& s, Scalar alpha, Scalar beta,
                    const Complex* a, const Complex* b, Complex* c) {
  const Complex alpha_c(alpha.re, alpha.im), beta_c(beta.re, beta.im);
  for (std::int64_t j = 0; j < s.n; ++j)
    for (std::int64_t i = 0; i < s.m; ++i) {
      Complex sum = 0;
      for (std::int64_t p = 0; p < s.k; ++p)
        sum += op_at(a, s.lda, op_a, i, p) * op_at(b, s.ldb, op_b, p, j);
      Complex& out = c[i + j * s.ldc];
      out = alpha_c * sum + (beta_c == Complex(0) ? Complex(0) : beta_c * out);
    }
}

struct BatchedData::Impl {
  Precision precision = Precision::S;
  Op op_a = Op::N, op_b = Op::N;
  Scalar alpha, beta;
  std::vector<MatrixShape> shapes;
  bool uniform = true;
  // Element offsets of each matrix in its buffer.
  std::vector<std::int64_t> off_a, off_b, off_c;
  std::vector<Complex> host_c0, reference;  // the whole C buffer, as complex values
  gpu::DeviceBuffer<unsigned char> a, b, c, c0;
  gpu::DeviceBuffer<const void*> ptr_a, ptr_b, ptr_c;
  gpu::DeviceBuffer<int> sizes;  // m, n, k, lda, ldb, ldc: batch ints each
  BatchArrays arrays;

  std::size_t bytes(std::int64_t elements) const {
    return std::size_t(std::max<std::int64_t>(elements, 1)) * std::size_t(element_bytes(precision));
  }
  // Offsets of matrices of `count(i)` elements: strided when uniform, else 256-byte aligned.
  template <typename Count>
  std::int64_t lay_out(std::vector<std::int64_t>& offsets, Count count) const {
    const std::int64_t align = kAlignElements / element_bytes(precision);
    std::int64_t total = 0;
    for (const MatrixShape& s : shapes) {
      offsets.push_back(total);
      total += uniform ? count(s) : (count(s) + align - 1) / align * align;
    }
    return total;
  }
  // Random values for `count` elements, rounded to the precision, uploaded; the host copy
  // returned as complex values.
  std::vector<Complex> upload(gpu::DeviceBuffer<unsigned char>& out, std::int64_t count,
                              std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<Complex> values(std::size_t(std::max<std::int64_t>(count, 0)));
    const bool complex = is_complex(precision), dbl = is_double(precision);
    for (Complex& v : values) {
      const double re = dist(rng), im = complex ? dist(rng) : 0.0;
      v = dbl ? Complex(re, im) : Complex(double(float(re)), double(float(im)));
    }
    out = gpu::DeviceBuffer<unsigned char>(bytes(count));
    std::vector<unsigned char> raw(out.bytes(), 0);
    const int parts = complex ? 2 : 1;
    for (std::size_t i = 0; i < values.size(); ++i)
      for (int part = 0; part < parts; ++part) {
        const double x = part ? values[i].imag() : values[i].real();
        if (dbl)
          std::memcpy(raw.data() + (i * parts + part) * 8, &x, 8);
        else {
          const float f = float(x);
          std::memcpy(raw.data() + (i * parts + part) * 4, &f, 4);
        }
      }
    check(cudaMemcpy(out.get(), raw.data(), raw.size(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    return values;
  }
};

BatchedData::BatchedData(Precision precision, Op op_a, Op op_b, std::vector<MatrixShape> shapes,
                         Scalar alpha, Scalar beta, unsigned seed)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  if (shapes.empty()) throw InputError("a batch needs at least one matrix");
  if (is_reduced(precision))
    throw InputError(
        std::string("pointer-array and variable-size batches take s, d, c or z, not ") +
        char(std::tolower(to_char(precision))) + " (FP16, BF16 and TF32 run as strided batches)");
  d.precision = precision;
  d.op_a = op_a;
  d.op_b = op_b;
  d.alpha = alpha;
  d.beta = beta;
  for (MatrixShape& s : shapes) {
    if (s.m < 0 || s.n < 0 || s.k < 0)
      throw InputError("matrix sizes must be >= 0 (got " + std::to_string(s.m) + "x" +
                       std::to_string(s.n) + "x" + std::to_string(s.k) + ")");
    if (s.lda == 0) s.lda = std::max<std::int64_t>(1, op_a == Op::N ? s.m : s.k);
    if (s.ldb == 0) s.ldb = std::max<std::int64_t>(1, op_b == Op::N ? s.k : s.n);
    if (s.ldc == 0) s.ldc = std::max<std::int64_t>(1, s.m);
  }
  d.shapes = std::move(shapes);
  d.uniform = std::all_of(d.shapes.begin(), d.shapes.end(),
                          [&](const MatrixShape& s) { return s == d.shapes.front(); });
  const std::int64_t total_a =
      d.lay_out(d.off_a, [&](const MatrixShape& s) { return a_elements(s, op_a); });
  const std::int64_t total_b =
      d.lay_out(d.off_b, [&](const MatrixShape& s) { return b_elements(s, op_b); });
  const std::int64_t total_c = d.lay_out(d.off_c, c_elements);
  std::mt19937_64 rng(seed);
  const std::vector<Complex> host_a = d.upload(d.a, total_a, rng);
  const std::vector<Complex> host_b = d.upload(d.b, total_b, rng);
  d.host_c0 = d.upload(d.c0, total_c, rng);
  d.c = gpu::DeviceBuffer<unsigned char>(d.c0.bytes());

  // Matrices on every hardware thread: each writes only its own C.
  d.reference = d.host_c0;
  parallel_for(d.shapes.size(), [&](std::size_t z, int) {
    reference_gemm(op_a, op_b, d.shapes[z], alpha, beta, host_a.data() + d.off_a[z],
                   host_b.data() + d.off_b[z], d.reference.data() + d.off_c[z]);
  });

  // Device arrays: pointers to each matrix, and the sizes as ints.
  const std::size_t batch = d.shapes.size();
  const std::size_t e = std::size_t(element_bytes(precision));
  std::vector<const void*> pa(batch), pb(batch), pc(batch);
  std::vector<int> sizes(6 * batch);
  for (std::size_t z = 0; z < batch; ++z) {
    const MatrixShape& s = d.shapes[z];
    pa[z] = d.a.get() + std::size_t(d.off_a[z]) * e;
    pb[z] = d.b.get() + std::size_t(d.off_b[z]) * e;
    pc[z] = d.c.get() + std::size_t(d.off_c[z]) * e;
    const std::int64_t values[6] = {s.m, s.n, s.k, s.lda, s.ldb, s.ldc};
    for (int f = 0; f < 6; ++f) {
      if (values[f] > 0x7fffffff) throw InputError("matrix sizes must fit an int");
      sizes[std::size_t(f) * batch + z] = int(values[f]);
    }
  }
  auto upload_array = [](auto& out, const auto& host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    out = gpu::DeviceBuffer<T>(host.size());
    check(cudaMemcpy(out.get(), host.data(), out.bytes(), cudaMemcpyHostToDevice),
          "cudaMemcpy H2D");
  };
  upload_array(d.ptr_a, pa);
  upload_array(d.ptr_b, pb);
  upload_array(d.ptr_c, pc);
  upload_array(d.sizes, sizes);
  d.arrays.a = d.ptr_a.get();
  d.arrays.b = d.ptr_b.get();
  d.arrays.c = d.ptr_c.get();
  const int* base = d.sizes.get();
  d.arrays.m = base;
  d.arrays.n = base + batch;
  d.arrays.k = base + 2 * batch;
  d.arrays.lda = base + 3 * batch;
  d.arrays.ldb = base + 4 * batch;
  d.arrays.ldc = base + 5 * batch;
}

BatchedData::~BatchedData() = default;

const std::vector<MatrixShape>& BatchedData::shapes() const {
  return impl_->shapes;
}
bool BatchedData::uniform() const {
  return impl_->uniform;
}
const BatchArrays& BatchedData::arrays() const {
  return impl_->arrays;
}

Problem BatchedData::call(BatchKind kind) const {
  const Impl& d = *impl_;
  Problem p;
  p.precision = d.precision;
  p.op_a = d.op_a;
  p.op_b = d.op_b;
  p.alpha = d.alpha;
  p.beta = d.beta;
  p.batch = std::int64_t(d.shapes.size());
  if (kind == BatchKind::Variable) {
    for (const MatrixShape& s : d.shapes) {
      p.m = std::max(p.m, s.m);
      p.n = std::max(p.n, s.n);
      p.k = std::max(p.k, s.k);
    }
    return p;
  }
  if (!d.uniform)
    throw InputError(std::string("a ") + to_string(kind) +
                     " batch needs matrices of one shape; this one's vary");
  const MatrixShape& s = d.shapes.front();
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.lda = s.lda;
  p.ldb = s.ldb;
  p.ldc = s.ldc;
  return p;
}

const void* BatchedData::a(std::size_t i) const {
  return impl_->a.get() + std::size_t(impl_->off_a.at(i)) * element_bytes(impl_->precision);
}
const void* BatchedData::b(std::size_t i) const {
  return impl_->b.get() + std::size_t(impl_->off_b.at(i)) * element_bytes(impl_->precision);
}
void* BatchedData::c(std::size_t i) const {
  return impl_->c.get() + std::size_t(impl_->off_c.at(i)) * element_bytes(impl_->precision);
}

double BatchedData::flops() const {
  double total = 0;
  for (const MatrixShape& s : impl_->shapes)
    total += 2.0 * fmas_per_madd(impl_->precision) * double(s.m) * double(s.n) * double(s.k);
  return total;
}

void BatchedData::reset_output(void* stream) const {
  const Impl& d = *impl_;
  const auto s = static_cast<cudaStream_t>(stream);
  if (d.beta.re == 0.0 && d.beta.im == 0.0)
    check(cudaMemsetAsync(d.c.get(), 0xFF, d.c.bytes(), s), "poison C");
  else
    check(cudaMemcpyAsync(d.c.get(), d.c0.get(), d.c.bytes(), cudaMemcpyDeviceToDevice, s),
          "restore C");
}

std::vector<double> BatchedData::errors() const {
  const Impl& d = *impl_;
  check(cudaDeviceSynchronize(), "the batched run");
  std::vector<unsigned char> raw(d.c.bytes());
  check(cudaMemcpy(raw.data(), d.c.get(), raw.size(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  const bool complex = is_complex(d.precision), dbl = is_double(d.precision);
  const int parts = complex ? 2 : 1;
  auto value = [&](std::int64_t index, int part) {
    const std::size_t at = std::size_t(index) * parts + std::size_t(part);
    if (dbl) {
      double x;
      std::memcpy(&x, raw.data() + at * 8, 8);
      return x;
    }
    float f;
    std::memcpy(&f, raw.data() + at * 4, 4);
    return double(f);
  };
  std::vector<double> out;
  for (std::size_t z = 0; z < d.shapes.size(); ++z) {
    const MatrixShape& s = d.shapes[z];
    double diff = 0, norm = 0;
    bool written = true;
    for (std::int64_t j = 0; j < s.n; ++j)
      for (std::int64_t i = 0; i < s.m; ++i) {
        const std::int64_t index = d.off_c[z] + i + j * s.ldc;
        const Complex want = d.reference[std::size_t(index)];
        const Complex got(value(index, 0), complex ? value(index, 1) : 0.0);
        written &= !std::isnan(got.real()) && !std::isnan(got.imag());
        diff += std::norm(got - want);
        norm += std::norm(want);
      }
    out.push_back(!written ? std::nan("") : norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff));
  }
  return out;
}

std::vector<Problem> matrix_problems(const Problem& like, const std::vector<MatrixShape>& shapes) {
  std::vector<Problem> out;
  for (const MatrixShape& x : shapes) {
    Problem p = like;
    p.m = x.m;
    p.n = x.n;
    p.k = x.k;
    out.push_back(p);
  }
  return out;
}

std::vector<MatrixShape> uniform_shapes(std::int64_t count, std::int64_t max_m, std::int64_t max_n,
                                        std::int64_t max_k, unsigned seed) {
  std::mt19937 rng(seed);
  auto draw = [&](std::int64_t max) {
    return std::uniform_int_distribution<std::int64_t>(1, max)(rng);
  };
  std::vector<MatrixShape> shapes;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t m = draw(max_m), n = draw(max_n), k = draw(max_k);
    shapes.push_back({m, n, k});
  }
  return shapes;
}

}  // namespace gemmtune
