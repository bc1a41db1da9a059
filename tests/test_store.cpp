#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "model/model.hpp"
#include "store/store.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {
struct TempDb {
  fs::path path;
  explicit TempDb(const char* name) : path(fs::temp_directory_path() / name) { clean(); }
  ~TempDb() { clean(); }
  void clean() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  }
};

Attempt attempt(int m, const char* config, double t, const char* status = "ok") {
  Attempt a;
  a.device = "H100-SXM";
  a.problem.precision = Precision::D;
  a.problem.op_b = Op::T;
  a.problem.m = m;
  a.problem.n = 64;
  a.problem.k = 32;
  a.problem.beta = {0.5, 0};
  a.problem = a.problem.normalized();
  a.config = KernelConfig::parse(config);
  a.status = status;
  a.error = std::string(status) == "ok" ? "" : "boom, with \"quotes\"\nand a newline";
  a.median_s = t;
  a.min_s = t * 0.9;
  a.max_s = t * 1.2;
  a.repetitions = 20;
  a.gflops = a.problem.flops() / t * 1e-9;
  a.registers = 96;
  a.smem_bytes = 8192;
  a.predicted_s = t * 0.8;
  return a;
}
}  // namespace

TEST_CASE("store: attempts round-trip and the best is the fastest ok one", "[store]") {
  TempDb tmp("gemmtune_store_roundtrip.db");
  {
    Database db(tmp.path.string());
    db.save_device(find_builtin_device("H100-SXM"));
    db.add(attempt(100, "BM64_BN64", 2e-3));
    db.add_all({attempt(100, "BM32_BN64", 1e-3), attempt(100, "BM16_BN16", 5e-4, "wrong"),
                attempt(200, "BM64_BN64", 3e-3)});
  }
  Database db(tmp.path.string());  // reopened: everything persisted
  REQUIRE(db.device("H100-SXM"));
  CHECK(*db.device("H100-SXM") == find_builtin_device("H100-SXM"));
  const Problem p100 = attempt(100, "BM64", 1).problem;
  const auto all = db.attempts("H100-SXM", p100);
  REQUIRE(all.size() == 3);
  CHECK(all[0].config == KernelConfig::parse("BM64_BN64"));
  CHECK(all[0].problem == p100);
  CHECK(all[0].min_s == Approx(1.8e-3));
  CHECK(all[2].status == "wrong");
  CHECK_FALSE(all[0].created_at.empty());
  const auto best = db.best("H100-SXM", p100);
  REQUIRE(best);
  CHECK(best->config == KernelConfig::parse("BM32_BN64"));  // the faster "wrong" one is never best
  CHECK(db.has("H100-SXM", p100, KernelConfig::parse("BM16_BN16")));
  CHECK_FALSE(db.has("A100", p100, KernelConfig::parse("BM16_BN16")));
  CHECK(db.problems("H100-SXM").size() == 2);
  CHECK(db.attempts("").size() == 4);
  // Counters come back with the attempt and in the JSON export, as numbers.
  Attempt counted = attempt(300, "BM64_BN64", 1e-3);
  counted.counters_json = R"({"dram__bytes_read.sum": 405144576.0})";
  db.add(counted);
  CHECK(db.attempts("H100-SXM", counted.problem).at(0).counters_json == counted.counters_json);
  CHECK_THAT(db.export_json(), Catch::Contains("\"dram__bytes_read.sum\": 405144576.0"));
  db.save_calibration("H100-SXM", "{\"a\": 1}");
  db.save_calibration("H100-SXM", "{\"a\": 2}");
  CHECK(*db.calibration("H100-SXM") == "{\"a\": 2}");
  CHECK_FALSE(db.calibration("V100"));
}

TEST_CASE("store: an interrupted transaction loses only its own rows", "[store]") {
  TempDb tmp("gemmtune_store_crash.db");
  Database db(tmp.path.string());
  db.add(attempt(100, "BM64_BN64", 2e-3));
  db.abandoned_transaction_for_test(
      {attempt(100, "BM32_BN32", 1e-3), attempt(300, "BM32_BN32", 1e-3)});
  CHECK(db.attempts("").size() == 1);
  CHECK(db.problems("").size() == 1);
  db.add(attempt(100, "BM16_BN64", 1e-3));
  CHECK(db.attempts("").size() == 2);
}

