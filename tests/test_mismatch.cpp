// Where a wrong C differs from its reference: the elements and the kernel's C tiles named in a
// failed verification's message.
#include <cmath>
#include <string>
#include <vector>

#include "profiler/profiler.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {
// A reference of distinct values in C's layout (ldc rows a column, batches stride_c apart).
std::vector<double> reference_of(const Problem& p, int parts) {
  std::vector<double> c(size_t(p.stride_c() * p.batch * parts), 0.0);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 1.0 + double(i % 7);
  return c;
}
}  // namespace

TEST_CASE("a mismatch names its elements and the C tiles they lie in", "[mismatch]") {
  Problem p = make_problem(Precision::D, Op::T, Op::N, 40, 70, 16);
  p.ldc = 45;  // padded: rows 40..44 of each column are outside C and never compared
  const std::vector<double> want = reference_of(p, 1);
  std::vector<double> got = want;
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = p.m; i < p.ldc; ++i) got[size_t(j * p.ldc + i)] = 1e300;
  CHECK_THAT(locate_mismatch(got.data(), want.data(), p, 16, 32, 1e-12),
             Catch::Contains("0 of 2800 elements") && Catch::Contains("in 0 of 9 C tiles"));

  // Two elements of the interior tile (1, 0) and a run in the last tile (2, 2).
  got[size_t(5 * p.ldc + 17)] += 0.1;  // 5 + 0.1: digits past the sixth show the full precision
  got[size_t(9 * p.ldc + 30)] -= 0.05;
  for (std::int64_t j = 64; j < 70; ++j) got[size_t(j * p.ldc + 39)] = std::nan("");
  const std::string where = locate_mismatch(got.data(), want.data(), p, 16, 32, 1e-12);
  // Each named tile's element furthest off, in full precision (the first of a tie; an unwritten
  // NaN counts as furthest off).
  CHECK_THAT(where, Catch::Contains("8 of 2800 elements") &&
                        Catch::Contains("in 2 of 9 C tiles of 16x32") &&
                        Catch::Contains("tile (1, 0) 2 at rows 17-30, columns 5-9, worst (17, 5) "
                                        "5.0999999999999996 for 5;") &&
                        Catch::Contains("tile (2, 2) 6 at rows 39-39, columns 64-69 (edge), worst "
                                        "(39, 64) nan for "));
  CHECK_THAT(where, !Catch::Contains("columns 5-9 (edge)"));
}

TEST_CASE("a mismatch in complex single precision names the batch's matrix", "[mismatch]") {
  const Problem p = make_problem(Precision::C, Op::N, Op::N, 8, 8, 4, 3);
  const std::vector<double> want = reference_of(p, 2);
  std::vector<float> got(want.begin(), want.end());
  got[size_t(((2 * p.stride_c()) + 3 * p.ldc + 6) * 2 + 1)] += 1.0f;  // an imaginary part
  // Float rounding of the reference stays far under a single-precision tolerance.
  const std::string where = locate_mismatch(got.data(), want.data(), p, 4, 4, 1e-5);
  CHECK_THAT(where,
             Catch::Contains("1 of 192 elements") && Catch::Contains("in 1 of 12 C tiles of 4x4") &&
                 Catch::Contains("tile (1, 0) of matrix 2 1 at rows 6-6, columns 3-3 (edge), "
                                 "worst (6, 3) imaginary "));
  CHECK_THROWS_WITH(locate_mismatch(got.data(), want.data(), p, 0, 4, 1e-5),
                    Catch::Contains("got 0x4"));
}
