// The command as a user runs it: exit codes and one-line errors for bad input.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "core/core.hpp"
#include "model/model.hpp"
#include "store/store.hpp"
#include "tests/catch.hpp"
#include "tests/shell.hpp"

using gemmtune::test::Run;
using gemmtune::test::run;

namespace {

// The rows of a --format csv listing, its header left out, each split at the commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    out.push_back(std::move(fields));
  }
  return out;
}

}  // namespace

TEST_CASE("cli: predict ranks a built-in GPU without a GPU", "[cli]") {
  const Run r = run("predict --gpu H100-SXM -p s -m 1024 -n 1024 -k 1024 --top 3");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("why:") && Catch::Contains("BM"));
  const Run j = run("predict --gpu A100 -p z --opa c -m 100 -n 200 -k 300 --top 2 --format json");
  INFO(j.output);
  CHECK(j.status == 0);
  CHECK_THAT(j.output, Catch::Contains("\"terms_us\"") && Catch::Contains("\"rank\": 2"));
  const Run c = run("predict --gpu V100 -p d -m 512 -n 512 -k 512 --top 1 --format csv");
  CHECK(c.status == 0);
  CHECK_THAT(c.output, Catch::StartsWith("rank,config,time_us"));
}

TEST_CASE("cli: predict --config predicts the given configurations; FP16 ranks tensor cores",
          "[cli]") {
  // The model's first two, asked for in reverse order, come back in that order with its times.
  const Run top = run("predict -p h --opa t --opb n -m 2048 -n 2048 -k 2048 --top 2 --format csv");
  REQUIRE(top.status == 0);
  std::vector<std::string> ids, times;
  for (const auto& fields : csv_rows(top.output)) {
    ids.push_back(fields.at(1));
    times.push_back(fields.at(2));
    CHECK(gemmtune::KernelConfig::parse(fields.at(1)).mma >= 3);  // m16n8k8 or k16
  }
  REQUIRE(ids.size() == 2);
  const Run given = run("predict -p h --opa t --opb n -m 2048 -n 2048 -k 2048 --format csv -c " +
                        ids[1] + " " + ids[0]);
  INFO(given.output);
  REQUIRE(given.status == 0);
  CHECK_THAT(given.output, Catch::Contains("1," + ids[1] + "," + times[1]) &&
                               Catch::Contains("2," + ids[0] + "," + times[0]));
  // A configuration that cannot run the problem is refused, naming the rule.
  const Run simt = run("predict -p h --opa t --opb n -m 2048 -n 2048 -k 2048 -c BM64_BN64_BK8");
  CHECK(simt.status != 0);
  CHECK_THAT(simt.output, Catch::Contains("tensor cores only"));
  const Run both = run("predict -p s -m 64 -n 64 -k 64 --shortlist -c BM64_BN64_BK8");
  CHECK(both.status != 0);
  CHECK_THAT(both.output, Catch::Contains("--config and --shortlist"));
}