TEST_CASE("store: CSV export and import, bad rows reported and good rows kept", "[store]") {
  TempDb a("gemmtune_store_csv_a.db"), b("gemmtune_store_csv_b.db");
  Database src(a.path.string());
  src.add_all(
      {attempt(100, "BM64_BN64", 2e-3), attempt(7, "BM32_BN16_PF3", 1e-5, "execute_error")});
  const std::string csv = src.export_csv();
  CHECK(csv.rfind(csv_header() + "\n", 0) == 0);
  std::string damaged = csv;
  damaged += "H100-SXM,s,n,n,0,8,8,8,8,8,1,1,0," + std::string(60, ',') + "\n";  // wrong width
  std::string bad_m = csv.substr(csv.find('\n') + 1);
  bad_m = bad_m.substr(0, bad_m.find('\n'));
  bad_m.replace(bad_m.find(",100,"), 5, ",0,");  // M = 0
  damaged += bad_m + "\n";
  std::string bad_status = csv.substr(csv.find('\n') + 1);
  bad_status = bad_status.substr(0, bad_status.find('\n'));
  bad_status.replace(bad_status.find(",ok,"), 4, ",great,");
  damaged += bad_status + "\n";
  Database dst(b.path.string());
  const CsvImportReport r = dst.import_csv(damaged);
  CHECK(r.imported == 2);
  REQUIRE(r.rejected.size() == 3);
  CHECK_THAT(r.rejected[0], Catch::Contains("line 4") && Catch::Contains("fields"));
  CHECK_THAT(r.rejected[1], Catch::Contains("M = 0"));
  CHECK_THAT(r.rejected[2], Catch::Contains("status 'great'"));
  const auto back = dst.attempts("");
  REQUIRE(back.size() == 2);
  CHECK(back[1].error == "boom, with \"quotes\" and a newline");
  CHECK(back[1].config == KernelConfig::parse("BM32_BN16_PF3"));
  CHECK(dst.export_csv() == csv);  // what was imported exports identically
  CHECK_THAT(dst.export_json(), Catch::Contains("\"status\": \"execute_error\""));
  CHECK_THROWS_WITH(dst.import_csv(""), Catch::Contains("empty"));
}

