// Process isolation without a GPU: a scripted worker that answers, hangs or dies on cue.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "profiler/profiler.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

TEST_CASE("isolation: a worker that dies or hangs costs one attempt, not the run", "[isolation]") {
  const auto script = std::filesystem::temp_directory_path() / "gemmtune_fake_worker.sh";
  {
    std::ofstream f(script);
    // PF2 in the id: die mid-measurement; PF3: hang; anything else: an ok result.
    f << "#!/bin/sh\n"
         "while read -r line; do\n"
         "  case \"$line\" in\n"
         "    *PF2*) exit 3 ;;\n"
         "    *PF3*) sleep 30 ;;\n"
         "  esac\n"
         "  echo "
         "'{\"status\":\"ok\",\"median_s\":0.001,\"min_s\":0.001,\"max_s\":0.002,\"repetitions\":5,"
         "\"rel_error\":1e-7,\"registers\":64}'\n"
         "done\n";
  }
  chmod(script.c_str(), 0755);
  TimingOptions timing;
  timing.repetitions = 5;
  GpuEvaluator ev(script.string(), find_builtin_device("H100-SXM"), timing, 1.0);
  Problem p = make_problem(Precision::S, Op::N, Op::N, 64, 64, 64);
  const auto good = KernelConfig::parse("BM64_BN64_PF0");
  const auto dies = KernelConfig::parse("BM64_BN64_PF2");
  const auto hangs = KernelConfig::parse("BM64_BN64_PF3");
  const auto r = ev.measure(p, {good, dies, good, hangs, good});
  REQUIRE(r.size() == 5);
  CHECK(r[0].status == "ok");
  CHECK(r[0].time_s == Approx(0.001));
  CHECK(r[0].registers == 64);
  CHECK(r[1].status == "execute_error");
  CHECK_THAT(r[1].error, Catch::Contains("exit status 3"));
  CHECK(r[2].status == "ok");  // a fresh worker
  CHECK(r[3].status == "timeout");
  CHECK_THAT(r[3].error, Catch::Contains("killed"));
  CHECK(r[4].status == "ok");
  CHECK(ev.restarts() == 2);
  std::filesystem::remove(script);
}

TEST_CASE("isolation: the worker protocol carries problems exactly", "[isolation]") {
  Problem p = make_problem(Precision::Z, Op::C, Op::T, 7, 9, 11, 3);
  p.lda += 2;
  p.alpha = {0.5, -1.25};
  p.beta = {2.0, 0.0};
  CHECK(problem_from_json(problem_to_json(p)) == p);
  CHECK_THROWS_WITH(problem_from_json("{\"precision\": \"s\"}"),
                    Catch::Contains("malformed problem"));
}

TEST_CASE("isolation: cuBLAS's reference time comes from the worker, a failure is none",
          "[isolation]") {
  const auto script = std::filesystem::temp_directory_path() / "gemmtune_fake_reference.sh";
  {
    std::ofstream f(script);
    // A reference request for m=64 is timed; for m=32 cuBLAS fails; a configuration is ok.
    f << "#!/bin/sh\n"
         "while read -r line; do\n"
         "  case \"$line\" in\n"
         "    *reference*cublas*) case \"$line\" in\n"
         "      *'\"m\":32'*) echo '{\"status\":\"launch_error\",\"error\":\"no cuBLAS\"}' ;;\n"
         "      *) echo '{\"status\":\"ok\",\"median_s\":0.0005,\"min_s\":0.0004,"
         "\"max_s\":0.0006,\"repetitions\":5}' ;;\n"
         "      esac ;;\n"
         "    *) echo '{\"status\":\"ok\",\"median_s\":0.001,\"repetitions\":5}' ;;\n"
         "  esac\n"
         "done\n";
  }
  chmod(script.c_str(), 0755);
  GpuEvaluator ev(script.string(), find_builtin_device("H100-SXM"), TimingOptions{}, 5.0);
  const auto timed = ev.reference(make_problem(Precision::S, Op::N, Op::N, 64, 64, 64));
  REQUIRE(timed);
  CHECK(timed->time_s == Approx(0.0005));
  CHECK(timed->min_s == Approx(0.0004));
  CHECK(timed->repetitions == 5);
  CHECK_FALSE(ev.reference(make_problem(Precision::S, Op::N, Op::N, 32, 32, 32)));
  // The same worker goes on measuring configurations.
  const auto r = ev.measure(make_problem(Precision::S, Op::N, Op::N, 64, 64, 64),
                            {KernelConfig::parse("BM64_BN64")});
  CHECK(r.at(0).time_s == Approx(0.001));
  CHECK(ev.restarts() == 0);
  std::filesystem::remove(script);
}

TEST_CASE("isolation: a replay has no reference to time", "[isolation]") {
  ReplayEvaluator replay(find_builtin_device("H100-SXM"), {});
  CHECK_FALSE(replay.reference(make_problem(Precision::S, Op::N, Op::N, 64, 64, 64)));
}