TEST_CASE("cli: predict --compiled-shortlist ranks the model's first N with their registers",
          "[cli]") {
  // Uncalibrated: no proven kernels join the compiled ones (the next case).
  const std::string args =
      "predict -p s --opa t -m 600 -n 500 -k 700 --top 6 --cache '' --calibration none ";
  auto rows = [](const std::string& csv) {
    std::vector<std::pair<std::string, double>> out;  // config, predicted us
    for (const auto& fields : csv_rows(csv))
      out.emplace_back(fields.at(1), std::stod(fields.at(2)));
    return out;
  };
  const Run plain = run(args + "--format csv"),
            compiled = run(args + "--compiled-shortlist 6 --format csv");
  INFO(compiled.output);
  REQUIRE(plain.status == 0);
  REQUIRE(compiled.status == 0);
  const auto before = rows(plain.output), after = rows(compiled.output);
  REQUIRE(before.size() == 6);
  REQUIRE_FALSE(after.empty());
  // The same configurations (less any the compiler rules out), ordered by the time predicted
  // with the compiler's registers.
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(std::count_if(before.begin(), before.end(),
                        [&](const auto& b) { return b.first == after[i].first; }) == 1);
    if (i > 0) CHECK(after[i - 1].second <= after[i].second);
  }
  // Configurations the compiler rules out leave the list; deeper ones keep it at --top.
  CHECK(after.size() == 6);
  const Run json = run(args + "--compiled-shortlist 6 --format json");
  REQUIRE(json.status == 0);
  CHECK_THAT(json.output, Catch::Contains("\"compiled\": 6") && Catch::Contains("\"proven\": 0") &&
                              Catch::Contains("\"ruled_out\": "));
  const Run table = run(args + "--compiled-shortlist 6");
  CHECK_THAT(table.output,
             Catch::Contains("the model's first 6 and 0 proven kernels of the calibration compiled "
                             "for sm_90"));
  for (const char* bad :
       {"--compiled-shortlist -1", "--compiled-shortlist 5000",
        "--compiled-shortlist 4 --shortlist", "--compiled-shortlist 4 -c BM64_BN64_BK8"}) {
    const Run r = run(args + bad);
    INFO(bad << ": " << r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Catch::Contains("--compiled-shortlist"));
  }
  const Run none = run("predict -p s -m 64 -n 64 -k 64 --top 0");
  CHECK(none.status != 0);
  CHECK_THAT(none.output, Catch::Contains("--top = 0 must be at least 1"));
}

TEST_CASE("cli: predict --compiled-shortlist compiles the calibration's proven kernels too",
          "[cli]") {
  const std::string args = "predict -p s --opa t -m 600 -n 500 -k 700 --cache '' --calibration ";
  const Run plain = run(args + "none --top 20 --format csv");
  REQUIRE(plain.status == 0);
  const auto ranked = csv_rows(plain.output);
  REQUIRE(ranked.size() == 20);
  // A proven kernel the space ranks 20th, one of another precision, and one this problem
  // cannot run (an FP64 tensor-core shape for S): only the first joins the compiled six.
  const std::string deep = ranked.back().at(1);
  const std::string path = "gemmtune_cli_proven.json";
  std::ofstream(path) << R"({"model_version": )" << gemmtune::kModelVersion
                      << R"(, "proven_kernels": {"s": [")" << deep << R"(", ")" << deep
                      << R"(_MM1"], "d": [")" << ranked.front().at(1) << R"("]}})";
  const Run json = run(args + path + " --top 12 --compiled-shortlist 6 --format json");
  INFO(json.output);
  REQUIRE(json.status == 0);
  CHECK_THAT(json.output, Catch::Contains("\"compiled\": 6") && Catch::Contains("\"proven\": 1"));
  CHECK_THAT(json.output, Catch::Contains("\"config\": \"" + deep + "\""));
  const Run table = run(args + path + " --top 3 --compiled-shortlist 6");
  CHECK_THAT(table.output, Catch::Contains("the model's first 6 and 1 proven kernels"));
  // Without a compiled shortlist the list is the space's alone.
  const Run estimate = run(args + path + " --top 12 --format csv");
  REQUIRE(estimate.status == 0);
  for (const auto& row : csv_rows(estimate.output)) CHECK(row.at(1) != deep);
  std::remove(path.c_str());
}

TEST_CASE("cli: devices lists each spec's peaks, tensor-core FP16 and TF32 among them", "[cli]") {
  const Run r = run("devices");
  INFO(r.output);
  REQUIRE(r.status == 0);
  // H100-SXM: 1024 FP16 and 512 TF32 FMAs per clock on 132 SMs at 1980 MHz.
  CHECK_THAT(r.output, Catch::Contains("FP16 mma  535265 GFLOP/s  TF32 mma  267633 GFLOP/s"));
  CHECK_THAT(r.output, Catch::Contains("FP16 mma       0 GFLOP/s"));  // the V100 has none
}

