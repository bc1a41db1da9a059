#include <algorithm>
#include <filesystem>
#include <map>

#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {
Problem shape(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda = 0) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = lda;
  return p.normalized();
}
Attempt stored(const Problem& p, const char* config, double t, const char* device = "H100-SXM") {
  Attempt a;
  a.device = device;
  a.problem = p;
  a.config = KernelConfig::parse(config);
  a.median_s = t;
  return a;
}
}  // namespace

TEST_CASE("runtime: dispatch prefers stored, then the nearest tuned shape, then the model",
          "[runtime]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto path = std::filesystem::temp_directory_path() / "gemmtune_dispatch_test.db";
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);

  // No store at all: the model's pick, ranked with the shipped calibration, and the missing
  // file is not created.
  const auto shipped = shipped_calibration(d.name);
  REQUIRE(shipped);
  const ModelCoefficients shipped_coefficients = coefficients_from_json(shipped->json);
  DispatchChoice c = choose_kernel(shape(1024, 1024, 1024), d, path.string());
  CHECK(c.source == DispatchSource::Model);
  CHECK(c.config ==
        rank_space(shape(1024, 1024, 1024), d, 1, shipped_coefficients).top.front().config);
  CHECK(c.calibration ==
        "shipped calibration for H100-SXM (model v" + std::to_string(kModelVersion) + ")");
  CHECK_FALSE(std::filesystem::exists(path));

  {
    Database db(path.string());
    db.add_all({stored(shape(1024, 1024, 1024), "BM64_BN64_BK16_DX16_DY16_DXA16_DXB16", 1e-3),
                stored(shape(1024, 1024, 1024), "BM32_BN32_BK16_DX8_DY8_DXA32_DXB16", 2e-3),
                stored(shape(4096, 4096, 4096), "BM128_BN64_BK16_DX16_DY16_DXA32_DXB16_VA4", 5e-2),
                stored(shape(1024, 1024, 1024), "BM16_BN16_BK16_DX4_DY8_DXA16_DXB16", 1e-3,
                       "A100-SXM4-80GB")});
  }
  // Exact shape: its fastest kernel.
  c = choose_kernel(shape(1024, 1024, 1024), d, path.string());
  CHECK(c.source == DispatchSource::Stored);
  CHECK(c.config == KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16"));
  // A shape never tuned: the neighbours' kernels and the model's pick compete, and the one
  // predicted fastest for the new shape wins.
  auto check_weighed = [&](const Problem& p) {
    const DispatchChoice w = choose_kernel(p, d, path.string());
    INFO(w.why);
    CHECK(w.source != DispatchSource::Stored);
    CHECK_FALSE(check_hard(p, d, w.config));
    const DispatchCandidate* fastest = nullptr;
    for (const DispatchCandidate& x : w.candidates)
      if (x.dropped.empty() && (!fastest || x.predicted_s < fastest->predicted_s)) fastest = &x;
    REQUIRE(fastest);
    CHECK(w.config == fastest->config);
    CHECK(w.from == fastest->from);
    CHECK((w.source == DispatchSource::Model) == fastest->from.empty());
    CHECK_THAT(w.why, Catch::Contains("model's pick") &&
                          Catch::Contains("fastest predicted for " + p.shape_id()));
    return w;
  };
  c = check_weighed(shape(1500, 1500, 1500));
  REQUIRE(c.candidates.size() == 3);  // both tuned shapes' kernels and the model's pick
  CHECK(c.candidates[0].from == "s_nn_1024x1024x1024_b1");  // nearest first
  CHECK(c.candidates[1].from == "s_nn_4096x4096x4096_b1");
  CHECK(c.candidates[2].from.empty());
  check_weighed(shape(3500, 4000, 4096));
  // The 4096 kernel breaks a hard constraint here (vector width 4, lda 3501 is odd): dropped.
  c = check_weighed(shape(3501, 4000, 4096));
  CHECK(c.config.vec_a != 4);
  bool dropped = false;
  for (const DispatchCandidate& x : c.candidates)
    if (x.from == "s_nn_4096x4096x4096_b1")
      dropped = x.dropped.find("3501") != std::string::npos && x.predicted_s == 0;
  CHECK(dropped);
  // Another precision was never tuned: the model.
  Problem z = shape(1024, 1024, 1024);
  z.precision = Precision::D;
  CHECK(choose_kernel(z, d, path.string()).source == DispatchSource::Model);
  // Another device's results are not used.
  CHECK(choose_kernel(shape(1024, 1024, 1024), find_builtin_device("A100"), path.string()).source ==
        DispatchSource::Stored);
  CHECK(choose_kernel(shape(1024, 1024, 1024), find_builtin_device("V100"), path.string()).source ==
        DispatchSource::Model);
  // The store's calibration for the device outranks the shipped one for the model's pick.
  ModelCoefficients own;
  own.fma_efficiency = 0.6;
  own.mem_latency_cycles = 1500;
  Database(path.string()).save_calibration(d.name, coefficients_to_json(own));
  c = choose_kernel(z, d, path.string());
  CHECK(c.source == DispatchSource::Model);
  CHECK_THAT(c.calibration, Catch::StartsWith("store calibration of "));
  CHECK(c.config == rank_space(z, d, 1, own).top.front().config);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
}

