// Benchmark: predict over the full pruned space (enumeration + pruning + model), and the model
// alone on a fixed list of configurations. Prints figures for bench/RESULTS.md.
#include <chrono>
#include <cstdio>

#include "search/search.hpp"

using namespace gemmtune;

int main(int argc, char** argv) {
  const DeviceSpec device = find_builtin_device(argc > 1 ? argv[1] : "H100-SXM");
  struct Case {
    const char* name;
    Problem p;
  };
  const auto make = [](Precision pr, Op a, Op b, int m, int n, int k) {
    return make_problem(pr, a, b, m, n, k);
  };
  const Case cases[] = {
      {"sgemm nn 8192^3", make(Precision::S, Op::N, Op::N, 8192, 8192, 8192)},
      {"sgemm nt 4096^3", make(Precision::S, Op::N, Op::T, 4096, 4096, 4096)},
      {"dgemm nn 8192^3", make(Precision::D, Op::N, Op::N, 8192, 8192, 8192)},
      {"sgemm LU 6144x6016x128", make(Precision::S, Op::N, Op::N, 6144, 6016, 128)},
      {"zgemm cn 1000^3", make(Precision::Z, Op::C, Op::N, 1000, 1000, 1000)},
  };
  std::printf("%-24s %10s %10s %12s\n", "problem", "pruned", "seconds", "best GFLOP/s");
  for (const Case& c : cases) {
    const Ranking r = rank_space(c.p, device, 10);
    std::printf("%-24s %10lld %10.3f %12.0f\n", c.name, static_cast<long long>(r.evaluated),
                r.seconds, r.top.empty() ? 0.0 : r.top.front().prediction.gflops);
  }
  // Model throughput alone: the pruned space of the first case, predicted repeatedly.
  const auto configs = pruned_space(cases[0].p, device);
  double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  std::int64_t count = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.0) {
    for (const auto& c : configs) sink += predict(cases[0].p, device, c).time_s;
    count += std::int64_t(configs.size());
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("model alone: %.2f million configurations per second on one core (checksum %.3g)\n",
              double(count) / secs * 1e-6, sink);
  return 0;
}
