// gemmtune fit-registers on compiled samples read from files: the fit, the shipped estimator's
// error on kernels it was not fitted on, and files of another kind.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"
#include "tests/shell.hpp"

using gemmtune::test::run;

TEST_CASE("cli: fit-registers fits on recorded counts and checks the shipped estimator", "[cli]") {
  const std::string dir = std::string(GEMMTUNE_SOURCE_DIR "/tests/data/");
  const auto r =
      run("fit-registers --samples 0 --from " + dir + "registers_hbt_seed21.csv --check " + dir +
          "registers_sdcz_seed23.csv --check " + dir + "h100_model_picks_held_out.csv.gz");
  INFO(r.output);
  REQUIRE(r.status == 0);
  // 636 kernels, 91 of them spilled: the fit takes the other 545.
  CHECK_THAT(r.output,
             Catch::Contains("H, B, T linear model, arch sm_90: 545 kernels fitted (91 spilled"));
  CHECK_THAT(r.output, !Catch::Contains("S, D, C, Z linear model"));
  // Each kind's kernels that did not spill: 139 SIMT and 46 tensor-core of seed 23; the
  // recording's distinct kernels (a kernel measured for several problems counts once).
  CHECK_THAT(r.output, Catch::Contains("SIMT          139 kernels") &&
                           Catch::Contains("tensor-core    46 kernels") &&
                           Catch::Contains("SIMT           84 kernels") &&
                           Catch::Contains("tensor-core   170 kernels"));

  const std::string bad = (std::filesystem::temp_directory_path() /
                           ("gemmtune_test_not_registers_" + std::to_string(::getpid()) + ".csv"))
                              .string();
  std::ofstream(bad) << "name,value\nx,1\n";
  const auto b = run("fit-registers --samples 0 --from " + bad);
  CHECK(b.status != 0);
  CHECK_THAT(b.output, Catch::Contains(bad));
  // A samples file whose count is not a number names the file, the line and the value.
  std::ofstream(bad) << "precision,op_a,op_b,config,registers,spill_bytes\nS,N,N,BM64_BN64,6x,0\n";
  const auto garbled = run("fit-registers --samples 0 --from " + bad);
  CHECK(garbled.status != 0);
  CHECK_THAT(garbled.output, Catch::Contains(bad + ":2: registers '6x'"));
  std::filesystem::remove(bad);
  const auto none = run("fit-registers --samples 0");
  CHECK(none.status != 0);
  CHECK_THAT(none.output, Catch::Contains("nothing to fit or check"));
}
