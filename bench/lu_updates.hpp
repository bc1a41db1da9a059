// The arithmetic of a blocked right-looking LU that needs no GPU: the trailing updates as GEMM
// problems (what lu_client sends to gemmtune::gemm, and what a workload file should tune), and
// the translation of cuSOLVER's per-panel pivots into LAPACK's whole-matrix numbering.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/core.hpp"

namespace gemmtune::lu {

// One factorization: its precision, order and block size (panel width).
struct Blocking {
  Precision precision = Precision::D;
  std::int64_t n = 0, nb = 0;
};

inline void check_blocking(std::int64_t n, std::int64_t nb) {
  if (n < 1) throw InputError("LU order N = " + std::to_string(n) + " must be at least 1");
  if (nb < 1) throw InputError("LU block size nb = " + std::to_string(nb) + " must be at least 1");
}

// Panels of nb columns; the last is narrower when nb does not divide n.
inline std::int64_t panel_count(std::int64_t n, std::int64_t nb) {
  check_blocking(n, nb);
  return (n + nb - 1) / nb;
}

// After the panel at column j: A22 -= L21 * U12, with A22 the rows and columns from j + nb on,
// every operand inside the n x n matrix (leading dimension n), so alpha -1 and beta 1. The last
// panel leaves no trailing matrix, so every update has k = nb.
inline std::vector<Problem> update_problems(Precision precision, std::int64_t n, std::int64_t nb) {
  check_blocking(n, nb);
  std::vector<Problem> out;
  for (std::int64_t j = 0; j + nb < n; j += nb) {
    Problem p;
    p.precision = precision;
    p.m = p.n = n - j - nb;
    p.k = nb;
    p.lda = p.ldb = p.ldc = n;
    p.alpha = {-1.0, 0.0};
    p.beta = {1.0, 0.0};
    p.validate();
    out.push_back(p);
  }
  return out;
}

// Real floating-point operations of all the updates of one factorization.
inline double update_flops(std::int64_t n, std::int64_t nb) {
  double flops = 0;
  for (const Problem& p : update_problems(Precision::D, n, nb)) flops += p.flops();
  return flops;
}

// A `gemmtune tune --problems` file of the updates of these factorizations: one line per
// distinct shape in the command line's syntax, weighted by how often one factorization of each
// runs it.
inline std::string workload_text(const std::vector<Blocking>& runs) {
  std::vector<std::pair<Problem, int>> counted;
  std::string header = "# trailing updates A22 -= L21 * U12 of blocked LU:";
  for (const Blocking& b : runs) {
    header += std::string(" ") + char(std::tolower(to_char(b.precision))) +
              " N=" + std::to_string(b.n) + " nb=" + std::to_string(b.nb) + ";";
    for (const Problem& p : update_problems(b.precision, b.n, b.nb)) {
      auto it = counted.begin();
      while (it != counted.end() && !(it->first == p)) ++it;
      if (it == counted.end())
        counted.emplace_back(p, 1);
      else
        ++it->second;
    }
  }
  header.back() = '\n';
  std::string text = header;
  for (const auto& [p, count] : counted)
    text += problem_options(p) + " --weight " + std::to_string(count) + "\n";
  return text;
}

// cusolverDn<t>getrf numbers a panel's pivots from 1 at the panel's first row (row j of the
// matrix when the panel starts at column j); LAPACK numbers them from 1 at the matrix's first row.
// Throws InputError naming a pivot that does not lie at or below its own row within the panel.
inline std::vector<int> global_pivots(const std::vector<int>& panel_pivots, std::int64_t nb) {
  const auto n = std::int64_t(panel_pivots.size());
  check_blocking(n, nb);
  std::vector<int> out(panel_pivots.size());
  for (std::int64_t row = 0; row < n; ++row) {
    const std::int64_t j = row / nb * nb;  // the panel's first row
    const std::int64_t pivot = panel_pivots[size_t(row)];
    if (pivot < row - j + 1 || pivot > n - j)
      throw InputError("pivot " + std::to_string(pivot) + " of row " + std::to_string(row) +
                       " (panel at row " + std::to_string(j) + ") is outside " +
                       std::to_string(row - j + 1) + ".." + std::to_string(n - j));
    out[size_t(row)] = int(pivot + j);
  }
  return out;
}

// The permutation that LAPACK's whole-matrix pivots (1-based, applied in order from the first row,
// as laswp does with k1 = 1, k2 = N) make: row i of P A is row out[i] (0-based) of A. A check of
// P A that needs no laswp. Throws InputError naming a pivot outside 1..N.
inline std::vector<std::int64_t> row_permutation(const std::vector<int>& pivots) {
  const auto n = std::int64_t(pivots.size());
  std::vector<std::int64_t> out(pivots.size());
  for (std::int64_t i = 0; i < n; ++i) out[size_t(i)] = i;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t pivot = pivots[size_t(i)];
    if (pivot < 1 || pivot > n)
      throw InputError("pivot " + std::to_string(pivot) + " of row " + std::to_string(i) +
                       " is outside 1.." + std::to_string(n));
    std::swap(out[size_t(i)], out[size_t(pivot - 1)]);
  }
  return out;
}

}  // namespace gemmtune::lu
