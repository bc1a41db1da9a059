#include <algorithm>
#include <atomic>
#include <set>

#include "core/core.hpp"
#include "tests/catch.hpp"
#include "tests/shell.hpp"

using namespace gemmtune;

static Problem square(std::int64_t n, Precision p = Precision::S) {
  Problem pr;
  pr.precision = p;
  pr.m = pr.n = pr.k = n;
  return pr;
}

TEST_CASE("problem: packed leading dimensions follow op(A) and op(B)", "[core]") {
  Problem p = square(10);
  p.m = 7;
  p.n = 5;
  p.k = 3;
  p.op_a = Op::T;
  const Problem q = p.normalized();
  CHECK(q.lda == 3);  // A is K x M when transposed
  CHECK(q.ldb == 3);  // B is K x N
  CHECK(q.ldc == 7);
  CHECK(q.stride_a() == 3 * 7);
  CHECK(q.shape_id() == "s_tn_7x5x3_b1");
}

TEST_CASE("problem: flops and compulsory bytes", "[core]") {
  Problem p = square(1000).normalized();
  CHECK(p.flops() == Approx(2e9));
  CHECK(p.min_bytes() == Approx(4.0 * 3e6));  // beta = 0: C written, not read
  p.beta = {1.0, 0.0};
  CHECK(p.min_bytes() == Approx(4.0 * 4e6));
  Problem z = square(10, Precision::Z);
  z.batch = 3;
  CHECK(z.normalized().flops() == Approx(8.0 * 1000 * 3));  // 4 real FMAs per complex one
}

TEST_CASE("problem: bad sizes are rejected with the value and the rule", "[core]") {
  Problem p = square(8);
  p.m = 0;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("M = 0") && Catch::Contains(">= 1"));
  p = square(8);
  p.k = -3;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("K = -3"));
  p = square(8);
  p.lda = 4;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("lda = 4") && Catch::Contains("rows of A (8"));
  p = square(8);
  p.ldc = 7;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("ldc = 7"));
  p = square(8);
  p.op_b = Op::C;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("complex"));
  p = square(8);
  p.batch = 0;
  CHECK_THROWS_WITH(p.normalized(), Catch::Contains("batch = 0"));
  CHECK_NOTHROW(square(8, Precision::C).normalized());
}

TEST_CASE("problem: precision and op names", "[core]") {
  CHECK(parse_precision("z") == Precision::Z);
  CHECK(parse_precision("D") == Precision::D);
  CHECK(parse_op("c") == Op::C);
  CHECK(parse_precision("h") == Precision::H);
  CHECK(parse_precision("B") == Precision::B);
  CHECK(parse_precision("t") == Precision::T);
  CHECK_THROWS_WITH(parse_precision("q"),
                    Catch::Contains("'q'") && Catch::Contains("s, d, c, z, h, b, t"));
  for (Precision p : {Precision::H, Precision::B, Precision::T}) {
    INFO(to_char(p));
    CHECK(is_reduced(p));
    CHECK_FALSE(is_double(p));
    CHECK_FALSE(is_complex(p));
    CHECK(c_element_bytes(p) == 4);
    CHECK(parse_precision(std::string(1, to_char(p))) == p);
  }
  CHECK(element_bytes(Precision::H) == 2);
  CHECK(element_bytes(Precision::B) == 2);
  CHECK(element_bytes(Precision::T) == 4);
  CHECK_FALSE(is_reduced(Precision::S));
  CHECK(c_element_bytes(Precision::Z) == 16);
  // FP16 inputs are half the bytes of FP32 ones; C stays FP32.
  const Problem h = make_problem(Precision::H, Op::T, Op::N, 100, 200, 300);
  CHECK(h.min_bytes() == 2.0 * (100 * 300 + 300 * 200) + 4.0 * 100 * 200);
  CHECK(h.shape_id() == "h_tn_100x200x300_b1");
  CHECK_THROWS_WITH(parse_op("x"), Catch::Contains("'x'"));
  CHECK(element_bytes(Precision::Z) == 16);
  CHECK(fmas_per_madd(Precision::C) == 4);
}

