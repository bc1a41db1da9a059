// Internal to runtime: how far apart two shapes are, for the nearest-shape rules.
#pragma once

#include <cmath>

#include "core/core.hpp"

namespace gemmtune::detail {

// The sum of |log| ratios of M, N, K and the batch: scale-free, so 2048 is as near 4096 as to 1024.
inline double shape_distance(const Problem& a, const Problem& b) {
  auto d = [](std::int64_t x, std::int64_t y) {
    return std::abs(std::log(double(x)) - std::log(double(y)));
  };
  return d(a.m, b.m) + d(a.n, b.n) + d(a.k, b.k) + d(a.batch, b.batch);
}

}  // namespace gemmtune::detail
