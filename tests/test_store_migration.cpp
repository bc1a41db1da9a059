// Schema versions: a store written by an older gemmtune opens, keeps its rows and gains the new
// columns and tables; the tuning run's fields and the reference timings round-trip.
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "store/store.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

struct TempStore {
  fs::path path;
  explicit TempStore(const char* name) : path(fs::temp_directory_path() / name) { clean(); }
  ~TempStore() { clean(); }
  void clean() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  }
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  REQUIRE(rc == SQLITE_OK);
  REQUIRE(message.empty());
}

// A store as gemmtune wrote it at schema version 1 (its tables verbatim), with two attempts of
// one problem and a calibration.
void write_version_1_store(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE devices(name TEXT PRIMARY KEY, spec_json TEXT NOT NULL);
CREATE TABLE problems(
  id INTEGER PRIMARY KEY, precision TEXT NOT NULL, op_a TEXT NOT NULL, op_b TEXT NOT NULL,
  m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, lda INTEGER NOT NULL,
  ldb INTEGER NOT NULL, ldc INTEGER NOT NULL, batch INTEGER NOT NULL,
  alpha_re REAL NOT NULL, alpha_im REAL NOT NULL, beta_re REAL NOT NULL, beta_im REAL NOT NULL,
  UNIQUE(precision, op_a, op_b, m, n, k, lda, ldb, ldc, batch, alpha_re, alpha_im, beta_re, beta_im));
CREATE TABLE configs(id TEXT PRIMARY KEY);
CREATE TABLE attempts(
  id INTEGER PRIMARY KEY, device TEXT NOT NULL, problem_id INTEGER NOT NULL REFERENCES problems(id),
  config TEXT NOT NULL REFERENCES configs(id), status TEXT NOT NULL, error TEXT NOT NULL,
  median_s REAL, min_s REAL, max_s REAL, repetitions INTEGER, gflops REAL, rel_error REAL,
  registers INTEGER, spill_bytes INTEGER, smem_bytes INTEGER, energy_j REAL, counters_json TEXT,
  predicted_s REAL, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));
CREATE INDEX attempts_by_problem ON attempts(device, problem_id);
CREATE TABLE calibrations(device TEXT NOT NULL, json TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));
INSERT INTO meta VALUES('schema_version', '1');
INSERT INTO meta VALUES('step:tune old', 'done');
INSERT INTO problems VALUES(1, 'S', 'N', 'N', 256, 256, 256, 256, 256, 256, 1, 1, 0, 0, 0);
INSERT INTO configs VALUES('BM64_BN64');
INSERT INTO configs VALUES('BM32_BN64');
INSERT INTO attempts(device, problem_id, config, status, error, median_s, min_s, max_s,
  repetitions, gflops, rel_error, registers, spill_bytes, smem_bytes, energy_j, counters_json,
  predicted_s, created_at)
  VALUES('H100-SXM', 1, 'BM64_BN64', 'ok', '', 2e-5, 1.9e-5, 2.2e-5, 20, 1677.7, 1e-7, 90, 0,
         8192, 0, '', 1.8e-5, '2026-11-01T10:00:00Z');
INSERT INTO attempts(device, problem_id, config, status, error, median_s, min_s, max_s,
  repetitions, gflops, rel_error, registers, spill_bytes, smem_bytes, energy_j, counters_json,
  predicted_s, created_at)
  VALUES('H100-SXM', 1, 'BM32_BN64', 'wrong', 'mismatch', 0, 0, 0, 0, 0, 0.5, 64, 0, 4096, 0,
         '', 3e-5, '2026-11-01T10:00:01Z');
INSERT INTO calibrations(device, json, created_at) VALUES('H100-SXM', '{"v":1}',
  '2026-11-01T11:00:00Z');
)sql");
  sqlite3_close(db);
}

Problem square(std::int64_t n) {
  Problem p;
  p.precision = Precision::S;
  p.m = p.n = p.k = n;
  return p.normalized();
}

std::string schema_version(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                             nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

}  // namespace

TEST_CASE("store migration: a version 1 store opens with its rows and gains runs and references",
          "[store]") {
  TempStore tmp("gemmtune_store_v1.db");
  write_version_1_store(tmp.path.string());
  {
    Database db(tmp.path.string());
    const auto old = db.attempts("H100-SXM", square(256));
    REQUIRE(old.size() == 2);
    CHECK(old[0].config.id() == KernelConfig::parse("BM64_BN64").id());
    CHECK(old[0].status == "ok");
    CHECK(old[0].median_s == Approx(2e-5));
    CHECK(old[0].registers == 90);
    CHECK(old[0].predicted_s == Approx(1.8e-5));
    CHECK(old[0].created_at == "2026-11-01T10:00:00Z");
    CHECK(old[1].status == "wrong");
    CHECK(old[1].error == "mismatch");
    // Rows from before runs were kept have none.
    for (const Attempt& a : old) {
      CHECK(a.strategy.empty());
      CHECK(a.run.empty());
      CHECK_FALSE(a.elapsed_s);
    }
    const nlohmann::json row = attempt_json(old[0]);
    CHECK(row.at("strategy").is_null());
    CHECK(row.at("run").is_null());
    CHECK(row.at("elapsed_s").is_null());
    CHECK(db.best("H100-SXM", square(256))->config.id() == old[0].config.id());
    CHECK(db.step("tune old") == "done");
    REQUIRE(db.latest_calibration("H100-SXM"));
    CHECK(db.latest_calibration("H100-SXM")->json == R"({"v":1})");
    CHECK(db.references().empty());

    // The migrated store takes the new fields and tables.
    Attempt fresh = old[0];
    fresh.strategy = "random";
    fresh.run = "run-1";
    fresh.elapsed_s = 1.5;
    db.add(fresh);
    db.add_reference({"H100-SXM", square(256), "cublas", 1.5e-5, 2236.9, ""});
  }
  CHECK(schema_version(tmp.path.string()) == std::to_string(kStoreSchemaVersion));
  Database db(tmp.path.string());  // reopened at the current version: nothing migrates again
  const auto all = db.attempts("H100-SXM");
  REQUIRE(all.size() == 3);
  CHECK(all[2].strategy == "random");
  CHECK(all[2].run == "run-1");
  REQUIRE(all[2].elapsed_s);
  CHECK(*all[2].elapsed_s == Approx(1.5));
  const auto refs = db.references("H100-SXM", square(256));
  REQUIRE(refs.size() == 1);
  CHECK(refs[0].library == "cublas");
  CHECK(refs[0].time_s == Approx(1.5e-5));
  CHECK(refs[0].gflops == Approx(2236.9));
  CHECK(refs[0].problem == square(256));
  CHECK_FALSE(refs[0].created_at.empty());
}