TEST_CASE("runtime: between tuned shapes, the kernel predicted fastest there wins", "[runtime]") {
  // The exhaustive recordings of S NN problems, less one shape (8192x8192x16, between K = 8 and
  // K = 32), stand in for a store of tuned shapes; the held-out sweep says how good the choice is.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto path = std::filesystem::temp_directory_path() / "gemmtune_between_test.db";
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
  const std::string text =
      read_text_file(std::string(GEMMTUNE_SOURCE_DIR) + "/tests/data/h100_exhaustive.csv");
  CsvImportReport report;
  const Problem held_out = shape(8192, 8192, 16);
  std::vector<Attempt> tuned;
  std::map<std::string, double> truth;  // the held-out shape's time of every configuration
  for (Attempt& a : read_attempts_csv(text, report)) {
    if (a.problem.precision != Precision::S || a.problem.op_a != Op::N) continue;
    a.device = d.name;
    if (a.problem == held_out)
      truth[a.config.id()] = a.median_s;
    else
      tuned.push_back(std::move(a));
  }
  REQUIRE(truth.size() == 1988);  // the compact space, every configuration measured
  Database(path.string()).add_all(tuned);
  // A fixed calibration (the H100's shipped from 28c5b8d), the store's own so that it wins over the
  // shipped one: the rule is judged, not whichever calibration ships. Under a calibration that
  // puts the model's own pick first here, the pick (outside the compact space) has no recorded
  // time.
  Database(path.string())
      .save_calibration(d.name, coefficients_to_json(coefficients_from_file(
                                    std::string(GEMMTUNE_SOURCE_DIR) +
                                    "/tests/data/h100_calibration_28c5b8d.json.gz")));
  double best = 1;
  for (const auto& [id, t] : truth) best = std::min(best, t);

  const DispatchChoice c = choose_kernel(held_out, d, path.string());
  INFO(c.why);
  CHECK(c.candidates.size() >= 4);
  REQUIRE(truth.count(c.config.id()));
  const double chosen = truth[c.config.id()];
  // The nearest tuned shape's best, the old rule's choice, measured on the held-out shape.
  const DispatchCandidate& nearest = c.candidates.front();
  CHECK(nearest.from == "s_nn_8192x8192x32_b1");
  CHECK(c.candidates[1].from == "s_nn_8192x8192x8_b1");
  REQUIRE(truth.count(nearest.config.id()));
  const double old_rule = truth[nearest.config.id()];
  INFO("held-out 8192x8192x16: best " << best * 1e6 << " us, chosen " << chosen * 1e6
                                      << " us, nearest shape's best " << old_rule * 1e6 << " us");
  // Measured 118.7 us against the held-out best of 118.3 us; the K = 8 shape's kernel, which
  // the model ranks behind it, measures 126.5 us.
  CHECK(chosen <= 1.02 * best);
  CHECK(chosen <= old_rule * 1.001);
  CHECK(c.config != c.candidates[1].config);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
}

TEST_CASE("runtime: a variable batch's measured candidates are counted within their limit",
          "[runtime]") {
  // No case before this one sets it (the GPU cases restore the default).
  CHECK(vbatched_measure() == kDefaultVbatchedMeasure);
  CHECK(kDefaultVbatchedMeasure > 0);
  CHECK_THROWS_WITH(set_vbatched_measure(-1),
                    Catch::Contains("0 (choose by the model alone) to 16"));
  CHECK_THROWS_AS(set_vbatched_measure(kMaxVbatchedMeasure + 1), InputError);
  CHECK_NOTHROW(set_vbatched_measure(kMaxVbatchedMeasure));
  CHECK_NOTHROW(set_vbatched_measure(0));
  CHECK(vbatched_measure() == 0);
  CHECK_THROWS_AS(set_vbatched_measure(kMaxVbatchedMeasure + 1), InputError);
  CHECK(vbatched_measure() == 0);  // a refused value leaves the setting as it was
  set_vbatched_measure(kDefaultVbatchedMeasure);
  CHECK(std::string(to_string(DispatchSource::Measured)) == "measured on the batch");
}