TEST_CASE("cli: space prints the funnel", "[cli]") {
  const Run r = run("space --gpu GTX1060 -p s -m 8000 -n 8000 -k 8000");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("raw space") && Catch::Contains("warp_multiple") &&
                           Catch::Contains("relevant_variants"));
}

TEST_CASE("cli: space --why says where each configuration leaves the space", "[cli]") {
  const std::string space = "space -p s -m 512 -n 512 -k 512 --domain compact --format csv";
  auto listed = [](const std::string& csv) {
    std::vector<std::string> ids;
    std::istringstream lines(csv);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("config,,", 0) == 0) ids.push_back(line.substr(8));
    return ids;
  };
  const Run kept_run = run(space + " --list"),
            wider_run = run(space + " --list --disable relevant_variants");
  REQUIRE(kept_run.status == 0);
  REQUIRE(wider_run.status == 0);
  const std::vector<std::string> kept = listed(kept_run.output), wider = listed(wider_run.output);
  REQUIRE_FALSE(kept.empty());
  std::string soft;  // kept only with the last soft stage off
  for (const auto& id : wider)
    if (std::find(kept.begin(), kept.end(), id) == kept.end()) {
      soft = id;
      break;
    }
  REQUIRE_FALSE(soft.empty());
  std::string outside = kept.front();  // a raster the compact domain does not enumerate
  const auto rs = outside.find("_RS");
  REQUIRE(rs != std::string::npos);
  outside.replace(rs, 4, "_RS4");
  const std::string hard =
      "BM64_BN64_BK8_DX16_DY16_DXA16_DYA16_DXB16_DYB16_VA1_VB1_LA1_LB1_PD1_PF0_ST2_UR0_RS1_VS1_ED0";
  const std::string ids = " --why " + kept.front() + " " + soft + " " + outside + " " + hard;

  const Run csv = run(space + ids);
  INFO(csv.output);
  REQUIRE(csv.status == 0);
  CHECK_THAT(csv.output, Catch::Contains("why,kept," + kept.front() + "\n") &&
                             Catch::Contains("why,relevant_variants," + soft + "\n") &&
                             Catch::Contains("why,domain," + outside + "\n") &&
                             Catch::Contains("why,layout_divides," + hard + "\n"));
  const Run table = run(space.substr(0, space.find(" --format")) + ids);
  INFO(table.output);
  REQUIRE(table.status == 0);
  CHECK_THAT(table.output,
             Catch::Contains(kept.front() + ": in the space") &&
                 Catch::Contains(soft + ": pruned by the soft stage relevant_variants") &&
                 Catch::Contains(outside + ": outside the domain: RS4 is not among the compact "
                                           "domain's RS values") &&
                 Catch::Contains(hard + ": pruned by the hard stage layout_divides: tile 64x64x8"));

  const Run bad = run(space + " --why BM64_XY3");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("unknown configuration id key 'XY'"));
}

TEST_CASE("cli: predict --shortlist lists one configuration per tile family first", "[cli]") {
  const std::string args =
      "predict -p s -m 4096 -n 4096 -k 4096 --domain compact --top 6 "
      "--format csv";
  const Run plain = run(args), shortlist = run(args + " --shortlist");
  REQUIRE(plain.status == 0);
  REQUIRE(shortlist.status == 0);
  auto families = [](const std::string& csv) {
    std::vector<std::string> out;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);  // header
    while (std::getline(lines, line)) {
      const size_t first = line.find(',') + 1;
      const std::string id = line.substr(first, line.find(',', first) - first);
      const gemmtune::KernelConfig c = gemmtune::KernelConfig::parse(id);
      out.push_back(std::to_string(c.blk_m) + "x" + std::to_string(c.blk_n) + "x" +
                    std::to_string(c.blk_k) + "/" + std::to_string(c.dim_x) + "x" +
                    std::to_string(c.dim_y));
    }
    return out;
  };
  const auto in_plain = families(plain.output), in_shortlist = families(shortlist.output);
  REQUIRE(in_shortlist.size() == 6);
  CHECK(std::set<std::string>(in_shortlist.begin(), in_shortlist.end()).size() == 6);
  // The model's favourite family holds several of the plain top 6.
  CHECK(std::set<std::string>(in_plain.begin(), in_plain.end()).size() < 6);
  // Both start from the best-predicted time (ties may pick another member of it).
  auto first_time = [](const std::string& csv) {
    const std::string row = csv.substr(csv.find('\n') + 1);
    const size_t config_end = row.find(',', row.find(',') + 1) + 1;
    return std::stod(row.substr(config_end, row.find(',', config_end) - config_end));
  };
  CHECK(first_time(shortlist.output) == first_time(plain.output));
}