TEST_CASE("store: foreign files and other schema versions are refused and left untouched",
          "[store]") {
  TempDb junk("gemmtune_store_junk.db"), other("gemmtune_store_other.db"),
      old("gemmtune_store_old.db");
  {
    std::ofstream(junk.path)
        << "this is not a database at all, just text that is long enough......";
  }
  const auto size_before = fs::file_size(junk.path);
  CHECK_THROWS_WITH(Database(junk.path.string()), Catch::Contains("cannot read the store"));
  CHECK(fs::file_size(junk.path) == size_before);
  sqlite3* raw = nullptr;
  sqlite3_open(other.path.string().c_str(), &raw);
  sqlite3_exec(raw, "CREATE TABLE x(y)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  CHECK_THROWS_WITH(Database(other.path.string()), Catch::Contains("not a gemmtune store"));
  { Database db(old.path.string()); }
  sqlite3_open(old.path.string().c_str(), &raw);
  sqlite3_exec(raw, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(raw);
  CHECK_THROWS_WITH(Database(old.path.string()),
                    Catch::Contains("schema version 99") && Catch::Contains("versions 1 to 2"));
}

TEST_CASE("store: which calibration ranks: none, a file, the store's, the shipped one", "[store]") {
  TempDb tmp("gemmtune_store_calibration_choice.db");
  const std::string device = "NVIDIA H100 80GB HBM3";  // the driver's name for an H100-SXM
  const std::string version = std::to_string(kModelVersion);
  const ModelCoefficients shipped = coefficients_from_json(shipped_calibration(device)->json);
  // No store: the shipped calibration, found by the driver's name.
  ChosenCalibration c = choose_calibration("auto", device, nullptr);
  CHECK(c.coefficients == shipped);
  CHECK(c.description == "shipped calibration for H100-SXM (model v" + version + ")");
  CHECK(c.warning.empty());
  c = choose_calibration("none", device, nullptr);
  CHECK(c.coefficients == ModelCoefficients{});
  CHECK(c.description == "none");
  c = choose_calibration("auto", "RTX4090", nullptr);
  CHECK(c.coefficients == ModelCoefficients{});
  CHECK_THAT(c.description, Catch::StartsWith("none") && Catch::Contains("RTX4090"));
  // A store without a calibration for the device: still the shipped one.
  Database db(tmp.path.string());
  db.save_calibration("A100-SXM4-80GB", coefficients_to_json(ModelCoefficients{}));
  CHECK(choose_calibration("auto", device, &db).coefficients == shipped);
  // The store's latest calibration for the device wins over the shipped one.
  ModelCoefficients own;
  own.fma_efficiency = 0.6;
  db.save_calibration(device, coefficients_to_json(own));
  c = choose_calibration("auto", device, &db);
  CHECK(c.coefficients == own);
  CHECK_THAT(c.description, Catch::StartsWith("store calibration of 20") &&
                                Catch::Contains("UTC for " + device) &&
                                Catch::EndsWith("(model v" + version + ")"));
  // Unless it is refused: another model version is a warning, and the model runs uncalibrated.
  const std::string other = std::to_string(kModelVersion + 1);
  db.save_calibration(device, R"({"model_version": )" + other + R"(, "fma_efficiency": 0.7})");
  c = choose_calibration("auto", device, &db);
  CHECK(c.coefficients == ModelCoefficients{});
  CHECK_THAT(c.description, Catch::StartsWith("none"));
  CHECK_THAT(c.warning, Catch::Contains("was fitted for model version " + other) &&
                            Catch::Contains("model is version " + version) &&
                            Catch::Contains("uncalibrated"));
  // A named file that is refused is an error.
  const auto file = (fs::temp_directory_path() / "gemmtune_other_version.json").string();
  std::ofstream(file) << R"({"model_version": )" << other << "}";
  CHECK_THROWS_AS(choose_calibration(file, device, &db), InputError);
  CHECK_THROWS_WITH(choose_calibration(file, device, &db),
                    Catch::Contains(file + " was fitted for model version " + other));
  std::ofstream(file) << coefficients_to_json(own);
  c = choose_calibration(file, device, &db);
  CHECK(c.coefficients == own);
  CHECK(c.description == "file " + file + " (model v" + version + ")");
  fs::remove(file);
}

TEST_CASE("calibration samples carry the spec of the GPU they were recorded on", "[store]") {
  // Large enough that the two GPUs' memory bandwidths give different predictions.
  Attempt h100 = attempt(65536, "BM64_BN64", 3e-5), h200 = h100, unknown = h100;
  h100.device = "NVIDIA H100 80GB HBM3";
  h200.device = "NVIDIA H200";
  h200.median_s = 2e-5;
  unknown.device = "Some Future GPU";
  const auto samples = calibration_samples({h100, h200, unknown});
  REQUIRE(samples.size() == 3);  // one shape and configuration on three GPUs: three samples
  REQUIRE(samples[0].device);
  CHECK(samples[0].device->name == "H100-SXM");
  REQUIRE(samples[1].device);
  CHECK(samples[1].device->name == "H200");
  CHECK(samples[1].time_s == Approx(2e-5));
  CHECK_FALSE(samples[2].device);  // no built-in spec: the fit's own device is used
  CHECK(sample_key(samples[1]) == "H200:" + problem_key(h200.problem));
  CHECK(sample_key(samples[2]) == problem_key(h200.problem));
  // Each is predicted on its own spec, whatever device the fit is given.
  const DeviceSpec h100_spec = find_builtin_device("H100-SXM");
  const auto on_h200 = predict_measured(h100_spec, samples[1], {});
  REQUIRE(on_h200);
  CHECK(on_h200->time_s == predict(h200.problem, find_builtin_device("H200"), h200.config).time_s);
  CHECK(on_h200->time_s != predict(h200.problem, h100_spec, h200.config).time_s);
  CHECK(predict_measured(h100_spec, samples[2], {})->time_s ==
        predict(h200.problem, h100_spec, h200.config).time_s);
}

TEST_CASE("calibration samples: a configuration measured again is one sample at its median time",
          "[store]") {
  const char* id = "BM64_BN64";
  const char* other = "BM32_BN64";
  std::vector<Attempt> attempts = {attempt(256, id, 3e-5), attempt(256, other, 5e-5),
                                   attempt(256, id, 1e-5), attempt(256, id, 2e-5),
                                   attempt(512, id, 4e-5), attempt(256, id, 9e-6, "wrong")};
  Attempt padded = attempt(256, id, 7e-5);
  padded.problem.lda = 300;  // another problem: its leading dimension differs
  attempts.push_back(padded);
  const auto samples = calibration_samples(attempts);
  REQUIRE(samples.size() == 4);
  CHECK(samples[0].config.id() == KernelConfig::parse(id).id());
  CHECK(samples[0].time_s == Approx(2e-5));  // median of 3, 1 and 2 (the wrong one left out)
  CHECK(samples[1].time_s == Approx(5e-5));
  CHECK(samples[2].problem.m == 512);
  CHECK(samples[2].time_s == Approx(4e-5));
  CHECK(samples[3].problem.lda == 300);
  CHECK(samples[3].time_s == Approx(7e-5));
  CHECK_FALSE(samples[0].drawn);
  // Drawn from the domain by a recorder's sample step in any of its measurements.
  attempts[2].strategy = std::string(kDrawnStrategy);
  attempts[4].strategy = "hybrid";
  const auto marked = calibration_samples(attempts);
  CHECK(marked[0].drawn);
  CHECK_FALSE(marked[1].drawn);
  CHECK_FALSE(marked[2].drawn);
  // An FP16 problem's measurements are samples like the others': the trees are fitted on them.
  Attempt half = attempt(256, id, 3e-5);
  half.problem.precision = Precision::H;
  attempts.push_back(half);
  const auto every = calibration_samples(attempts);
  REQUIRE(every.size() == 5);
  CHECK(every[4].problem.precision == Precision::H);
  CHECK(every[4].time_s == Approx(3e-5));
}
