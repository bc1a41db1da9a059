// Catch2 2.x (Debian 12) or 3.x, whichever is installed. The tests use the 2.x spellings;
// under 3.x they map onto its matchers and Approx.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#include <string>
#define GEMMTUNE_CATCH3 1
using Catch::Approx;
namespace Catch {
inline auto Contains(const std::string& s) {
  return Matchers::ContainsSubstring(s);
}
inline auto StartsWith(const std::string& s) {
  return Matchers::StartsWith(s);
}
}  // namespace Catch
#else
#include <catch2/catch.hpp>
#endif
