// The LU client's arithmetic without a GPU: its update shapes, their workload file (read back by
// the command) and the numbering of its pivots.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/lu_updates.hpp"
#include "tests/catch.hpp"
#include "tests/shell.hpp"

using namespace gemmtune;

TEST_CASE("lu: one update per panel but the last, k = nb, inside the whole matrix", "[lu]") {
  const std::vector<Problem> p = lu::update_problems(Precision::D, 1000, 256);
  REQUIRE(p.size() == 3);
  CHECK(p[0].m == 744);
  CHECK(p[1].m == 488);
  CHECK(p[2].m == 232);
  for (const Problem& q : p) {
    CHECK(q.precision == Precision::D);
    CHECK(q.n == q.m);
    CHECK(q.k == 256);
    CHECK(q.op_a == Op::N);
    CHECK(q.op_b == Op::N);
    CHECK(q.lda == 1000);
    CHECK(q.ldb == 1000);
    CHECK(q.ldc == 1000);
    CHECK(q.batch == 1);
    CHECK(q.alpha == Scalar{-1.0, 0.0});
    CHECK(q.beta == Scalar{1.0, 0.0});
  }
  CHECK(lu::panel_count(1000, 256) == 4);

  // nb divides N: the last panel is full and leaves nothing to update.
  const std::vector<Problem> even = lu::update_problems(Precision::S, 1024, 256);
  REQUIRE(even.size() == 3);
  CHECK(even.back().m == 256);
  CHECK(even.back().precision == Precision::S);
  CHECK(lu::panel_count(1024, 256) == 4);

  CHECK(lu::update_problems(Precision::S, 256, 256).empty());
  CHECK(lu::update_problems(Precision::S, 100, 256).empty());
  CHECK(lu::panel_count(100, 256) == 1);
  CHECK_THROWS_WITH(lu::update_problems(Precision::D, 0, 64), Catch::Contains("N = 0"));
  CHECK_THROWS_WITH(lu::update_problems(Precision::D, 1000, 0), Catch::Contains("nb = 0"));
}

TEST_CASE("lu: the updates' flops sum 2 m n k and tend to 2/3 N^3", "[lu]") {
  CHECK(lu::update_flops(300, 100) == Approx(2.0 * (200.0 * 200 * 100 + 100.0 * 100 * 100)));
  CHECK(lu::update_flops(100, 100) == 0);
  const double n = 20000;
  CHECK(lu::update_flops(20000, 64) / (2.0 / 3 * n * n * n) == Approx(1).epsilon(0.01));
}

TEST_CASE("lu: the workload file has one weighted line per distinct update", "[lu]") {
  const std::string text =
      lu::workload_text({{Precision::D, 1000, 256}, {Precision::S, 1000, 256}});
  CHECK_THAT(text, Catch::StartsWith("# trailing updates A22 -= L21 * U12 of blocked LU: d N=1000 "
                                     "nb=256; s N=1000 nb=256\n"));
  CHECK_THAT(text, Catch::Contains("--precision d --opa n --opb n --m 744 --n 744 --k 256 --lda "
                                   "1000 --ldb 1000 --ldc 1000 --alpha -1 --beta 1 --weight 1\n"));
  CHECK_THAT(text, Catch::Contains("--precision s --opa n --opb n --m 232 --n 232 --k 256"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 7);

  // The same factorization twice: each shape once, run twice.
  const std::string twice =
      lu::workload_text({{Precision::D, 1000, 256}, {Precision::D, 1000, 256}});
  CHECK(std::count(twice.begin(), twice.end(), '\n') == 4);
  CHECK_THAT(twice, Catch::Contains("--m 488 --n 488 --k 256 --lda 1000 --ldb 1000 --ldc 1000 "
                                    "--alpha -1 --beta 1 --weight 2\n"));
  CHECK_THROWS_WITH(lu::workload_text({{Precision::D, -5, 256}}), Catch::Contains("N = -5"));
}

namespace {

// A store of one recorded attempt: kernel-set needs a store, and predicts what it lacks.
std::string one_attempt_store(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  std::ifstream recorded(std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/h100_exhaustive.csv");
  std::string header, row;
  REQUIRE(std::getline(recorded, header));
  REQUIRE(std::getline(recorded, row));
  const std::string csv = db + ".csv";
  std::ofstream(csv) << header << "\n" << row << "\n";
  const test::Run r = test::run("import --db " + db + " " + csv);
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::filesystem::remove(csv);
  return db;
}

}  // namespace

TEST_CASE("lu: the command reads the workload file as the shapes the client dispatches", "[lu]") {
  const std::string file = "gemmtune_lu_updates.txt";
  std::ofstream(file) << lu::workload_text({{Precision::D, 600, 256}});
  const std::string db = one_attempt_store("gemmtune_lu_updates.db");
  const test::Run r = test::run("kernel-set --problems " + file + " --domain compact --db " + db +
                                " --size 1 --format json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["problems"].size() == 2);
  const std::vector<Problem> p = lu::update_problems(Precision::D, 600, 256);
  CHECK(j["problems"][0]["problem"] == p[0].shape_id());
  CHECK(j["problems"][1]["problem"] == p[1].shape_id());
  CHECK(p[1].shape_id() == "d_nn_88x88x256_b1");
  CHECK(j["problems"][0]["weight"] == 1.0);
  std::filesystem::remove(file);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
}

TEST_CASE("lu: panel pivots become whole-matrix pivots", "[lu]") {
  // Two panels of two rows: panel 0 swaps rows 0 and 2; panel 1 (rows 2, 3) swaps its two rows.
  CHECK(lu::global_pivots({3, 2, 2, 2}, 2) == std::vector<int>{3, 2, 4, 4});
  // A narrower last panel: its one row can only pivot on itself.
  CHECK(lu::global_pivots({1, 2, 1, 2, 1}, 2) == std::vector<int>{1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(lu::global_pivots({3, 2, 3, 2}, 2),
                    Catch::Contains("pivot 3 of row 2 (panel at row 2) is outside 1..2"));
  CHECK_THROWS_WITH(lu::global_pivots({1, 1, 1, 2}, 2),
                    Catch::Contains("pivot 1 of row 1 (panel at row 0) is outside 2..4"));
  CHECK_THROWS_WITH(lu::global_pivots({}, 2), Catch::Contains("N = 0"));
}

TEST_CASE("lu: whole-matrix pivots become the rows of P A, as laswp from the first row", "[lu]") {
  // Row 0 swaps with row 2, then row 2 (A's row 0 by then) with row 3.
  CHECK(lu::row_permutation({3, 2, 4, 4}) == std::vector<std::int64_t>{2, 1, 3, 0});
  CHECK(lu::row_permutation({1, 2, 3}) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(lu::row_permutation({}).empty());
  // Swapping row labels one pivot at a time, as laswp does to A's rows, gives the same rows.
  const std::vector<int> pivots = lu::global_pivots({4, 3, 3, 4, 2, 3, 1}, 3);
  std::vector<std::int64_t> labels{0, 1, 2, 3, 4, 5, 6};
  for (size_t i = 0; i < pivots.size(); ++i) std::swap(labels[i], labels[size_t(pivots[i] - 1)]);
  CHECK(lu::row_permutation(pivots) == labels);
  CHECK_THROWS_WITH(lu::row_permutation({2, 0}),
                    Catch::Contains("pivot 0 of row 1 is outside 1..2"));
  CHECK_THROWS_WITH(lu::row_permutation({3, 2}),
                    Catch::Contains("pivot 3 of row 0 is outside 1..2"));
}