TEST_CASE("cli: the full domain ranks split-K kernels first for a thin problem only", "[cli]") {
  // 64 x 64 x 32768: one to sixteen tiles, most SMs idle without a split. The compact domain
  // has no SK; a square problem fills the GPU without one.
  const Run compact =
      run("predict -p s -m 64 -n 64 -k 32768 --top 1 --domain compact --format csv");
  REQUIRE(compact.status == 0);
  CHECK_THAT(compact.output, !Catch::Contains("_SK"));
  const Run split = run("predict -p s -m 64 -n 64 -k 32768 --top 1 --format csv");
  REQUIRE(split.status == 0);
  CHECK_THAT(split.output, Catch::Contains("_SK"));
  const Run square = run("predict -p s -m 2048 -n 2048 -k 2048 --top 3 --format csv");
  REQUIRE(square.status == 0);
  CHECK_THAT(square.output, !Catch::Contains("_SK"));
  const Run source = run("source --config BM32_BN32_BK16_DX8_DY8_DXA32_DXB16_SK4 -p d");
  CHECK(source.status == 0);
  CHECK_THAT(source.output,
             Catch::Contains("#define SPLIT_K 4") && Catch::Contains("gemmtune_scale_c"));
  const Run bad = run("predict -p s -m 64 -n 64 -k 64 --domain splits");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("full, wide, compact"));
}

TEST_CASE("cli: source prints a complete kernel", "[cli]") {
  const Run r = run("source --config BM64_BN64_BK16_DX16_DY16_DXA16_DXB16 -p c --opa c --opb t");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("#define GT_PREC 2") && Catch::Contains("gemmtune_kernel"));
}