TEST_CASE("runtime: a variable batch's measured candidates are the choice and then distinct others",
          "[runtime][batched]") {
  const DeviceSpec d = find_builtin_device("H200");
  const std::string no_store = "/nonexistent/gemmtune.db";
  Problem call = shape(128, 128, 128);
  call.precision = Precision::S;
  call.batch = 500;
  const Problem representative = batched_representative(call, BatchKind::Variable);
  std::vector<Problem> sizes(500, representative);
  std::uint64_t x = 3;
  for (Problem& p : sizes)
    for (std::int64_t* v : {&p.m, &p.n, &p.k}) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      *v = std::int64_t(x >> 33) % 128 + 1;
    }
  const DispatchChoice choice = choose_for_sizes(representative, sizes, d, no_store);
  const ModelCoefficients k = coefficients_from_json(shipped_calibration(d.name)->json);
  for (const int count : {1, 3, 8}) {
    const auto list = candidates_for_sizes(choice, representative, sizes, d, no_store, count);
    INFO(count);
    REQUIRE(!list.empty());
    CHECK(int(list.size()) <= count);
    CHECK(list.front().config == choice.config);
    for (std::size_t i = 0; i < list.size(); ++i) {
      CHECK(list[i].predicted_s == time_for_sizes(representative, sizes, d, list[i].config, k));
      CHECK(list[i].measured_s == 0);
      CHECK_FALSE(check_hard(representative, d, list[i].config).has_value());
      CHECK(list[i].config.splits() == 1);
      for (std::size_t j = 0; j < i; ++j) CHECK_FALSE(list[i].config == list[j].config);
    }
    // The choice's other weighed kernel (the representative's or the sizes' best) comes next.
    if (count >= 2) {
      REQUIRE(list.size() >= 2);
      for (const DispatchCandidate& c : choice.candidates)
        if (!(c.config == choice.config)) CHECK(list[1].config == c.config);
    }
    if (count == 8) CHECK(list.size() == 8);
  }
  CHECK_THROWS_AS(candidates_for_sizes(choice, representative, sizes, d, no_store, 0), InputError);
}

TEST_CASE("runtime: the tensor-core gemm takes h, b and t only", "[runtime]") {
  // Refused before any GPU work: S, D, C and Z have typed calls.
  float c = 0;
  for (Precision p : {Precision::S, Precision::D, Precision::C, Precision::Z}) {
    INFO(to_char(p));
    CHECK_THROWS_WITH(gemm(p, Op::N, Op::N, 1, 1, 1, 1.0f, &c, 1, &c, 1, 0.0f, &c, 1),
                      Catch::Contains("takes h, b or t") && Catch::Contains("typed calls"));
  }
}

TEST_CASE("runtime: a variable batch weighs a tuned kernel for its maxima against the sizes' pick",
          "[runtime]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto path = std::filesystem::temp_directory_path() / "gemmtune_vbatched_choice_test.db";
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
  Problem call = shape(512, 512, 512);
  call.precision = Precision::D;
  call.batch = 2000;
  const Problem representative = batched_representative(call, BatchKind::Variable);
  auto sizes_up_to = [&](std::int64_t most) {  // a fixed sequence in [1, most]
    std::vector<Problem> sizes(2000, representative);
    std::uint64_t x = 5;
    for (Problem& p : sizes)
      for (std::int64_t* v : {&p.m, &p.n, &p.k}) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        *v = std::int64_t(x >> 33) % most + 1;
      }
    return sizes;
  };
  // The store holds no calibration: the shipped one ranks.
  const ModelCoefficients k = coefficients_from_json(shipped_calibration(d.name)->json);
  // The representative tuned: its kernel is stored, measured at its maxima.
  const std::string tuned = rank_space(representative, d, 40).top.back().config.id();
  Database(path.string()).add_all({stored(representative, tuned.c_str(), 1e-3)});
  const KernelConfig kept = batched_config(KernelConfig::parse(tuned), BatchKind::Variable);
  for (const std::int64_t most : {512, 24}) {
    const std::vector<Problem> sizes = sizes_up_to(most);
    const DispatchChoice c = choose_for_sizes(representative, sizes, d, path.string());
    INFO(most << ": " << c.why);
    REQUIRE(c.candidates.size() == 2);
    // The stored kernel, its time over the sizes as the model predicts it.
    CHECK(c.candidates[0].config == kept);
    CHECK(c.candidates[0].from == representative.shape_id());
    CHECK(c.candidates[0].predicted_s == time_for_sizes(representative, sizes, d, kept, k));
    // The pick's time carries the stored kernel's standing at the maxima against the model's own
    // best there: never below what the model predicts for the pick itself.
    const Ranked pick = rank_for_sizes(representative, sizes, d, 1, k).at(0);
    CHECK(c.candidates[1].config == pick.config);
    CHECK(c.candidates[1].predicted_s >= pick.prediction.time_s);
    CHECK(c.config == (c.candidates[1].predicted_s < c.candidates[0].predicted_s
                           ? c.candidates[1].config
                           : kept));
  }
  // Matrices of at most 24 under maxima of 512: the sizes' pick wins even so.
  CHECK(choose_for_sizes(representative, sizes_up_to(24), d, path.string()).source ==
        DispatchSource::Model);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
}
