// GPU tests: run only where a CUDA GPU is present; elsewhere they report themselves skipped
// (exit code 77, which ctest shows as "Skipped") with the reason on stdout.
#define CATCH_CONFIG_RUNNER
#include <cstdio>

#include "profiler/profiler.hpp"
#include "tests/catch.hpp"

int main(int argc, char** argv) {
  if (gemmtune::cuda_device_count() == 0) {
    std::printf(
        "SKIPPED: no CUDA GPU on this machine; the [gpu] tests run on the device "
        "(scripts/device-check.sh)\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
