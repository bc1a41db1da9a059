// Where a wrong C differs from its reference, in the kernel's own C tiles: a race or an edge bug
// shows as a few tiles (which ones, and whether they lie on the last row or column of tiles),
// a wrong fragment layout as all of them.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

struct TileSpan {
  std::int64_t elements = 0;
  std::int64_t first_row = std::numeric_limits<std::int64_t>::max(), last_row = -1;
  std::int64_t first_col = std::numeric_limits<std::int64_t>::max(), last_col = -1;
  // The tile's element (or complex part) furthest off, with both values in full: enough to test
  // offline which stage or K step a racing warp read instead of its own.
  double worst_off = -1, worst_got = 0, worst_want = 0;
  std::int64_t worst_row = 0, worst_col = 0;
  int worst_part = 0;
};

template <typename T>
std::string locate(const T* got, const double* want, const Problem& p, int tile_m, int tile_n,
                   double tolerance) {
  if (tile_m <= 0 || tile_n <= 0)
    throw InputError("a C tile must have rows and columns, got " + std::to_string(tile_m) + "x" +
                     std::to_string(tile_n));
  const int parts = is_complex(p.precision) ? 2 : 1;
  const auto at = [&](std::int64_t z, std::int64_t i, std::int64_t j, int part) {
    return size_t(((z * p.stride_c() + j * p.ldc) + i) * parts + part);
  };
  // Elementwise threshold: the norm-wise tolerance applied to the reference's RMS element.
  double norm = 0;
  std::int64_t count = 0;
  for (std::int64_t z = 0; z < p.batch; ++z)
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i)
        for (int part = 0; part < parts; ++part, ++count)
          norm += want[at(z, i, j, part)] * want[at(z, i, j, part)];
  const double limit = tolerance * std::sqrt(norm / double(std::max<std::int64_t>(count, 1)));
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, TileSpan> tiles;
  std::int64_t wrong = 0;
  for (std::int64_t z = 0; z < p.batch; ++z)
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i) {
        // The element's part furthest off (NaN, unwritten, furthest of all) decides it.
        double off = -1;
        int part_off = 0;
        for (int part = 0; part < parts; ++part) {
          const double x = double(got[at(z, i, j, part)]), y = want[at(z, i, j, part)];
          const double d =
              std::isnan(x) ? std::numeric_limits<double>::infinity() : std::abs(x - y);
          if (d > off) {
            off = d;
            part_off = part;
          }
        }
        if (off <= limit) continue;
        ++wrong;
        TileSpan& t = tiles[{z, i / tile_m, j / tile_n}];
        ++t.elements;
        if (off > t.worst_off) {
          t.worst_off = off;
          t.worst_got = double(got[at(z, i, j, part_off)]);
          t.worst_want = want[at(z, i, j, part_off)];
          t.worst_row = i;
          t.worst_col = j;
          t.worst_part = part_off;
        }
        t.first_row = std::min(t.first_row, i);
        t.last_row = std::max(t.last_row, i);
        t.first_col = std::min(t.first_col, j);
        t.last_col = std::max(t.last_col, j);
      }
  const std::int64_t tiles_m = (p.m + tile_m - 1) / tile_m, tiles_n = (p.n + tile_n - 1) / tile_n;
  std::ostringstream out;
  out << wrong << " of " << p.m * p.n * p.batch << " elements off by more than " << limit << " in "
      << tiles.size() << " of " << tiles_m * tiles_n * p.batch << " C tiles of " << tile_m << "x"
      << tile_n;
  constexpr size_t kNamed = 4;
  const std::streamsize shown_precision = out.precision();
  size_t named = 0;
  for (const auto& [key, t] : tiles) {
    if (named++ == kNamed) {
      out << "; ...";
      break;
    }
    const auto& [z, ti, tj] = key;
    out << (named == 1 ? ": " : "; ") << "tile (" << ti << ", " << tj << ")";
    if (p.batch > 1) out << " of matrix " << z;
    out << " " << t.elements << " at rows " << t.first_row << "-" << t.last_row << ", columns "
        << t.first_col << "-" << t.last_col;
    if (ti == tiles_m - 1 || tj == tiles_n - 1) out << " (edge)";
    out << ", worst (" << t.worst_row << ", " << t.worst_col << ")"
        << (parts == 2 ? (t.worst_part ? " imaginary" : " real") : "") << " "
        << std::setprecision(17) << t.worst_got << " for " << t.worst_want
        << std::setprecision(int(shown_precision));
  }
  return out.str();
}

}  // namespace

std::string locate_mismatch(const double* got, const double* want, const Problem& p, int tile_m,
                            int tile_n, double tolerance) {
  return locate(got, want, p, tile_m, tile_n, tolerance);
}

std::string locate_mismatch(const float* got, const double* want, const Problem& p, int tile_m,
                            int tile_n, double tolerance) {
  return locate(got, want, p, tile_m, tile_n, tolerance);
}

}  // namespace gemmtune
