// tune --problems and kernel-set as a user runs them, on recorded measurements (no GPU).
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "model/model.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"
#include "tests/shell.hpp"

namespace {

using gemmtune::test::Run;
using gemmtune::test::run;

const std::string kExhaustive =
    std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/h100_exhaustive.csv";

std::string fresh(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  return db;
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// Every number the pattern's first group matches, in order.
std::vector<double> numbers(const std::string& text, const std::string& pattern) {
  std::vector<double> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

size_t lines(const std::string& text) {
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

// The sorted attempts of a store.
std::string attempts(const std::string& db) {
  const Run r = run("export --db " + db + " | sort");
  REQUIRE(r.status == 0);
  return r.output;
}

// A store of the exhaustive recordings, imported once for every kernel-set test.
const std::string& exhaustive_store() {
  static const std::string db = [] {
    const std::string path = fresh("gemmtune_kernel_set.db");
    const Run r = run("import --db " + path + " " + kExhaustive);
    REQUIRE(r.status == 0);
    return path;
  }();
  return db;
}

const char* kSixProblems =
    "# six recorded problems, two kinds\n"
    "-p s -m 512 -n 512 -k 512 --weight 40\n"
    "-p s -m 2048 -n 2048 -k 2048 --weight 4\n"
    "-p s -m 4096 -n 4096 -k 4096\n"
    "-p s -m 8192 -n 8192 -k 32 --weight 10\n"
    "-p s -m 6144 -n 128 -k 128 --weight 25.5\n"
    "-p d -m 512 -n 512 -k 512 --weight 3\n";

}  // namespace

TEST_CASE("workload: one budget split by expected gain, resumed from the store", "[workload]") {
  const std::string db = fresh("gemmtune_workload.db");
  const std::string file = write("gemmtune_workload.txt",
                                 "-p s -m 512 -n 512 -k 512 --weight 10\n"
                                 "# a comment, then a blank line\n\n"
                                 "-p s -m 2048 -n 2048 -k 2048\n"
                                 "-p d -m 512 -n 512 -k 512 --weight 2.5\n");
  const std::string args = "tune --replay " + kExhaustive + " --problems " + file +
                           " --domain compact --evaluations 30 --seconds 0 --db " + db;
  const Run first = run(args);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const auto budgets = numbers(first.output, "budget (\\d+) evaluations");
  const auto gains = numbers(first.output, "expected gain ([0-9.]+) us");
  const auto measured = numbers(first.output, "(\\d+) measured");
  REQUIRE(budgets.size() == 3);
  REQUIRE(gains.size() == 3);
  REQUIRE(measured.size() == 3);
  // The first share is its part of the whole by expected gain; each spends at most its share,
  // and the whole at most the budget.
  CHECK(budgets[0] == std::round(30 * gains[0] / (gains[0] + gains[1] + gains[2])));
  for (size_t i = 0; i < 3; ++i) CHECK(measured[i] <= budgets[i]);
  CHECK(measured[0] + measured[1] + measured[2] <= 30);
  // What the first two left is the last one's budget.
  CHECK(budgets[2] == 30 - measured[0] - measured[1]);
  CHECK_THAT(first.output, Catch::Contains("tuned 3 of 3 problems"));
  // The weighted total is the sum of weight x best time.
  const auto weighted = numbers(first.output, "weighted +([0-9.]+) us");
  const auto total = numbers(first.output, "weighted total ([0-9.]+) us");
  REQUIRE(weighted.size() == 3);
  REQUIRE(total.size() == 1);
  CHECK(total[0] == Approx(weighted[0] + weighted[1] + weighted[2]).epsilon(1e-3));
  const auto bests = numbers(first.output, "best +([0-9.]+) us");
  REQUIRE(bests.size() == 3);
  CHECK(weighted[0] == Approx(10 * bests[0]).epsilon(1e-3));
  CHECK(weighted[2] == Approx(2.5 * bests[2]).epsilon(1e-3));

  // A rerun tunes nothing and reports the same total.
  const std::string stored = attempts(db);
  const Run again = run(args);
  INFO(again.output);
  CHECK(again.status == 0);
  CHECK_THAT(again.output, Catch::Contains("tuned 0 of 3 problems"));
  CHECK(numbers(again.output, "(\\d+) evaluations\\)").size() == 3);  // "already tuned (N ...)"
  CHECK(numbers(again.output, "weighted total ([0-9.]+) us") == total);
  CHECK(attempts(db) == stored);

  // A problem added to the workload gets the whole budget; the others are skipped.
  std::ofstream(file, std::ios::app) << "-p s -m 4096 -n 4096 -k 4096 --weight 1\n";
  const Run grown = run(args);
  INFO(grown.output);
  CHECK(grown.status == 0);
  CHECK(numbers(grown.output, "budget (\\d+) evaluations") == std::vector<double>{30});
  CHECK_THAT(grown.output, Catch::Contains("tuned 1 of 4 problems") &&
                               Catch::Contains("s_nn_512x512x512_b1: already tuned"));
  std::filesystem::remove(file);
  fresh(db);
}

TEST_CASE("workload: a bad line names the line and tunes nothing", "[workload]") {
  const std::string db = fresh("gemmtune_workload_bad.db");
  const std::string file = "gemmtune_workload_bad.txt";
  const std::string args = "tune --replay " + kExhaustive + " --problems " + file +
                           " --domain compact --evaluations 30 --seconds 0 --db " + db;
  struct Case {
    const char* second_line;
    const char* says;
  };
  for (const Case& c : {Case{"-p s -m 2048 -n 2048 -k 2048 --weight abc", "weight 'abc'"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --weight -2", "weight '-2'"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --weight 0", "weight '0'"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --weight 1e999", "weight '1e999'"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --weight 2x", "weight '2x'"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --wieght 2", "--wieght"},
                        Case{"-p s -m 2048 -n 2048 -k 2048 --weight", "--weight"}}) {
    write(file, std::string("-p s -m 512 -n 512 -k 512\n") + c.second_line + "\n");
    const Run r = run(args);
    INFO(c.second_line << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("line 2") && Catch::Contains(c.says));
    CHECK_FALSE(std::filesystem::exists(db));
  }
  write(file, "# nothing but a comment\n\n");
  const Run empty = run(args);
  CHECK(empty.status == 2);
  CHECK_THAT(empty.output, Catch::Contains("holds no problem"));
  // A problem the recording lacks stops the workload before anything is measured.
  write(file, "-p s -m 512 -n 512 -k 512\n-p s -m 3000 -n 3000 -k 3000\n");
  const Run absent = run(args);
  CHECK(absent.status == 2);
  CHECK_THAT(absent.output, Catch::Contains("s_nn_3000x3000x3000_b1"));
  CHECK_FALSE(std::filesystem::exists(db));
  // Fewer evaluations than problems.
  write(file, "-p s -m 512 -n 512 -k 512\n-p s -m 2048 -n 2048 -k 2048\n");
  const Run few = run("tune --replay " + kExhaustive + " --problems " + file +
                      " --domain compact --evaluations 1 --seconds 0 --db " + db);
  CHECK(few.status == 2);
  CHECK_THAT(few.output, Catch::Contains("1 evaluations") && Catch::Contains("2 problems"));
  std::filesystem::remove(file);
  fresh(db);
}

TEST_CASE("kernel-set: as many kernels as problems lose nothing, fewer lose more", "[workload]") {
  const std::string file = write("gemmtune_kernel_set.txt", kSixProblems);
  double previous = 1e300;
  for (int size = 1; size <= 6; ++size) {
    const Run r = run("kernel-set --problems " + file + " --domain compact --db " +
                      exhaustive_store() + " --size " + std::to_string(size) + " --format json");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.output);
    const double total = j["weighted_total_us"], best = j["best_total_us"];
    CHECK(j["size"].get<int>() <= size);
    CHECK(j["problems"].size() == 6);
    CHECK(total >= best * (1 - 1e-9));
    CHECK(total <= previous * (1 + 1e-9));
    previous = total;
    // The total is the weighted sum of the rows; each row's loss is its time over its best.
    double sum = 0;
    for (const auto& row : j["problems"]) {
      sum += row["weight"].get<double>() * row["time_us"].get<double>();
      CHECK(row["loss"].get<double>() ==
            Approx(row["time_us"].get<double>() / row["best_us"].get<double>()));
      CHECK(row["loss"].get<double>() >= 1 - 1e-9);
    }
    CHECK(sum == Approx(total));
    if (size == 1) {
      CHECK(j["members"].size() == 1);
      CHECK(j["members"][0]["problems"] == 6);
    }
    if (size == 6) {
      CHECK(total == Approx(best));
      for (const auto& row : j["problems"]) CHECK(row["loss"].get<double>() == Approx(1.0));
    }
  }
  const Run table = run("kernel-set --problems " + file + " --domain compact --db " +
                        exhaustive_store() + " --size 2");
  INFO(table.output);
  CHECK(table.status == 0);
  CHECK_THAT(table.output, Catch::Contains("kernel set of 2") &&
                               Catch::Contains("weighted total") &&
                               Catch::Contains("s_nn_6144x128x128_b1"));
  std::filesystem::remove(file);
}

TEST_CASE("kernel-set: a problem never measured is predicted and marked", "[workload]") {
  const std::string file = write("gemmtune_kernel_set_new.txt",
                                 "-p s -m 512 -n 512 -k 512 --weight 2\n"
                                 "-p s -m 3000 -n 3000 -k 3000\n");
  const Run r = run("kernel-set --problems " + file + " --domain compact --db " +
                    exhaustive_store() + " --size 1 --format json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["problems"][1]["problem"] == "s_nn_3000x3000x3000_b1");
  CHECK(j["problems"][1]["predicted"] == true);
  CHECK(j["problems"][1]["best_predicted"] == true);
  CHECK(j["problems"][1]["time_us"].get<double>() > 0);
  // 512^3 was measured exhaustively: its own best is measured, and so is its time if the set's
  // member is that best (the member may be 3000^3's pick, predicted on 512^3 faster).
  CHECK(j["problems"][0]["best_predicted"] == false);
  if (j["problems"][0]["kernel"] == j["problems"][0]["best_kernel"])
    CHECK(j["problems"][0]["predicted"] == false);
  else
    CHECK(j["members"][0]["config"] == j["problems"][1]["kernel"]);
  const Run table = run("kernel-set --problems " + file + " --domain compact --db " +
                        exhaustive_store() + " --size 1");
  CHECK_THAT(table.output, Catch::Contains("* predicted"));
  std::filesystem::remove(file);
}

TEST_CASE("kernel-set: bad input names the value", "[workload]") {
  const std::string file = write("gemmtune_kernel_set_bad.txt", kSixProblems);
  const std::string base =
      "kernel-set --problems " + file + " --domain compact --db " + exhaustive_store();
  const Run zero = run(base + " --size 0");
  CHECK(zero.status == 2);
  CHECK_THAT(zero.output, Catch::Contains("--size 0"));
  const Run negative = run(base + " --size -3");
  CHECK(negative.status == 2);
  CHECK_THAT(negative.output, Catch::Contains("--size -3"));
  const Run csv = run(base + " --size 2 --format csv");
  CHECK(csv.status == 2);
  const Run no_store = run("kernel-set --problems " + file + " --db missing_store.db --size 2");
  CHECK(no_store.status == 2);
  CHECK_THAT(no_store.output, Catch::Contains("no store at 'missing_store.db'"));
  write(file, "\n# empty\n");
  const Run empty = run(base + " --size 2");
  CHECK(empty.status == 2);
  CHECK_THAT(empty.output, Catch::Contains("holds no problem"));
  // 1x1x1: never measured, and no configuration of the compact space fits it.
  write(file, "-p s -m 512 -n 512 -k 512\n-p s -m 1 -n 1 -k 1\n");
  const Run unknown = run(base + " --size 2");
  CHECK(unknown.status == 2);
  CHECK_THAT(unknown.output, Catch::Contains("s_nn_1x1x1_b1 has no measurement") &&
                                 Catch::Contains("no configuration of the model's space"));
  write(file, "-p s -m 512 -n 512 -k 512 --weight nan\n");
  const Run nan = run(base + " --size 2");
  CHECK(nan.status == 2);
  CHECK_THAT(nan.output, Catch::Contains("line 1") && Catch::Contains("weight 'nan'"));
  std::filesystem::remove(file);
}

TEST_CASE("bundle: export writes the set's cubins and a table the runtime reads", "[workload]") {
  const std::string file = write("gemmtune_bundle.txt", kSixProblems);
  const std::string dir = "gemmtune_bundle_dir";
  std::filesystem::remove_all(dir);
  const Run r = run("export --bundle " + dir + " --problems " + file +
                    " --size 2 --domain compact --db " + exhaustive_store());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("2 configurations") && Catch::Contains("6 problems"));
  const gemmtune::DeviceSpec d = gemmtune::find_builtin_device("H100-SXM");
  const gemmtune::Bundle b = gemmtune::read_bundle(dir, "sm_90");
  CHECK(b.device == "H100-SXM");
  CHECK(b.model_version == gemmtune::kModelVersion);
  REQUIRE(b.problems.size() == 6);
  // Two configurations; the D problem needs its own compile of one of them.
  CHECK(b.kernels.size() == 3);
  for (const gemmtune::BundleKernel& k : b.kernels) {
    REQUIRE(k.cubins.size() == 1);
    CHECK(std::filesystem::file_size(dir + "/" + k.cubins[0].second) > 1000);
  }
  // The table agrees with kernel-set: the same kernel per problem.
  const Run set = run("kernel-set --problems " + file + " --size 2 --domain compact --db " +
                      exhaustive_store() + " --format json");
  const auto j = nlohmann::json::parse(set.output);
  for (size_t i = 0; i < 6; ++i) {
    const gemmtune::BundleProblem& p = b.problems[i];
    CHECK(b.kernels[p.kernel].config.id() == j["problems"][i]["kernel"]);
    CHECK(p.time_s * 1e6 == Approx(j["problems"][i]["time_us"].get<double>()));
    // An exact shape gets its own kernel.
    const gemmtune::DispatchChoice c = gemmtune::choose_from_bundle(b, p.problem, d);
    CHECK(c.source == gemmtune::DispatchSource::Stored);
    CHECK(c.config == b.kernels[p.kernel].config);
  }
  // A shape between: the nearest shape's kernel that is valid for it.
  gemmtune::Problem between;
  between.m = between.n = between.k = 2500;  // nearer 2048^3 than 4096^3
  between = between.normalized();
  const gemmtune::DispatchChoice c = gemmtune::choose_from_bundle(b, between, d);
  CHECK(c.source == gemmtune::DispatchSource::NearestShape);
  CHECK(c.from == "s_nn_2048x2048x2048_b1");
  CHECK_FALSE(gemmtune::check_hard(between, d, c.config));
  gemmtune::Problem other = between;
  other.precision = gemmtune::Precision::Z;
  CHECK_THROWS_WITH(gemmtune::choose_from_bundle(b, other, d),
                    Catch::Contains("z_nn_2500x2500x2500_b1"));

  // Bad bundles say what is wrong.
  CHECK_THROWS_WITH(gemmtune::read_bundle(dir, "sm_80"),
                    Catch::Contains("sm_90") && Catch::Contains("sm_80"));
  CHECK_THROWS_WITH(gemmtune::read_bundle("no_such_bundle", "sm_90"),
                    Catch::Contains("no kernel bundle at 'no_such_bundle'"));
  std::filesystem::remove(dir + "/" + b.kernels[1].cubins[0].second);
  CHECK_THROWS_WITH(gemmtune::read_bundle(dir, "sm_90"),
                    Catch::Contains("lacks the sm_90 cubin of " + b.kernels[1].config.id()));
  {
    std::ifstream in(dir + "/bundle.json");
    auto table = nlohmann::json::parse(in);
    table["model_version"] = gemmtune::kModelVersion + 1;
    std::ofstream(dir + "/bundle.json") << table.dump();
  }
  CHECK_THROWS_WITH(
      gemmtune::read_bundle(dir, "sm_90"),
      Catch::Contains("model version " + std::to_string(gemmtune::kModelVersion + 1)));
  const Run no_workload = run("export --bundle " + dir + " --db " + exhaustive_store());
  CHECK(no_workload.status == 2);
  CHECK_THAT(no_workload.output, Catch::Contains("--problems"));
  std::filesystem::remove_all(dir);
  std::filesystem::remove(file);
}

TEST_CASE("kernel-set --measure: the pairs only the model gave are measured and stored",
          "[workload]") {
  // A store with every 40th recorded attempt; the whole recording answers as the GPU would.
  std::ifstream in(kExhaustive);
  std::string line, sample;
  for (int i = 0; std::getline(in, line); ++i)
    if (i == 0 || i % 40 == 0) sample += line + "\n";
  const std::string csv = write("gemmtune_kernel_set_sample.csv", sample);
  const std::string db = fresh("gemmtune_kernel_set_measure.db");
  REQUIRE(run("import --db " + db + " " + csv).status == 0);
  const std::string file = write("gemmtune_kernel_set_measure.txt", kSixProblems);
  const std::string base =
      "kernel-set --problems " + file + " --domain compact --db " + db + " --size 2 --format json";
  auto predicted_pairs = [](const nlohmann::json& j) {
    int n = 0;
    for (const auto& row : j["problems"]) {
      n += row["best_predicted"].get<bool>();
      for (const auto& m : row["members"]) n += !m.is_null() && m["predicted"].get<bool>();
    }
    return n;
  };
  const Run before = run(base);
  REQUIRE(before.status == 0);
  const int guessed = predicted_pairs(nlohmann::json::parse(before.output));
  CHECK(guessed > 0);
  const size_t stored = lines(attempts(db));

  const Run after = run(base + " --measure 20 --replay " + kExhaustive);
  INFO(after.output);
  REQUIRE(after.status == 0);
  CHECK_THAT(after.output, Catch::Contains("kernel-set: round 1 measured"));
  const auto j = nlohmann::json::parse(after.output.substr(after.output.find('{')));
  // What is left predicted, the recording lacks (the model's picks outside it); on a GPU, none.
  CHECK(predicted_pairs(j) < guessed);
  for (const auto& row : j["problems"]) CHECK(row["loss"].get<double>() >= 1 - 1e-9);
  double reported = 0;
  for (double n : numbers(after.output, "round [0-9]+ measured ([0-9]+) pairs")) reported += n;
  CHECK(reported >= guessed);
  const size_t grown = lines(attempts(db));
  CHECK(grown == stored + size_t(reported));
  // Nothing is left to measure: a second run adds nothing.
  const Run again = run(base + " --measure 20 --replay " + kExhaustive);
  CHECK(again.status == 0);
  CHECK_THAT(again.output, Catch::Contains("round 1 measured 0 pairs"));
  CHECK(lines(attempts(db)) == grown);

  // A problem the recording lacks stays predicted; the others are still measured.
  write(file, std::string(kSixProblems) + "-p s -m 3000 -n 3000 -k 3000\n");
  const Run lacking = run(base + " --measure 20 --replay " + kExhaustive);
  INFO(lacking.output);
  CHECK(lacking.status == 0);
  CHECK_THAT(lacking.output, Catch::Contains("s_nn_3000x3000x3000_b1"));

  const Run negative = run(base + " --measure -1");
  CHECK(negative.status == 2);
  CHECK_THAT(negative.output, Catch::Contains("--measure -1"));
  for (const std::string& f : {csv, file}) std::filesystem::remove(f);
  fresh(db);
}