TEST_CASE("core: parallel_for runs every index once and passes on the first error", "[core]") {
  for (int threads : {0, 1, 3, 64}) {
    INFO("threads " << threads);
    std::vector<std::atomic<int>> runs(1000);
    std::atomic<int> bad_worker{0};
    const int workers = threads > 0 ? threads : hardware_threads();
    parallel_for(
        runs.size(),
        [&](std::size_t i, int worker) {
          ++runs[i];
          if (worker < 0 || worker >= workers) ++bad_worker;
        },
        threads);
    CHECK(std::all_of(runs.begin(), runs.end(), [](const auto& r) { return r == 1; }));
    CHECK(bad_worker == 0);
  }
  parallel_for(0, [](std::size_t, int) { FAIL("no index to run"); });
  CHECK_THROWS_WITH(parallel_for(
                        100,
                        [](std::size_t i, int) {
                          if (i == 37) throw InputError("task 37 failed");
                        },
                        4),
                    "task 37 failed");
}

TEST_CASE("random problems: every precision and op shape, sizes and time within bounds") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  ProblemSampling s;
  s.count = 400;
  const auto problems = random_problems(s, d);
  REQUIRE(problems.size() == 400);
  std::set<char> precisions, ops;
  int batched = 0, padded = 0, beta = 0;
  for (const Problem& p : problems) {
    CHECK_NOTHROW(p.validate());
    CHECK(p.m >= s.min_size);
    CHECK(p.m <= s.max_size);
    CHECK(p.k >= s.min_size);
    CHECK(p.n <= s.max_size);
    CHECK(sampling_seconds_estimate(p, d) <= s.max_seconds);
    precisions.insert(to_char(p.precision));
    ops.insert(to_char(p.op_a));
    if (p.op_a == Op::C || p.op_b == Op::C) CHECK(is_complex(p.precision));
    if (p.batch > 1) {
      ++batched;
      CHECK(std::max({p.m, p.n, p.k}) <= kSampledBatchMaxSize);
    }
    padded += p.lda != p.rows_a();
    beta += p.beta.re != 0;
    // Written out and read back as the command line takes it.
    CHECK_THAT(problem_options(p), Catch::Contains("--m " + std::to_string(p.m) + " "));
  }
  CHECK(precisions == std::set<char>{'S', 'D', 'C', 'Z'});
  CHECK(ops == std::set<char>{'N', 'T', 'C'});
  CHECK(batched > 30);
  CHECK(batched < 100);  // 15% of 400
  CHECK(padded > 30);
  CHECK(beta > 40);
  CHECK(random_problems(s, d) == problems);
  s.seed = 2;
  CHECK(random_problems(s, d) != problems);
  s.max_seconds = 0;
  CHECK_THROWS_WITH(random_problems(s, d), Catch::Contains("max_seconds"));
}

TEST_CASE("random problems: large sizes only, with the batched share set to 0") {
  const DeviceSpec d = find_builtin_device("H200");
  ProblemSampling s;
  s.count = 10;
  s.min_size = 1500;
  s.precisions = {Precision::H, Precision::B, Precision::T};
  // Batches are of small matrices: the sampler says which option turns them off.
  CHECK_THROWS_WITH(random_problems(s, d), Catch::Contains("--batched-share"));
  s.batched_share = 0;
  for (const Problem& p : random_problems(s, d)) {
    CHECK(std::min({p.m, p.n, p.k}) >= 1500);
    CHECK(p.batch == 1);
  }
  // The command line takes the shares.
  const test::Run r = test::run(
      "problems --precisions hbt --seed 29 --count 3 --min-size 1500 "
      "--batched-share 0 --gpu H200");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("--m ") && !Catch::Contains("--batch "));
  const test::Run refused = test::run("problems --min-size 1500 --gpu H200");
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Catch::Contains("--batched-share"));
}
