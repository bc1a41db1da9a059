// Problem: the GEMM call as BLAS sees it, and the checks BLAS would make.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include "core/core.hpp"

namespace gemmtune {

namespace {
// The letters of Precision and Op, in their enums' order.
constexpr std::string_view kPrecisionLetters = "SDCZHBT", kOpLetters = "NTC";

// The index of a one-letter text (either case) in letters, or npos.
size_t letter_index(std::string_view text, std::string_view letters) {
  return text.size() == 1 ? letters.find(char(std::toupper(static_cast<unsigned char>(text[0]))))
                          : std::string_view::npos;
}
}  // namespace

char to_char(Precision p) {
  return kPrecisionLetters[static_cast<size_t>(p)];
}
char to_char(Op op) {
  return kOpLetters[static_cast<size_t>(op)];
}

const char* to_string(BatchKind kind) {
  switch (kind) {
    case BatchKind::PointerArray:
      return "pointer";
    case BatchKind::Variable:
      return "variable";
    case BatchKind::Strided:
      break;
  }
  return "strided";
}

BatchKind parse_batch_kind(std::string_view text) {
  if (text == "strided") return BatchKind::Strided;
  if (text == "pointer" || text == "pointer-array") return BatchKind::PointerArray;
  if (text == "variable" || text == "vbatched") return BatchKind::Variable;
  throw InputError("unknown batch kind '" + std::string(text) +
                   "': expected strided, pointer or variable");
}

Precision parse_precision(std::string_view text) {
  const size_t i = letter_index(text, kPrecisionLetters);
  if (i == std::string_view::npos)
    throw InputError("precision '" + std::string(text) + "' is not one of s, d, c, z, h, b, t");
  return static_cast<Precision>(i);
}

Op parse_op(std::string_view text) {
  const size_t i = letter_index(text, kOpLetters);
  if (i == std::string_view::npos)
    throw InputError("op '" + std::string(text) + "' is not one of n, t, c");
  return static_cast<Op>(i);
}

int element_bytes(Precision p) {
  switch (p) {
    case Precision::S:
      return 4;
    case Precision::D:
      return 8;
    case Precision::C:
      return 8;
    case Precision::Z:
      return 16;
    case Precision::H:
    case Precision::B:
      return 2;
    case Precision::T:
      return 4;
  }
  return 0;
}
int c_element_bytes(Precision p) {
  return is_reduced(p) ? 4 : element_bytes(p);
}
int real_bytes(Precision p) {
  return is_double(p) ? 8 : 4;
}
bool is_reduced(Precision p) {
  return p == Precision::H || p == Precision::B || p == Precision::T;
}
bool is_complex(Precision p) {
  return p == Precision::C || p == Precision::Z;
}
bool is_double(Precision p) {
  return p == Precision::D || p == Precision::Z;
}
int fmas_per_madd(Precision p) {
  return is_complex(p) ? 4 : 1;
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    throw InputError(std::string(what) + " '" + std::string(text) + "' is not an integer");
  return value;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

double Problem::flops() const {
  return 2.0 * fmas_per_madd(precision) * double(m) * double(n) * double(k) * double(batch);
}

double Problem::min_bytes() const {
  const double e = element_bytes(precision), ec = c_element_bytes(precision);
  const bool reads_c = beta.re != 0.0 || beta.im != 0.0;
  return double(batch) * (e * (double(m) * double(k) + double(k) * double(n)) +
                          ec * double(m) * double(n) * (reads_c ? 2 : 1));
}

Problem Problem::normalized() const {
  Problem p = *this;
  if (p.lda == 0) p.lda = std::max<std::int64_t>(1, p.rows_a());
  if (p.ldb == 0) p.ldb = std::max<std::int64_t>(1, p.rows_b());
  if (p.ldc == 0) p.ldc = std::max<std::int64_t>(1, p.m);
  p.validate();
  return p;
}

void Problem::validate() const {
  // Conditions first, messages only on failure: gemm() validates every call.
  constexpr std::int64_t kMaxDim = std::int64_t(1) << 31;  // keeps kernel index math in range
  if (m < 1) throw InputError("M = " + std::to_string(m) + " is invalid: M must be >= 1");
  if (n < 1) throw InputError("N = " + std::to_string(n) + " is invalid: N must be >= 1");
  if (k < 1) throw InputError("K = " + std::to_string(k) + " is invalid: K must be >= 1");
  if (m >= kMaxDim || n >= kMaxDim || k >= kMaxDim)
    throw InputError("dimensions must be below 2^31 (got M=" + std::to_string(m) +
                     ", N=" + std::to_string(n) + ", K=" + std::to_string(k) + ")");
  if (batch < 1)
    throw InputError("batch = " + std::to_string(batch) + " is invalid: batch must be >= 1");
  if (batch > 65535)
    throw InputError("batch = " + std::to_string(batch) +
                     " exceeds 65535, the most grid.z blocks one launch can have");
  if (lda < rows_a())
    throw InputError("lda = " + std::to_string(lda) + " is smaller than the rows of A (" +
                     std::to_string(rows_a()) + " for op(A) = " + to_char(op_a) + ")");
  if (ldb < rows_b())
    throw InputError("ldb = " + std::to_string(ldb) + " is smaller than the rows of B (" +
                     std::to_string(rows_b()) + " for op(B) = " + to_char(op_b) + ")");
  if (ldc < m)
    throw InputError("ldc = " + std::to_string(ldc) + " is smaller than M = " + std::to_string(m));
  if (!is_complex(precision)) {
    if (op_a == Op::C || op_b == Op::C)
      throw InputError(std::string("op 'c' (conjugate transpose) needs a complex precision, got ") +
                       to_char(precision));
    if (alpha.im != 0.0 || beta.im != 0.0)
      throw InputError("alpha and beta must be real for a real precision");
  }
}

Problem make_problem(Precision precision, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int64_t batch) {
  Problem p;
  p.precision = precision;
  p.op_a = op_a;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p.normalized();
}

std::string Problem::shape_id() const {
  std::ostringstream s;
  s << char(std::tolower(to_char(precision))) << '_' << char(std::tolower(to_char(op_a)))
    << char(std::tolower(to_char(op_b))) << '_' << m << 'x' << n << 'x' << k << "_b" << batch;
  return s.str();
}

}  // namespace gemmtune