TEST_CASE("cli: bad input gets one line and a non-zero exit", "[cli]") {
  struct Case {
    const char* args;
    const char* says;
  };
  const std::string spec = "gemmtune_cli_bad_spec.json";
  std::ofstream(spec) << "{\"name\": \"broken\", \"sm_count\": ";
  const Case cases[] = {
      {"predict -p s -m 0 -n 8 -k 8", "M = 0"},
      {"predict -p s -m 8 -n 8 -k 8 --lda 4", "lda = 4"},
      {"predict --gpu B300 -p s -m 8 -n 8 -k 8", "known: H100-SXM"},
      {"predict --gpu gemmtune_cli_bad_spec.json -p s -m 8 -n 8 -k 8", "not valid JSON"},
      {"predict -p q -m 8 -n 8 -k 8", "precision 'q'"},
      {"predict -p s --opa c -m 8 -n 8 -k 8", "complex"},
      {"source --config BM64_BN64_BK8_DX4_DY4_DXA16_DXB8", "warp_multiple"},
      {"source --config BM64_ZZ1", "unknown configuration id key 'ZZ'"},
      {"measure -p s -m 8 -n 8 -k 8 --compiled-shortlist -1", "--compiled-shortlist"},
      {"measure -p s -m 8 -n 8 -k 8 --batch-kind pointer --keep", "--keep stores strided"},
      {"measure -p s -m 8 -n 8 -k 8 --batch-kind variable --format json", "prints a table only"},
      {"calibrate --evaluations 0", "--evaluations = 0 must be >= 1"},
      {"calibrate --seconds 0", "--seconds = 0 must be > 0"},
  };
  for (const Case& c : cases) {
    const Run r = run(c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains(c.says));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  std::remove(spec.c_str());
  // No GPU visible (hidden on a machine that has one): 'local' says so and suggests the table.
  const std::string cmd = std::string("CUDA_VISIBLE_DEVICES= ") + GEMMTUNE_CLI +
                          " predict --gpu local -p s -m 8 -n 8 -k 8 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf{};
  const size_t n = fread(buf.data(), 1, buf.size() - 1, pipe);
  const int status = pclose(pipe);
  const std::string out(buf.data(), n);
  INFO(out);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(out, Catch::Contains("no CUDA GPU") && Catch::Contains("--gpu H100-SXM"));
}

TEST_CASE("cli: calibrate, then tune --recalibrate keeps the calibration the next ranking uses",
          "[cli]") {
  const std::string db = "gemmtune_cli_recalibrate.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  const std::string data = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/";
  // A few replayed measurements of one problem: the coefficients are refitted, but 60
  // measurements are too few for the 74 weights of the correction.
  const Run first = run("tune --replay " + data + "h100_exhaustive.csv -p d -m 4096 -n 4096 " +
                        "-k 4096 --domain compact --evaluations 60 --calibration none " +
                        "--recalibrate --db " + db);
  INFO(first.output);
  CHECK(first.status == 0);
  CHECK_THAT(first.output, Catch::Contains("recalibrated H100-SXM on 60 stored") &&
                               Catch::Contains("log-time correction not fitted"));
  // The sampled sweeps of 25 problems are enough for it.
  const Run full = run("calibrate -i " + data + "h100_sweeps.csv --seconds 5 --db " + db);
  INFO(full.output);
  CHECK(full.status == 0);
  CHECK_THAT(full.output, Catch::Contains("log-time correction refitted on 4691 measurements"));
  const Run ranked = run("predict -p s -m 2048 -n 2048 -k 2048 --top 1 --db " + db);
  INFO(ranked.output);
  CHECK_THAT(ranked.output, Catch::Contains("calibrated correction x"));
  // A later tune refines the coefficients on the store's few measurements and keeps the
  // correction, so the next problem's ranking still has it.
  const Run next = run("tune --replay " + data + "h100_exhaustive.csv -p s -m 2048 -n 2048 " +
                       "-k 2048 --domain compact --evaluations 60 --recalibrate --db " + db);
  INFO(next.output);
  CHECK(next.status == 0);
  CHECK_THAT(next.output, Catch::Contains("log-time correction kept from the start"));
  const Run after = run("predict -p d -m 1024 -n 1024 -k 1024 --top 1 --db " + db);
  CHECK_THAT(after.output, Catch::Contains("calibrated correction x"));
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
}

TEST_CASE("cli: calibrate stops at a count of evaluations: the same data, the same calibration",
          "[cli]") {
  const std::string data = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/";
  std::string json[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = "gemmtune_cli_calibrate_" + std::to_string(i) + ".json";
    const Run r = run("calibrate -i " + data + "h100_sweeps.csv --evaluations 40 --dry-run -o " +
                      out + " --db gemmtune_cli_calibrate_none.db");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("(coefficients, 40 evaluations)"));
    CHECK_THAT(r.output, !Catch::Contains("the time limit"));
    std::ifstream f(out);
    json[i].assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::remove(out.c_str());
  }
  CHECK(json[0].size() > 1000);
  CHECK(json[0] == json[1]);
  // A time limit that stops the fit first says so.
  const Run hurried = run("calibrate -i " + data +
                          "h100_sweeps.csv --seconds 0.001 --dry-run --db gemmtune_cli_calibrate_"
                          "none.db");
  CHECK(hurried.status == 0);
  CHECK_THAT(hurried.output, Catch::Contains("warning: the fit stopped at the time limit"));
}

