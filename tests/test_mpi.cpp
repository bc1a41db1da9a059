// tune and sweep under mpirun, replayed from recordings: the store equals a serial run's, lost
// ranks lose nothing, bad input stops the run before anything is measured.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"
#include "tests/shell.hpp"

namespace {

using gemmtune::test::Run;
using gemmtune::test::shell;

const std::string kCli = GEMMTUNE_CLI;
const std::string kData = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/";
// CI is root on 2 cores; lost ranks must not end the job (OpenMPI 4's recovery settings).
const std::string kMpirun =
    "mpirun --allow-run-as-root --oversubscribe --mca orte_enable_recovery 1 "
    "--mca orte_abort_on_non_zero_status 0";

// With those settings mpirun exits 0 whatever its ranks return; without, it passes a failure on.
const std::string kMpirunPlain = "mpirun --allow-run-as-root --oversubscribe";

Run mpirun(int ranks, const std::string& args, const std::string& env = "",
           const std::string& launcher = kMpirun) {
  return shell("timeout 120 " + launcher + (env.empty() ? "" : " -x " + env) + " -np " +
               std::to_string(ranks) + " " + kCli + " " + args);
}
Run serial(const std::string& args) {
  return shell(kCli + " " + args);
}

// Every attempt of a store, sorted (the order of writes differs between runs), less its run's id
// and seconds (the last two columns), which differ between any two runs.
std::string attempts(const std::string& db) {
  const Run r = serial("export --db " + db + " | sed -E 's/,[^,]*,[^,]*$//' | sort");
  REQUIRE(r.status == 0);
  return r.output;
}

std::string fresh(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  return db;
}

// The report line naming the best configuration.
std::string best_line(const std::string& output) {
  const auto at = output.find(": best ");
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

const std::string kSweep = "sweep --replay " + kData +
                           "h100_sweeps.csv -p d -m 4096 -n 4096 -k 4096 --domain compact "
                           "--item-configs 4 --rank-timeout 4";

}  // namespace

TEST_CASE("mpi: four ranks sweep a recorded problem into the store a serial sweep writes",
          "[mpi]") {
  const std::string one = fresh("gemmtune_mpi_sweep_serial.db");
  const std::string four = fresh("gemmtune_mpi_sweep_four.db");
  const Run s = serial(kSweep + " --db " + one);
  REQUIRE(s.status == 0);
  const Run m = mpirun(4, kSweep + " --db " + four);
  INFO(m.output);
  REQUIRE(m.status == 0);
  CHECK_THAT(m.output, Catch::Contains("on 3 worker ranks"));
  CHECK(attempts(one) == attempts(four));
  CHECK(attempts(four).size() > 70 * 100);  // 79 attempts, not an empty store
  CHECK(best_line(m.output) == best_line(s.output));
  // Resumed as a serial sweep resumes: nothing left to measure.
  const Run again = mpirun(4, kSweep + " --db " + four);
  CHECK_THAT(again.output, Catch::Contains("0 to measure, 79 already stored"));
}

TEST_CASE("mpi: four ranks tune a workload of problems into the store a serial tune writes",
          "[mpi]") {
  const std::string file =
      (std::filesystem::temp_directory_path() / "gemmtune_mpi_workload.txt").string();
  std::ofstream(file) << "-p d -m 4096 -n 4096 -k 4096\n"
                         "-p s -m 4096 -n 4096 -k 4096\n"
                         "-p s -m 6144 -n 64 -k 64\n"
                         "-p s --opa t -m 1024 -n 1024 -k 1024\n";
  const std::string args = "tune --replay " + kData + "h100_exhaustive.csv --problems " + file +
                           " --domain compact --evaluations 15 --seconds 0 --rank-timeout 30";
  const std::string one = fresh("gemmtune_mpi_tune_serial.db");
  const std::string four = fresh("gemmtune_mpi_tune_four.db");
  // Under mpirun the problems tune side by side, each on the whole budget: the serial reference
  // is each problem's own tune (a serial workload would split the budget between them).
  Run s{0, ""};
  std::ifstream lines(file);
  for (std::string line; std::getline(lines, line);) {
    const Run one_problem = serial("tune --replay " + kData + "h100_exhaustive.csv " + line +
                                   " --domain compact --evaluations 15 --seconds 0 --db " + one);
    REQUIRE(one_problem.status == 0);
    s.output += one_problem.output;
  }
  const Run m = mpirun(4, args + " --db " + four);
  INFO(m.output);
  REQUIRE(m.status == 0);
  CHECK(attempts(one) == attempts(four));
  CHECK_THAT(m.output, Catch::Contains("4 items on 3 worker ranks"));
  for (const char* shape : {"d_nn_4096x4096x4096_b1: best", "s_nn_6144x64x64_b1: best",
                            "s_tn_1024x1024x1024_b1: best", "s_nn_4096x4096x4096_b1: best"}) {
    const auto in_serial = s.output.find(shape), in_mpi = m.output.find(shape);
    REQUIRE(in_serial != std::string::npos);
    REQUIRE(in_mpi != std::string::npos);
    CHECK(best_line(s.output.substr(in_serial)) == best_line(m.output.substr(in_mpi)));
  }
  // A rerun skips every problem tuned.
  const Run again = mpirun(4, args + " --db " + four);
  CHECK_THAT(again.output, Catch::Contains("already tuned"));
  CHECK(attempts(four) == attempts(one));
}

TEST_CASE("mpi: a rank that exits or hangs mid-run loses nothing: its item goes to another rank",
          "[mpi]") {
  const std::string one = fresh("gemmtune_mpi_lost_serial.db");
  REQUIRE(serial(kSweep + " --db " + one).status == 0);
  const std::string slow = kSweep + " --replay-delay 0.01";
  SECTION("a rank exits") {
    const std::string db = fresh("gemmtune_mpi_lost_exit.db");
    const Run m = mpirun(4, slow + " --db " + db, "GEMMTUNE_TEST_LOSE_RANK=2:3");
    INFO(m.output);
    CHECK(m.status == 0);
    CHECK_THAT(m.output,
               Catch::Contains("rank 2 exits after 3 items") && Catch::Contains("rank 2 was lost"));
    CHECK(attempts(db) == attempts(one));
  }
  SECTION("a rank hangs") {
    const std::string db = fresh("gemmtune_mpi_lost_hang.db");
    const Run m = mpirun(4, slow + " --db " + db, "GEMMTUNE_TEST_LOSE_RANK=1:2:hang");
    INFO(m.output);
    CHECK(m.status == 0);
    CHECK_THAT(m.output, Catch::Contains("rank 1 was lost (no word for 4 s"));
    CHECK(attempts(db) == attempts(one));
  }
  SECTION("rank 0 dies; a rerun resumes") {
    const std::string db = fresh("gemmtune_mpi_lost_zero.db");
    const Run m = mpirun(4, slow + " --db " + db, "GEMMTUNE_TEST_LOSE_RANK=0:5");
    INFO(m.output);
    CHECK_THAT(m.output, Catch::Contains("rank 0 exits after 5 items"));
    CHECK(attempts(db) != attempts(one));
    const Run rerun = mpirun(3, kSweep + " --db " + db);
    INFO(rerun.output);
    CHECK_THAT(rerun.output, Catch::Contains("59 to measure, 20 already stored"));
    CHECK(attempts(db) == attempts(one));
  }
}

TEST_CASE("mpi: mismatched ranks and an unwritable store stop before measuring; one rank is serial",
          "[mpi]") {
  const std::string db = fresh("gemmtune_mpi_bad.db");
  const Run mixed =
      shell("timeout 120 " + kMpirunPlain + " -np 1 " + kCli + " " + kSweep + " --db " + db +
            " : -np 2 " + kCli + " " + kSweep + " --sample 9 --db " + db);
  INFO(mixed.output);
  CHECK(mixed.status != 0);
  CHECK_THAT(mixed.output, Catch::Contains(" runs commit") && Catch::Contains("--sample 9") &&
                               Catch::Contains("rank 0 runs"));
  CHECK(attempts(db).find("H100-SXM,D") == std::string::npos);

  const Run unwritable =
      mpirun(3, kSweep + " --db " + kData + "README.md/gemmtune.db", "", kMpirunPlain);
  INFO(unwritable.output);
  CHECK(unwritable.status != 0);
  CHECK_THAT(unwritable.output, Catch::Contains("cannot open the store"));

  const Run single = mpirun(1, kSweep + " --db " + db + " --limit 3");
  INFO(single.output);
  CHECK(single.status == 0);
  CHECK_THAT(single.output, Catch::Contains("3 measured") && !Catch::Contains("mpi:"));
}