TEST_CASE("store: reference timings per device and problem, oldest first, in export's JSON",
          "[store]") {
  TempStore tmp("gemmtune_store_references.db");
  Database db(tmp.path.string());
  db.add_reference({"H100-SXM", square(512), "cublas", 4e-5, 6710.9, ""});
  db.add_reference({"A100-SXM", square(512), "cublas", 8e-5, 3355.4, ""});
  db.add_reference({"H100-SXM", square(1024), "cublas", 2e-4, 10737.4, ""});
  db.add_reference({"H100-SXM", square(512), "cublas", 3.9e-5, 6883.0, ""});
  CHECK(db.references().size() == 4);
  const auto h100 = db.references("H100-SXM");
  REQUIRE(h100.size() == 3);
  CHECK(h100[0].time_s == Approx(4e-5));
  CHECK(h100[2].time_s == Approx(3.9e-5));
  CHECK(db.references("H100-SXM", square(512)).size() == 2);
  CHECK(db.references("H100-SXM", square(2048)).empty());
  CHECK(db.references("A100-SXM", square(1024)).empty());
  const auto rows = nlohmann::json::parse(db.export_references_json("A100-SXM"));
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("problem") == square(512).shape_id());
  CHECK(rows[0].at("library") == "cublas");
  CHECK(rows[0].at("time_s").get<double>() == Approx(8e-5));
  CHECK(rows[0].at("lda") == 512);
  CHECK_THROWS_WITH(db.add_reference({"H100-SXM", square(512), "cublas", 0, 0, ""}),
                    Catch::Contains("must be positive") && Catch::Contains("0"));
}

TEST_CASE("store: a tuning run stamps its strategy, id and elapsed seconds; CSV keeps them",
          "[store]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = square(256);
  Evaluation e;
  e.config = KernelConfig::parse("BM64_BN64");
  e.time_s = 2e-5;
  const TuningRun hybrid("hybrid"), random("random");
  CHECK(hybrid.id() != random.id());
  const Attempt first = hybrid.attempt(e, p, h100);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Attempt second = hybrid.attempt(e, p, h100);
  CHECK(first.strategy == "hybrid");
  CHECK(first.run == hybrid.id());
  REQUIRE(first.elapsed_s);
  REQUIRE(second.elapsed_s);
  CHECK(*first.elapsed_s >= 0);
  CHECK(*second.elapsed_s >= *first.elapsed_s + 0.015);
  CHECK(first.gflops == Approx(p.flops() / 2e-5 * 1e-9));  // attempt_from's fields as well
  CHECK(random.attempt(e, p, h100).strategy == "random");

  // Through the seeds' CSV and back; a file without the run's columns reads as no run.
  CsvImportReport report;
  const std::string csv =
      csv_header() + "\n" + to_csv_row(second) + "\n" + to_csv_row(attempt_from(e, p, h100)) + "\n";
  const auto back = read_attempts_csv(csv, report);
  REQUIRE(report.rejected.empty());
  REQUIRE(back.size() == 2);
  CHECK(back[0].strategy == "hybrid");
  CHECK(back[0].run == hybrid.id());
  REQUIRE(back[0].elapsed_s);
  CHECK(*back[0].elapsed_s == Approx(*second.elapsed_s).epsilon(1e-6));
  CHECK(back[1].strategy.empty());
  CHECK_FALSE(back[1].elapsed_s);
  std::string old_header = csv_header();
  old_header = old_header.substr(0, old_header.find(",strategy"));
  std::string old_row = to_csv_row(attempt_from(e, p, h100));
  old_row = old_row.substr(0, old_row.size() - 3);  // the three empty run fields
  const auto old = read_attempts_csv(old_header + "\n" + old_row + "\n", report);
  REQUIRE(report.rejected.empty());
  REQUIRE(old.size() == 1);
  CHECK(old[0].run.empty());
  CHECK(old[0].median_s == Approx(2e-5));
}

TEST_CASE("store migration: processes opening one old store together each see it migrated once",
          "[store]") {
  TempStore tmp("gemmtune_store_v1_race.db");
  write_version_1_store(tmp.path.string());
  std::vector<std::size_t> seen(4, 0);
  std::vector<std::string> errors(4);
  std::vector<std::thread> openers;
  for (std::size_t i = 0; i < seen.size(); ++i)
    openers.emplace_back([&, i] {
      try {
        seen[i] = Database(tmp.path.string()).attempts("H100-SXM").size();
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : openers) t.join();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    INFO("opener " << i << ": " << errors[i]);  // SQLite's words, should one fail
    CHECK(errors[i].empty());
    CHECK(seen[i] == 2);
  }
  CHECK(schema_version(tmp.path.string()) == std::to_string(kStoreSchemaVersion));
}