TEST_CASE("cli: predict ranks with the shipped calibration unless told otherwise", "[cli]") {
  const std::string db = "gemmtune_cli_calibration_choice.db";
  const auto clean = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  };
  clean();
  const std::string version = std::to_string(gemmtune::kModelVersion);
  const std::string args =
      "predict -p s -m 1024 -n 1024 -k 1024 --domain compact --top 1 --db " + db;
  // The first row of a table or CSV listing: its configuration id.
  const auto first_config = [](const std::string& out) {
    const size_t row =
        out.find("\n   1  ") != std::string::npos ? out.find("\n   1  ") + 7 : out.find("\n1,") + 3;
    return out.substr(row, out.find_first_of(" ,", row) - row);
  };
  const Run shipped = run(args), none = run(args + " --calibration none");
  INFO(shipped.output << "\n" << none.output);
  REQUIRE(shipped.status == 0);
  REQUIRE(none.status == 0);
  CHECK_THAT(shipped.output,
             Catch::Contains("\ncalibration: shipped calibration for H100-SXM (model v" + version +
                             ")\n"));
  CHECK_THAT(none.output, Catch::Contains("\ncalibration: none\n"));
  // On this problem the calibration moves the model's pick.
  CHECK(first_config(shipped.output) != first_config(none.output));
  CHECK_FALSE(gemmtune::KernelConfig::parse(first_config(shipped.output)).id().empty());
  // JSON says which calibration ranked; CSV keeps its columns.
  const Run json = run(args + " --format json");
  CHECK_THAT(json.output, Catch::Contains("\"calibration\": \"shipped calibration for H100-SXM"));
  const Run csv = run(args + " --format csv");
  CHECK_THAT(csv.output,
             Catch::StartsWith("rank,config,time_us,gflops,occupancy,blocks_per_sm,registers,"
                               "smem_bytes,limit,compute_us,shared_us,latency_us,l2_us,dram_us,"
                               "launch_us,wave_efficiency\n1,"));
  CHECK(first_config(csv.output) == first_config(shipped.output));

  // The store's calibration for the GPU outranks the shipped one.
  gemmtune::ModelCoefficients own;
  own.fma_efficiency = 0.6;
  own.mem_latency_cycles = 1900;
  gemmtune::Database(db).save_calibration("H100-SXM", gemmtune::coefficients_to_json(own));
  const Run stored = run(args);
  INFO(stored.output);
  CHECK(stored.status == 0);
  CHECK_THAT(stored.output, Catch::Contains("\ncalibration: store calibration of "));

  // A calibration of another model version: named, it is an error; stored, a warning and the
  // uncalibrated ranking.
  const std::string other = std::to_string(gemmtune::kModelVersion + 1);
  const std::string file = "gemmtune_cli_other_version.json";
  std::ofstream(file) << R"({"model_version": )" << other << R"(, "fma_efficiency": 0.7})";
  const Run named = run(args + " --calibration " + file);
  INFO(named.output);
  CHECK(named.status == 2);
  CHECK_THAT(named.output, Catch::Contains(file + " was fitted for model version " + other +
                                           ", this gemmtune's model is version " + version));
  CHECK(std::count(named.output.begin(), named.output.end(), '\n') == 1);
  gemmtune::Database(db).save_calibration(
      "H100-SXM", R"({"model_version": )" + other + R"(, "fma_efficiency": 0.7})");
  const Run refused = run(args);
  INFO(refused.output);
  CHECK(refused.status == 0);
  CHECK_THAT(refused.output, Catch::Contains("warning: the store calibration of ") &&
                                 Catch::Contains("was fitted for model version " + other) &&
                                 Catch::Contains("\ncalibration: none ("));
  CHECK(first_config(refused.output) == first_config(none.output));
  std::remove(file.c_str());
  clean();
}

