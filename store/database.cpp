// SQLite store. One connection per Database; statements are prepared per call (the store is
// far from the hot path: one row per measured kernel).
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "store/store.hpp"

namespace gemmtune {
namespace {

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQL error: ") + sqlite3_errmsg(db) + " in: " + sql);
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Statement& bind(int i, int v) { return bind(i, std::int64_t(v)); }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  Statement& bind(int i, const std::optional<double>& v) {
    if (v) return bind(i, *v);
    sqlite3_bind_null(st_, i);
    return *this;
  }
  // "" as NULL: a column that old rows lack reads the same as an unset one.
  Statement& bind_text_or_null(int i, const std::string& v) {
    if (!v.empty()) return bind(i, v);
    sqlite3_bind_null(st_, i);
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(std::string("SQL error: ") + sqlite3_errmsg(db_));
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(st_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(st_, col); }
  double real(int col) const { return sqlite3_column_double(st_, col); }
  std::optional<double> optional_real(int col) const {
    if (sqlite3_column_type(st_, col) == SQLITE_NULL) return std::nullopt;
    return real(col);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

// The schema of version 1; a new store is created at it and then migrated like an old one, so
// that both end with the same tables.
const char* const kSchema = R"sql(
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
)sql";

// kMigrations[i] takes a store from version i + 1 to i + 2. Added columns are NULL in old rows.
const char* const kMigrations[] = {
    R"sql(
ALTER TABLE attempts ADD COLUMN strategy TEXT;
ALTER TABLE attempts ADD COLUMN run TEXT;
ALTER TABLE attempts ADD COLUMN elapsed_s REAL;
CREATE TABLE reference_times(
  id INTEGER PRIMARY KEY, device TEXT NOT NULL, problem_id INTEGER NOT NULL REFERENCES problems(id),
  library TEXT NOT NULL, time_s REAL NOT NULL, gflops REAL NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));
CREATE INDEX reference_times_by_problem ON reference_times(device, problem_id);
)sql"};
static_assert(std::size(kMigrations) == kStoreSchemaVersion - 1);

std::string str(char c) {
  return std::string(1, c);
}

// The 14 problem columns of the problems table aliased p, as read_problem reads them.
const char* const kProblemColumns =
    "p.precision, p.op_a, p.op_b, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.batch, p.alpha_re, "
    "p.alpha_im, p.beta_re, p.beta_im";

// The 14 problem columns (precision .. beta_im) starting at column `first`.
Problem read_problem(const Statement& s, int first) {
  Problem p;
  p.precision = parse_precision(s.text(first));
  p.op_a = parse_op(s.text(first + 1));
  p.op_b = parse_op(s.text(first + 2));
  p.m = s.integer(first + 3);
  p.n = s.integer(first + 4);
  p.k = s.integer(first + 5);
  p.lda = s.integer(first + 6);
  p.ldb = s.integer(first + 7);
  p.ldc = s.integer(first + 8);
  p.batch = s.integer(first + 9);
  p.alpha = {s.real(first + 10), s.real(first + 11)};
  p.beta = {s.real(first + 12), s.real(first + 13)};
  return p;
}

}  // namespace

struct Database::Impl {
  sqlite3* db = nullptr;
  std::string path;

  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "unknown";
      sqlite3_free(err);
      throw std::runtime_error("SQL error in " + path + ": " + msg);
    }
  }

  std::int64_t problem_id(const Problem& p, bool create) {
    Statement find(
        db,
        "SELECT id FROM problems WHERE precision=? AND op_a=? AND op_b=? AND m=? AND n=? AND k=? "
        "AND lda=? AND ldb=? AND ldc=? AND batch=? AND alpha_re=? AND alpha_im=? AND beta_re=? "
        "AND beta_im=?");
    bind_problem(find, p);
    if (find.step()) return find.integer(0);
    if (!create) return -1;
    Statement ins(
        db,
        "INSERT INTO problems(precision, op_a, op_b, m, n, k, lda, ldb, ldc, batch, alpha_re, "
        "alpha_im, beta_re, beta_im) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    bind_problem(ins, p);
    ins.step();
    return sqlite3_last_insert_rowid(db);
  }

  static void bind_problem(Statement& s, const Problem& p) {
    s.bind(1, str(to_char(p.precision)))
        .bind(2, str(to_char(p.op_a)))
        .bind(3, str(to_char(p.op_b)))
        .bind(4, p.m)
        .bind(5, p.n)
        .bind(6, p.k)
        .bind(7, p.lda)
        .bind(8, p.ldb)
        .bind(9, p.ldc)
        .bind(10, p.batch)
        .bind(11, p.alpha.re)
        .bind(12, p.alpha.im)
        .bind(13, p.beta.re)
        .bind(14, p.beta.im);
  }

  void insert(const Attempt& a) {
    const std::int64_t pid = problem_id(a.problem, true);
    const std::string cid = a.config.id();
    Statement cfg(db, "INSERT OR IGNORE INTO configs(id) VALUES(?)");
    cfg.bind(1, cid).step();
    Statement ins(
        db,
        "INSERT INTO attempts(device, problem_id, config, status, error, median_s, min_s, max_s, "
        "repetitions, gflops, rel_error, registers, spill_bytes, smem_bytes, energy_j, "
        "counters_json, predicted_s, strategy, run, elapsed_s) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, a.device)
        .bind(2, pid)
        .bind(3, cid)
        .bind(4, a.status)
        .bind(5, a.error)
        .bind(6, a.median_s)
        .bind(7, a.min_s)
        .bind(8, a.max_s)
        .bind(9, a.repetitions)
        .bind(10, a.gflops)
        .bind(11, a.rel_error)
        .bind(12, a.registers)
        .bind(13, a.spill_bytes)
        .bind(14, a.smem_bytes)
        .bind(15, a.energy_j)
        .bind(16, a.counters_json)
        .bind(17, a.predicted_s)
        .bind_text_or_null(18, a.strategy)
        .bind_text_or_null(19, a.run)
        .bind(20, a.elapsed_s);
    ins.step();
  }

  // Runs `select` (FROM a table aliased `alias`, with device and problem_id columns) on one
  // device's rows (every device's when empty), of one problem when given, oldest first, and
  // hands each row to `row`.
  template <typename Row>
  void each_row(std::string select, const std::string& alias, const std::string& device,
                const std::optional<Problem>& problem, Row&& row) {
    select += " WHERE (?1 = '' OR " + alias + ".device = ?1)";
    std::int64_t pid = -1;
    if (problem) {
      pid = problem_id(*problem, false);
      if (pid < 0) return;  // never stored: no rows
      select += " AND " + alias + ".problem_id = ?2";
    }
    select += " ORDER BY " + alias + ".id";
    Statement s(db, select.c_str());
    s.bind(1, device);
    if (problem) s.bind(2, pid);
    while (s.step()) row(s);
  }

  // The schema version the file holds: 0 when it has no tables (a new store), -1 when it has no
  // meta table or a version this gemmtune does not know.
  int stored_version() {
    Statement tables(db,
                     "SELECT count(*), sum(name = 'meta') FROM sqlite_master WHERE type='table'");
    tables.step();
    if (tables.integer(0) == 0) return 0;
    if (tables.integer(1) == 0) return -1;
    Statement v(db, "SELECT value FROM meta WHERE key='schema_version'");
    if (!v.step()) return -1;
    for (int n = 1; n <= kStoreSchemaVersion; ++n)
      if (v.text(0) == std::to_string(n)) return n;
    return -1;
  }

  // Why a file stored_version() answers -1 for is refused.
  std::string refusal() {
    Statement meta(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'");
    meta.step();
    if (meta.integer(0) == 0)
      return "'" + path +
             "' is an SQLite database but not a gemmtune store (no meta table); left untouched";
    Statement v(db, "SELECT value FROM meta WHERE key='schema_version'");
    const std::string version = v.step() ? v.text(0) : "none";
    return "store '" + path + "' has schema version " + version +
           "; this gemmtune reads versions 1 to " + std::to_string(kStoreSchemaVersion) +
           " (the file is left untouched)";
  }

  // Creates the store, or brings an older one to kStoreSchemaVersion, in one transaction. The
  // version is read again under the write lock: another process may have done it meanwhile.
  void migrate() {
    transaction([&] {
      int at = stored_version();
      if (at == 0) {
        exec(kSchema);
        at = 1;
      }
      if (at < 1 || at == kStoreSchemaVersion) return;
      for (int v = at; v < kStoreSchemaVersion; ++v) exec(kMigrations[v - 1]);
      Statement s(db, "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)");
      s.bind(1, std::to_string(kStoreSchemaVersion)).step();
    });
  }

  // Runs f in one transaction; any exception rolls it back.
  template <typename F>
  void transaction(F&& f) {
    exec("BEGIN IMMEDIATE");
    try {
      f();
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
};

Database::Database(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  const bool existed = std::filesystem::exists(path);
  if (!existed) {
    const auto parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  if (sqlite3_open_v2(path.c_str(), &impl_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    const std::string msg = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    sqlite3_close(impl_->db);
    impl_->db = nullptr;
    throw InputError("cannot open the store '" + path + "': " + msg);
  }
  sqlite3_busy_timeout(impl_->db, 10000);
  // Processes opening one old store together: the switch to WAL and the migration each need the
  // file alone, and where waiting could deadlock SQLite answers "database is locked" at once
  // instead of after the busy timeout. Each opener then retries the whole sequence, which reads
  // the version afresh, for as long as that timeout.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto open = [&] {
    // Reading the schema fails for a file that is not an SQLite database at all.
    const int at = impl_->stored_version();
    if (at < 0) throw InputError(impl_->refusal());
    impl_->exec("PRAGMA journal_mode=WAL");
    if (at < kStoreSchemaVersion) impl_->migrate();
    impl_->exec("PRAGMA synchronous=NORMAL");
    impl_->exec("PRAGMA foreign_keys=ON");
  };
  try {
    for (int attempt = 1;; ++attempt) {
      try {
        open();
        break;
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        const bool locked = std::string(e.what()).find("database is locked") != std::string::npos;
        if (!locked || std::chrono::steady_clock::now() > give_up) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt, 20) * 5));
      }
    }
  } catch (const InputError&) {
    sqlite3_close(impl_->db);
    impl_->db = nullptr;
    throw;
  } catch (const std::exception& e) {
    sqlite3_close(impl_->db);
    impl_->db = nullptr;
    throw InputError("cannot read the store '" + path + "': " + e.what());
  }
}

Database::~Database() {
  if (impl_ && impl_->db) sqlite3_close(impl_->db);
}

std::string Database::default_path() {
  if (const char* env = std::getenv("GEMMTUNE_DB")) return env;
  if (const char* home = std::getenv("HOME"))
    return std::string(home) + "/.local/share/gemmtune/gemmtune.db";
  return "gemmtune.db";
}

void Database::save_device(const DeviceSpec& d) {
  Statement s(impl_->db, "INSERT OR REPLACE INTO devices(name, spec_json) VALUES(?, ?)");
  s.bind(1, d.name).bind(2, device_to_json(d)).step();
}

std::optional<DeviceSpec> Database::device(const std::string& name) const {
  Statement s(impl_->db, "SELECT spec_json FROM devices WHERE name=?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return device_from_json(s.text(0));
}

void Database::add(const Attempt& a) {
  add_all({a});
}

void Database::add_all(const std::vector<Attempt>& attempts) {
  impl_->transaction([&] {
    for (const auto& a : attempts) impl_->insert(a);
  });
}

void Database::abandoned_transaction_for_test(const std::vector<Attempt>& attempts) {
  impl_->exec("BEGIN IMMEDIATE");
  for (const auto& a : attempts) impl_->insert(a);
  impl_->exec("ROLLBACK");  // what SQLite does on reopen after a killed writer
}

std::vector<Attempt> Database::attempts(const std::string& device,
                                        const std::optional<Problem>& problem) const {
  std::string sql =
      std::string("SELECT a.device, ") + kProblemColumns +
      ", a.config, a.status, a.error, a.median_s, a.min_s, a.max_s, a.repetitions, a.gflops, "
      "a.rel_error, a.registers, a.spill_bytes, a.smem_bytes, a.energy_j, a.counters_json, "
      "a.predicted_s, a.created_at, a.strategy, a.run, a.elapsed_s FROM attempts "
      "a JOIN problems p ON p.id = a.problem_id";
  std::vector<Attempt> out;
  impl_->each_row(sql, "a", device, problem, [&](const Statement& s) {
    Attempt a;
    a.device = s.text(0);
    a.problem = read_problem(s, 1);
    a.config = KernelConfig::parse(s.text(15));
    a.status = s.text(16);
    a.error = s.text(17);
    a.median_s = s.real(18);
    a.min_s = s.real(19);
    a.max_s = s.real(20);
    a.repetitions = int(s.integer(21));
    a.gflops = s.real(22);
    a.rel_error = s.real(23);
    a.registers = int(s.integer(24));
    a.spill_bytes = int(s.integer(25));
    a.smem_bytes = s.integer(26);
    a.energy_j = s.real(27);
    a.counters_json = s.text(28);
    a.predicted_s = s.real(29);
    a.created_at = s.text(30);
    a.strategy = s.text(31);
    a.run = s.text(32);
    a.elapsed_s = s.optional_real(33);
    out.push_back(std::move(a));
  });
  return out;
}

std::vector<Problem> Database::problems(const std::string& device) const {
  const std::string sql = std::string("SELECT DISTINCT ") + kProblemColumns +
                          " FROM problems p JOIN attempts a ON a.problem_id = p.id WHERE (?1 = "
                          "'' OR a.device = ?1) ORDER BY p.id";
  Statement s(impl_->db, sql.c_str());
  s.bind(1, device);
  std::vector<Problem> out;
  while (s.step()) {
    out.push_back(read_problem(s, 0));
  }
  return out;
}

bool Database::has(const std::string& device, const Problem& p, const KernelConfig& c) const {
  const std::int64_t pid = impl_->problem_id(p, false);
  if (pid < 0) return false;
  Statement s(impl_->db,
              "SELECT 1 FROM attempts WHERE device=? AND problem_id=? AND config=? LIMIT 1");
  s.bind(1, device).bind(2, pid).bind(3, c.id());
  return s.step();
}

std::optional<Attempt> Database::best(const std::string& device, const Problem& p) const {
  std::optional<Attempt> best;
  for (auto& a : attempts(device, p))
    if (a.status == "ok" && a.median_s > 0 && (!best || a.median_s < best->median_s))
      best = std::move(a);
  return best;
}

void Database::add_reference(const Reference& r) {
  if (!(r.time_s > 0))
    throw InputError("a reference time must be positive, not " + std::to_string(r.time_s));
  impl_->transaction([&] {
    const std::int64_t pid = impl_->problem_id(r.problem, true);
    Statement s(impl_->db,
                "INSERT INTO reference_times(device, problem_id, library, time_s, gflops) "
                "VALUES(?,?,?,?,?)");
    s.bind(1, r.device).bind(2, pid).bind(3, r.library).bind(4, r.time_s).bind(5, r.gflops).step();
  });
}

std::vector<Reference> Database::references(const std::string& device,
                                            const std::optional<Problem>& problem) const {
  std::string sql =
      std::string("SELECT r.device, ") + kProblemColumns +
      ", r.library, r.time_s, r.gflops, r.created_at FROM reference_times r JOIN problems p ON "
      "p.id = r.problem_id";
  std::vector<Reference> out;
  impl_->each_row(sql, "r", device, problem, [&](const Statement& s) {
    Reference r;
    r.device = s.text(0);
    r.problem = read_problem(s, 1);
    r.library = s.text(15);
    r.time_s = s.real(16);
    r.gflops = s.real(17);
    r.created_at = s.text(18);
    out.push_back(std::move(r));
  });
  return out;
}

void Database::mark_step(const std::string& key, const std::string& note) {
  Statement s(impl_->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  s.bind(1, "step:" + key).bind(2, note).step();
}

std::optional<std::string> Database::step(const std::string& key) const {
  Statement s(impl_->db, "SELECT value FROM meta WHERE key=?");
  s.bind(1, "step:" + key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

void Database::save_calibration(const std::string& device, const std::string& json) {
  Statement s(impl_->db, "INSERT INTO calibrations(device, json) VALUES(?, ?)");
  s.bind(1, device).bind(2, json).step();
}

std::optional<std::string> Database::calibration(const std::string& device) const {
  const auto latest = latest_calibration(device);
  if (!latest) return std::nullopt;
  return latest->json;
}

std::optional<Database::StoredCalibration> Database::latest_calibration(
    const std::string& device) const {
  Statement s(impl_->db,
              "SELECT json, created_at FROM calibrations WHERE device=? ORDER BY rowid DESC "
              "LIMIT 1");
  s.bind(1, device);
  if (!s.step()) return std::nullopt;
  return StoredCalibration{s.text(0), s.text(1)};
}

void Database::backup_to(const std::string& path) const {
  sqlite3* dest = nullptr;
  if (sqlite3_open(path.c_str(), &dest) != SQLITE_OK) {
    const std::string msg = dest ? sqlite3_errmsg(dest) : "out of memory";
    sqlite3_close(dest);
    throw InputError("cannot write the copy '" + path + "': " + msg);
  }
  sqlite3_backup* b = sqlite3_backup_init(dest, "main", impl_->db, "main");
  int rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(dest);
  if (b) sqlite3_backup_finish(b);
  const std::string msg = sqlite3_errmsg(dest);
  sqlite3_close(dest);
  if (rc != SQLITE_DONE) throw InputError("cannot write the copy '" + path + "': " + msg);
}

std::string Database::export_csv(const std::string& device) const {
  std::string out = csv_header() + "\n";
  for (const auto& a : attempts(device)) out += to_csv_row(a) + "\n";
  return out;
}

nlohmann::json attempt_json(const Attempt& a) {
  nlohmann::json row = {{"device", a.device},
                        {"problem", a.problem.shape_id()},
                        {"lda", a.problem.lda},
                        {"ldb", a.problem.ldb},
                        {"ldc", a.problem.ldc},
                        {"config", a.config.id()},
                        {"status", a.status},
                        {"error", a.error},
                        {"time_s", a.median_s},
                        {"min_s", a.min_s},
                        {"max_s", a.max_s},
                        {"gflops", a.gflops},
                        {"rel_error", a.rel_error},
                        {"registers", a.registers},
                        {"spill_bytes", a.spill_bytes},
                        {"smem_bytes", a.smem_bytes},
                        {"energy_j", a.energy_j},
                        {"predicted_s", a.predicted_s},
                        {"created_at", a.created_at}};
  row["strategy"] = a.strategy.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.strategy);
  row["run"] = a.run.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.run);
  row["elapsed_s"] = a.elapsed_s ? nlohmann::json(*a.elapsed_s) : nlohmann::json(nullptr);
  // Counters as collected (tune --counters, profile); a stored text that no longer parses is
  // kept as text rather than lost.
  if (!a.counters_json.empty()) {
    try {
      row["counters"] = nlohmann::json::parse(a.counters_json);
    } catch (const nlohmann::json::exception&) {
      row["counters"] = a.counters_json;
    }
  }
  return row;
}

std::string Database::export_json(const std::string& device) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& a : attempts(device)) rows.push_back(attempt_json(a));
  return rows.dump(2);
}

nlohmann::json reference_json(const Reference& r) {
  return {{"device", r.device},        {"problem", r.problem.shape_id()},
          {"lda", r.problem.lda},      {"ldb", r.problem.ldb},
          {"ldc", r.problem.ldc},      {"library", r.library},
          {"time_s", r.time_s},        {"gflops", r.gflops},
          {"created_at", r.created_at}};
}

std::string Database::export_references_json(const std::string& device) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : references(device)) rows.push_back(reference_json(r));
  return rows.dump(2);
}

CsvImportReport Database::import_csv(const std::string& text) {
  CsvImportReport report;
  const std::vector<Attempt> good = read_attempts_csv(text, report);
  add_all(good);
  report.imported = int(good.size());
  return report;
}

}  // namespace gemmtune