TEST_CASE("cli: problems draws the same list for a seed, in the options' syntax", "[cli]") {
  const Run a = run("problems --seed 7 --count 12"), b = run("problems --seed 7 --count 12");
  const Run c = run("problems --seed 8 --count 12");
  REQUIRE(a.status == 0);
  CHECK(a.output == b.output);
  CHECK(a.output != c.output);
  std::istringstream lines(a.output);
  std::string line;
  int problems = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++problems;
    // Each line is a problem the other commands take as it is.
    const Run p = run("predict " + line + " --top 1 --format csv --calibration none");
    INFO(line << "\n" << p.output);
    CHECK(p.status == 0);
  }
  CHECK(problems == 12);
  CHECK(run("problems --count 0").status == 2);

  // The tensor-core precisions on their own: every line is h, b or t, and predict takes it.
  const Run reduced = run("problems --seed 7 --count 6 --precisions hbt");
  REQUIRE(reduced.status == 0);
  CHECK_THAT(reduced.output, Catch::StartsWith("# 6 problems, seed 7, precisions hbt"));
  std::istringstream reduced_lines(reduced.output);
  int drawn = 0;
  while (std::getline(reduced_lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++drawn;
    INFO(line);
    CHECK((line.rfind("--precision h ", 0) == 0 || line.rfind("--precision b ", 0) == 0 ||
           line.rfind("--precision t ", 0) == 0));
    CHECK(run("predict " + line + " --top 1 --format csv --calibration none").status == 0);
  }
  CHECK(drawn == 6);
  const Run bad = run("problems --precisions sx");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Catch::Contains("'x'"));
}

TEST_CASE("cli: record resumes where it stopped and keeps what it measured", "[cli]") {
  const std::string db = "gemmtune_cli_record.db", list = "gemmtune_cli_record.txt";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  {
    std::ofstream out(list);
    out << "# two recorded problems\n--precision s --m 512 --n 512 --k 512\n\n"
        << "--precision d --m 512 --n 512 --k 512\n";
  }
  const std::string replay = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/h100_exhaustive.csv";
  const std::string args = "record --problems " + list + " --replay " + replay +
                           " --domain compact --tune-seconds 2 --random 40 --db " + db;
  const Run first = run(args);
  INFO(first.output);
  REQUIRE(first.status == 0);
  CHECK_THAT(first.output, Catch::Contains("[1/2] s_nn_512x512x512_b1") &&
                               Catch::Contains("recorded 2 of 2 problems"));
  const Run shown = run("show --db " + db);
  const Run again = run(args);
  INFO(again.output);
  CHECK(again.status == 0);
  CHECK_THAT(again.output, !Catch::Contains("[1/2]") && Catch::Contains("recorded 2 of 2"));
  CHECK(run("show --db " + db).output == shown.output);  // nothing measured twice
  {
    std::ofstream out(list);
    out << "--precision s --m 512 --n 512 --k 512\n--precision q --m 5 --n 5 --k 5\n";
  }
  const Run bad = run(args);
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Catch::Contains("line 2") && Catch::Contains("precision 'q'"));
  std::remove(list.c_str());
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
}

TEST_CASE("cli: import of a file with no valid row fails and names the first bad one", "[cli]") {
  const std::string db = "gemmtune_cli_import.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  const Run r = run("import --db " + db + " " + GEMMTUNE_SOURCE_DIR "/README.md");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("holds no valid attempt") &&
                           Catch::Contains("the store is unchanged"));
  const std::string csv = "gemmtune_cli_import.csv";
  {
    std::ifstream in(GEMMTUNE_SOURCE_DIR "/tests/data/h100_sweeps.csv");
    std::ofstream out(csv);
    std::string line;
    for (int i = 0; i < 3 && std::getline(in, line); ++i)
      out << line << (i == 0 ? ",from_another_tool" : ",1") << "\n";
  }
  const Run extra = run("import --db " + db + " " + csv);
  CHECK(extra.status == 0);
  CHECK_THAT(extra.output, Catch::Contains("imported 2 attempts") &&
                               Catch::Contains("ignored unknown columns: from_another_tool"));
  std::remove(csv.c_str());
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
}
