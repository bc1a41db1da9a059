// Calibration and the quality report, on the recorded H100 measurements (tests/data): real
// numbers, so the thresholds mean something.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "catch.hpp"
#include "model/model.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {

std::vector<CalibrationSample> recorded(const char* file = "h100_exhaustive.csv") {
  CsvImportReport report;
  auto samples = calibration_samples(read_attempts_csv(
      read_text_file(std::string(GEMMTUNE_SOURCE_DIR "/tests/data/") + file), report));
  REQUIRE(report.rejected.empty());
  return samples;
}

// Half of the exhaustively swept problems, one of each class where a class has two or more, and
// the classes with one problem (odd, transposed), are held out of the fit.
const std::set<std::string> kHeldOut = {"d_nn_4096x4096x4096_b1", "d_nn_6144x6016x128_b1",
                                        "d_nn_4097x4097x4097_b1", "s_nn_4096x4096x4096_b1",
                                        "s_nn_6144x64x64_b1",     "s_nn_8192x8192x16_b1",
                                        "s_tn_1024x1024x1024_b1", "s_nn_4097x4097x4097_b1"};

// The first `count` configurations of the compact space with the model's time of each.
std::vector<std::pair<KernelConfig, double>> first_predicted(const Problem& p, const DeviceSpec& d,
                                                             std::size_t count) {
  std::vector<std::pair<KernelConfig, double>> out;
  for (const auto& c : pruned_space(p, d, SpaceDomain::named("compact")))
    if (out.size() < count) out.emplace_back(c, predict(p, d, c).time_s);
  REQUIRE(out.size() == count);
  return out;
}

}  // namespace

TEST_CASE("coefficients round-trip through JSON and bad values are named") {
  ModelCoefficients k;
  k.fma_efficiency = 0.81;
  k.store_bytes_per_clock_sm = 9.5;
  CHECK(coefficients_from_json(coefficients_to_json(k)) == k);
  CHECK(from_array(to_array(k)) == k);
  CHECK_THROWS_WITH(coefficients_from_json("{\"fma_eff\": 1}"), Catch::Contains("fma_eff"));
  CHECK_THROWS_WITH(coefficients_from_json("{\"fma_efficiency\": 3}"),
                    Catch::Contains("outside [0.5"));
  CHECK_THROWS_WITH(coefficients_from_json("[1, 2"), Catch::Contains("not valid JSON"));
  k.correction.offset = -0.05;
  k.correction.offset_fp64 = 0.25;
  k.correction.all[0] = 0.125;
  k.correction.fp64[kCorrectionFeatureCount - 1] = -0.5;
  CHECK(coefficients_from_json(coefficients_to_json(k)) == k);
  k.correction.tensor_core_level = 0.375;
  k.correction.tensor_core[3] = -0.0625;
  CHECK(coefficients_from_json(coefficients_to_json(k)) == k);
  k.correction.short_loop[5] = 0.75;
  CHECK(coefficients_from_json(coefficients_to_json(k)) == k);
  // A file from before the tensor-core and short-loop parts reads with those parts at zero.
  const ModelCoefficients old = coefficients_from_json(
      R"({"log_time_correction": {"offset": 0.5, "all": {"stages": 0.25}}})");
  CHECK(old.correction.offset == 0.5);
  CHECK(old.correction.tensor_core_level == 0);
  CHECK(old.correction.short_loop == decltype(old.correction.short_loop){});
  CHECK(!old.correction.empty());
  CHECK_THROWS_WITH(coefficients_from_json(R"({"log_time_correction": {"all": {"ilp": 1}}})"),
                    Catch::Contains("unknown correction feature 'ilp'"));
  CHECK_THROWS_WITH(coefficients_from_json(R"({"log_time_correction": {"fp32": {}}})"),
                    Catch::Contains("unknown part 'fp32'"));
  CHECK_THROWS_WITH(
      coefficients_from_json(R"({"log_time_correction": {"all": {"stages": "two"}}})"),
      Catch::Contains("log_time_correction.all.stages' is not a number"));
  for (size_t i = 0; i < size_t(kCoefficientCount); ++i) {
    const double v = to_array(ModelCoefficients{})[i];
    CHECK(v >= coefficient_lower_bounds()[i]);
    CHECK(v <= coefficient_upper_bounds()[i]);
  }
}

TEST_CASE("calibrations record the model version; another version is refused naming both") {
  ModelCoefficients k;
  k.fma_efficiency = 0.81;
  const std::string json = coefficients_to_json(k);
  CHECK_THAT(json, Catch::Contains("\"model_version\": " + std::to_string(kModelVersion)));
  CHECK(coefficients_from_json(json) == k);
  // Another version: refused, whatever its features, with both versions in the message.
  const std::string other = std::to_string(kModelVersion + 1);
  CHECK_THROWS_WITH(
      coefficients_from_json(R"({"model_version": )" + other + R"(, "fma_efficiency": 0.8})",
                             "old.json"),
      Catch::Contains("old.json was fitted for model version " + other) &&
          Catch::Contains("this gemmtune's model is version " + std::to_string(kModelVersion)));
  CHECK_THROWS_WITH(coefficients_from_json(R"({"model_version": "two"})"),
                    Catch::Contains("model_version must be a positive integer"));
  // No version: the current one when its features are this model's, else an older model's.
  CHECK(coefficients_from_json(R"({"fma_efficiency": 0.81})") == k);
  CHECK_THROWS_WITH(
      coefficients_from_json(R"({"log_time_correction": {"all": {"ilp": 1}}})", "x.json"),
      Catch::Contains("x.json was fitted for model version " +
                      std::to_string(kUnversionedModelVersion)) &&
          Catch::Contains("model is version " + std::to_string(kModelVersion)));
  // A file names itself in the refusal.
  const std::string path = "gemmtune_test_other_version.json";
  std::ofstream(path) << R"({"model_version": )" << other << "}";
  CHECK_THROWS_WITH(coefficients_from_file(path),
                    Catch::Contains(path + " was fitted for model version " + other));
  std::remove(path.c_str());
}

TEST_CASE("the shipped calibration is found by spec name and by the driver's name") {
  const std::pair<const char*, const char*> found[] = {{"H100-SXM", "H100-SXM"},
                                                       {"NVIDIA H100 80GB HBM3", "H100-SXM"},
                                                       {"h100", "H100-SXM"},
                                                       {"H200", "H200"},
                                                       {"NVIDIA H200", "H200"}};
  for (const auto& [name, spec] : found) {
    INFO(name);
    const auto shipped = shipped_calibration(name);
    REQUIRE(shipped);
    CHECK(shipped->spec_name == spec);
    const ModelCoefficients k = coefficients_from_json(shipped->json);
    CHECK_FALSE(k.correction.empty());
    CHECK(k.fma_efficiency != ModelCoefficients{}.fma_efficiency);
    CHECK_THAT(shipped->json,
               Catch::Contains("\"model_version\": " + std::to_string(kModelVersion)));
  }
  for (const char* name : {"RTX4090", "NVIDIA GeForce RTX 4090", "NVIDIA H100 NVL", "B300", ""}) {
    INFO(name);
    CHECK_FALSE(shipped_calibration(name));
  }
  const auto names = shipped_calibration_names();
  CHECK(std::find(names.begin(), names.end(), "H100-SXM") != names.end());
  CHECK(std::find(names.begin(), names.end(), "H200") != names.end());
  // Every shipped file is named by a built-in spec and fits this model.
  for (const auto& name : names) {
    INFO(name);
    CHECK(find_builtin_device(name).name == name);
    CHECK_NOTHROW(coefficients_from_json(shipped_calibration(name)->json));
    // Its trees are in the compact form the fit writes: read in less than half the time.
    const std::string trees = coefficients_from_json(shipped_calibration(name)->json).learned.json;
    REQUIRE_FALSE(trees.empty());
    CHECK(TreeEnsemble::compact_xgboost_json(trees) == trees);
  }
}

TEST_CASE("rank quality of a perfect and of a reversed model") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = make_problem(Precision::S, Op::N, Op::N, 2048, 2048, 2048);
  std::vector<CalibrationSample> perfect, reversed;
  for (const auto& [c, t] : first_predicted(p, d, 40)) {
    perfect.push_back({p, c, -1, t * 1.7, {}});
    reversed.push_back({p, c, -1, 1.0 / t, {}});
  }
  const QualityReport good = rank_quality(d, perfect, {});
  REQUIRE(good.problems.size() == 1);
  CHECK(good.problems[0].spearman == Approx(1.0));
  CHECK(good.problems[0].kendall > 0.95);  // ties in the model's times cost a little
  CHECK(good.problems[0].regret == Approx(1.0));
  CHECK(good.problems[0].top1);
  const QualityReport bad = rank_quality(d, reversed, {});
  CHECK(bad.problems[0].spearman < -0.95);
  CHECK(bad.problems[0].regret > 1.5);
  CHECK_FALSE(bad.problems[0].top10);
  // Without configurations drawn from the domain there is no drawn rank.
  CHECK_FALSE(good.problems[0].drawn_spearman);
  CHECK(good.drawn_problems == 0);
}

TEST_CASE("rank quality over the configurations drawn from the domain alone") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = make_problem(Precision::D, Op::T, Op::N, 1000, 300, 700);
  // The first 30 drawn and measured as the model says; the other 30 (a search's) reversed.
  const auto configs = first_predicted(p, d, 60);
  const auto [least, most] =
      std::minmax_element(configs.begin(), configs.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<CalibrationSample> samples;
  for (size_t i = 0; i < configs.size(); ++i) {
    const double t = configs[i].second;
    samples.push_back(
        {p, configs[i].first, -1, i < 30 ? t : least->second + most->second - t, {}, i < 30});
  }
  const QualityReport q = rank_quality(d, samples, {});
  REQUIRE(q.problems.size() == 1);
  REQUIRE(q.problems[0].drawn_spearman);
  CHECK(*q.problems[0].drawn_spearman == Approx(1.0));
  CHECK(*q.problems[0].drawn_kendall > 0.95);
  CHECK(q.problems[0].spearman < 0.5);
  CHECK(q.drawn_problems == 1);
  CHECK(q.median_drawn_spearman == Approx(1.0));
  // Fewer drawn than kMinDrawnForRank: none.
  for (size_t i = kMinDrawnForRank - 1; i < 30; ++i) samples[i].drawn = false;
  CHECK_FALSE(rank_quality(d, samples, {}).problems[0].drawn_spearman);
}

TEST_CASE("rank quality of a pick that compiles a shortlist: its first N ranked again") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = make_problem(Precision::S, Op::N, Op::N, 2048, 2048, 2048);
  auto configs = first_predicted(p, d, 40);
  std::stable_sort(configs.begin(), configs.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  // Measured in the estimate's order, but the estimate's first compiles with 255 registers.
  std::vector<CalibrationSample> samples;
  for (size_t i = 0; i < configs.size(); ++i)
    samples.push_back({p, configs[i].first, -1, 1e-6 * double(i + 1), {}});
  samples[0].registers = 255;
  REQUIRE(predict(p, d, configs[0].first, {}, 255).time_s > configs[1].second);
  REQUIRE(configs[1].second < configs[2].second);
  const auto pick = [&](int shortlist) {
    const QualityReport q = rank_quality(d, samples, {}, shortlist);
    REQUIRE(q.problems.size() == 1);
    return q.problems[0];
  };
  // A shortlist of one has nothing to re-rank; of ten, the second of the estimate comes first.
  CHECK(pick(1).pick_fraction == Approx(1.0));
  CHECK(pick(10).pick_fraction == Approx(0.5));
  // The correlations stay the estimate's, which orders them as measured (but for its ties).
  CHECK(pick(10).spearman == Approx(pick(1).spearman));
  CHECK(pick(10).spearman > 0.99);
  // Without a shortlist the compiler's count ranks every configuration, the first among them.
  CHECK(pick(0).pick_fraction == Approx(0.5));
  CHECK(pick(0).spearman < pick(10).spearman);
}

TEST_CASE(
    "rank_compiled orders by the compiler's registers, puts spills last and drops what cannot "
    "run as modelled") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = make_problem(Precision::D, Op::N, Op::T, 3000, 700, 500);
  std::vector<KernelConfig> configs;
  std::vector<CompiledInfo> info;
  for (const auto& [c, t] : first_predicted(p, d, 12)) {
    configs.push_back(c);
    info.push_back({estimate_registers(c, p.precision, default_register_model(p.precision)), 0});
  }
  info[0].registers = 255;
  info[1] = CompiledInfo{};    // failed to compile
  info[2].spill_bytes = 4096;  // spilled heavily
  std::map<std::string, double> predicted;
  for (size_t i = 0; i < configs.size(); ++i)
    predicted[configs[i].id()] = predict(p, d, configs[i], {}, info[i].registers).time_s;
  // The fastest predicted of the rest spills a little: still a candidate, behind every clean one.
  size_t fastest = 3;
  for (size_t i = 3; i < configs.size(); ++i)
    if (predicted.at(configs[i].id()) < predicted.at(configs[fastest].id())) fastest = i;
  info[fastest].spill_bytes = 8;
  const std::vector<KernelConfig> ranked = rank_compiled(p, d, configs, info, {});
  REQUIRE(ranked.size() == configs.size() - 2);
  CHECK(std::find(ranked.begin(), ranked.end(), configs[1]) == ranked.end());
  CHECK(std::find(ranked.begin(), ranked.end(), configs[2]) == ranked.end());
  CHECK(ranked.back() == configs[fastest]);
  for (size_t i = 1; i + 1 < ranked.size(); ++i)
    CHECK(predicted.at(ranked[i - 1].id()) <= predicted.at(ranked[i].id()));
  const auto spilled = compiled_standing(p, d, configs[fastest], info[fastest], {});
  const size_t first =
      size_t(std::find(configs.begin(), configs.end(), ranked.front()) - configs.begin());
  const auto clean = compiled_standing(p, d, configs[first], info[first], {});
  REQUIRE(spilled);
  REQUIRE(clean);
  CHECK(spilled->spills);
  CHECK(spilled->time_s == Approx(predicted.at(configs[fastest].id())));
  CHECK(*clean < *spilled);
  CHECK_FALSE(compiled_standing(p, d, configs[2], info[2], {}));
  CHECK_THROWS_AS(rank_compiled(p, d, configs, {info[0]}, {}), std::logic_error);
}

TEST_CASE("the correction's features have distinct names in the calibration format's order") {
  const auto& names = correction_feature_names();
  std::set<std::string> distinct(names.begin(), names.end());
  CHECK(distinct.size() == names.size());
  CHECK(std::string(names.front()) == "thread_tile_m_log2");
  CHECK(std::string(names[24]) == "occupancy");
  CHECK(std::string(names.back()) == "dim_y_log2");
  KernelConfig c = KernelConfig::parse("BM128_BN64_BK16_DX16_DY8_PF3");
  Prediction r;
  r.time_s = 2e-3;
  r.t_dram = 1e-3;
  const auto values = correction_features(c, r);
  const auto value = [&](std::string_view name) {
    return values[size_t(std::find(names.begin(), names.end(), name) - names.begin())];
  };
  CHECK(value("block_m_log2") == 7);
  CHECK(value("prefetch_both") == 1);
  CHECK(value("prefetch_a") == 0);
  CHECK(value("dram_share") == 0.5);
  CHECK(value("dim_y_log2") == 3);
}

TEST_CASE("the log-time correction recovers a planted error of the model") {
  // Measurements that are the model's times times exp(planted) for a planted linear function of
  // the features: the fit must find it, and the corrected model must then rank them exactly.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto& names = correction_feature_names();
  const auto index = [&](std::string_view name) {
    return size_t(std::find(names.begin(), names.end(), name) - names.begin());
  };
  LogTimeCorrection planted;
  planted.all[index("inverse_thread_tile")] = 2.0;  // small thread tiles slower than predicted
  planted.all[index("vector_a_log2")] = -0.1;
  planted.fp64[index("block_k_log2")] = 0.2;
  std::vector<CalibrationSample> samples;
  for (const Problem& p : {make_problem(Precision::S, Op::N, Op::N, 2048, 2048, 2048),
                           make_problem(Precision::D, Op::N, Op::N, 1024, 1024, 1024),
                           make_problem(Precision::S, Op::N, Op::N, 6144, 128, 128)}) {
    int taken = 0;
    for (const auto& c : pruned_space(p, d, SpaceDomain::named("compact"))) {
      if (taken++ % 7) continue;  // a spread-out subset keeps the test fast
      const Prediction r = predict(p, d, c);
      const auto f = correction_features(c, r);
      double e = 0;
      for (size_t j = 0; j < f.size(); ++j)
        e += f[j] * (planted.all[j] + (is_double(p.precision) ? planted.fp64[j] : 0.0));
      samples.push_back({p, c, -1, r.time_s * std::exp(e), {}});
    }
  }
  REQUIRE(samples.size() > 300);
  ModelCoefficients fitted;
  fitted.correction = fit_log_time_correction(d, samples, {});
  // Features are collinear (a thread tile's size and its inverse, the terms' shares) and the
  // ridge shrinks those with little spread, so neither the weights nor the times come back
  // exactly; the ranking must, and most of the error must go.
  std::vector<double> before_error, after_error;
  for (const auto& s : samples) {
    before_error.push_back(std::abs(std::log(predict(s.problem, d, s.config).time_s / s.time_s)));
    after_error.push_back(
        std::abs(std::log(predict(s.problem, d, s.config, fitted).time_s / s.time_s)));
  }
  std::sort(before_error.begin(), before_error.end());
  std::sort(after_error.begin(), after_error.end());
  const size_t median = samples.size() / 2, p95 = samples.size() * 95 / 100;
  INFO("median |log error| " << before_error[median] << " -> " << after_error[median] << ", 95th "
                             << before_error[p95] << " -> " << after_error[p95]);
  CHECK(before_error[median] > 0.1);
  CHECK(after_error[p95] < 0.25 * before_error[p95]);
  const QualityReport before = rank_quality(d, samples, {});
  const QualityReport after = rank_quality(d, samples, fitted);
  REQUIRE(after.problems.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    INFO(after.problems[i].problem << " rho " << before.problems[i].spearman << " -> "
                                   << after.problems[i].spearman);
    CHECK(after.problems[i].spearman > before.problems[i].spearman);
    CHECK(after.problems[i].spearman > 0.99);
    CHECK(after.problems[i].regret < 1.01);
  }
  // The corrected prediction says how much it was corrected.
  CHECK(predict(samples.front().problem, d, samples.front().config, fitted).correction != 1.0);
  CHECK_THROWS_AS(fit_log_time_correction(d, {samples.front()}, {}), InputError);
}

TEST_CASE("the short-loop gate: 1 up to K = 16, then 16 / K") {
  CHECK(short_loop_gate(make_problem(Precision::S, Op::N, Op::N, 8192, 8192, 8)) == 1.0);
  CHECK(short_loop_gate(make_problem(Precision::S, Op::N, Op::N, 8192, 8192, 16)) == 1.0);
  CHECK(short_loop_gate(make_problem(Precision::D, Op::N, Op::N, 8192, 8192, 32)) == 0.5);
  CHECK(short_loop_gate(make_problem(Precision::S, Op::N, Op::N, 4096, 4096, 4096)) ==
        Approx(1.0 / 256));
}

TEST_CASE("problem classes") {
  CHECK(problem_class(make_problem(Precision::S, Op::N, Op::N, 4096, 4096, 4096)) == "s-square");
  CHECK(problem_class(make_problem(Precision::D, Op::N, Op::N, 6144, 128, 128)) == "d-rectangular");
  CHECK(problem_class(make_problem(Precision::S, Op::N, Op::N, 8192, 8192, 16)) == "s-skinny-k");
  CHECK(problem_class(make_problem(Precision::S, Op::N, Op::N, 1000, 1000, 1000)) == "s-odd");
  CHECK(problem_class(make_problem(Precision::Z, Op::C, Op::N, 64, 64, 64)) == "z-transposed");
}

TEST_CASE("calibration on recorded H100 sweeps ranks held-out problems better") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = recorded();
  REQUIRE(samples.size() > 40000);
  std::vector<CalibrationSample> train, test;
  for (const auto& s : samples) (kHeldOut.count(s.problem.shape_id()) ? test : train).push_back(s);
  CalibrationOptions options;
  options.max_evaluations = 300;  // a fixed count, not a time, so CI sees the same fit
  options.max_seconds = 300;
  const CalibrationResult r = calibrate(d, train, {}, options);
  CHECK(r.loss_coefficients < 0.8 * r.loss_before);
  // A runaway fit, not a slow machine: CI's 2 cores may be shared while this runs.
  CHECK(r.seconds < 150);
  const QualityReport before = rank_quality(d, test, {});
  const QualityReport after = rank_quality(d, test, r.coefficients);
  REQUIRE(after.problems.size() == kHeldOut.size());
  WARN("held-out median Spearman "
       << before.median_spearman << " -> " << after.median_spearman << ", regret "
       << before.median_regret << " -> " << after.median_regret << ", top-10 " << before.top10_rate
       << " -> " << after.top10_rate << ", shortlist top-10 " << before.shortlist10_rate << " -> "
       << after.shortlist10_rate);
  for (size_t i = 0; i < after.problems.size(); ++i) {
    INFO(after.problems[i].problem << " rho " << before.problems[i].spearman << " -> "
                                   << after.problems[i].spearman);
    CHECK(after.problems[i].spearman > before.problems[i].spearman);
  }
  CHECK(after.median_spearman >= 0.85);
  CHECK(after.median_regret <= 1.10);
  CHECK(after.top10_rate > before.top10_rate);
}

// The linear calibration's figures, as bench/model_accuracy --by class reports them for the full
// model: leave-one-class-out cross-validation over the 18 exhaustively swept problems (9 folds,
// each fitted by a count of evaluations, so the figures repeat on any machine). Minutes of fitting,
// so it runs as its own ctest.
TEST_CASE("cross-validated by problem class, the calibrated model ranks every class better",
          "[cross-validation]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = recorded();
  std::map<std::string, std::vector<CalibrationSample>> by_class;
  for (const auto& s : samples) by_class[problem_class(s.problem)].push_back(s);
  REQUIRE(by_class.size() == 9);
  QualityReport before, after;
  for (const auto& [name, held] : by_class) {
    std::vector<CalibrationSample> train;
    for (const auto& s : samples)
      if (problem_class(s.problem) != name) train.push_back(s);
    const QualityReport plain = rank_quality(d, held, {});
    // The linear calibration's figures: coefficients, then the linear correction (the learned
    // trees after them are judged by problem, over every recording, in test_learned.cpp).
    ModelCoefficients linear = calibrate(d, train, {}, fold_fit_options()).coefficients;
    linear.correction = fit_log_time_correction(d, train, linear);
    const QualityReport fitted = rank_quality(d, held, linear);
    INFO("class " << name << ": median Spearman " << plain.median_spearman << " -> "
                  << fitted.median_spearman);
    CHECK(fitted.median_spearman > plain.median_spearman);
    before.problems.insert(before.problems.end(), plain.problems.begin(), plain.problems.end());
    after.problems.insert(after.problems.end(), fitted.problems.begin(), fitted.problems.end());
  }
  summarize(before);
  summarize(after);
  REQUIRE(after.problems.size() == 18);
  WARN("held out by class: median Spearman "
       << before.median_spearman << " -> " << after.median_spearman << ", regret "
       << before.median_regret << " -> " << after.median_regret << ", shortlist top-10 "
       << before.shortlist10_rate << " -> " << after.shortlist10_rate);
  CHECK(after.median_spearman >= 0.85);
  CHECK(after.median_regret <= 1.10);
  CHECK(after.shortlist10_rate >= 0.90);
}

// The SIMT sweeps hold no tensor-core kernel: fitted on them alone, the model ranks FP64
// tensor-core kernels worse than uncalibrated. With the tensor-core sweeps of other problems in
// the fit, it ranks them better than that fit does, and (each kind of kernel centred and
// weighted apart in the correction) the held-out SIMT problems as well as the SIMT fit alone.
TEST_CASE("tensor-core sweeps in the fit: tensor-core rankings mend, SIMT rankings hold") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto simt = recorded();
  const auto tensor = recorded("h100_tensor_sweeps.csv");
  REQUIRE(tensor.size() > 9000);
  const std::set<std::string> tensor_held_out = {"d_nn_1024x1024x1024_b1", "d_nn_4096x4096x4096_b1",
                                                 "d_nn_512x512x512_b1", "d_nn_6144x6016x128_b1",
                                                 "d_nn_8192x8192x32_b1"};
  std::vector<CalibrationSample> simt_train, simt_test, tensor_test;
  for (const auto& s : simt)
    (kHeldOut.count(s.problem.shape_id()) ? simt_test : simt_train).push_back(s);
  std::vector<CalibrationSample> with_tensor = simt_train;
  for (const auto& s : tensor) {
    const std::string id = s.problem.shape_id();
    if (tensor_held_out.count(id))
      tensor_test.push_back(s);
    else if (!kHeldOut.count(id))
      with_tensor.push_back(s);
  }
  CalibrationOptions options;
  options.max_evaluations = 300;  // a fixed count, not a time, so CI sees the same fit
  options.max_seconds = 300;
  const ModelCoefficients simt_fit = calibrate(d, simt_train, {}, options).coefficients;
  const ModelCoefficients tensor_fit = calibrate(d, with_tensor, {}, options).coefficients;

  const QualityReport plain = rank_quality(d, tensor_test, {});
  const QualityReport simt_only = rank_quality(d, tensor_test, simt_fit);
  const QualityReport both = rank_quality(d, tensor_test, tensor_fit);
  REQUIRE(both.problems.size() == tensor_held_out.size());
  WARN("held-out tensor-core median Spearman: uncalibrated "
       << plain.median_spearman << ", SIMT fit " << simt_only.median_spearman << ", with tensor "
       << both.median_spearman << "; regret " << plain.median_regret << ", "
       << simt_only.median_regret << ", " << both.median_regret);
  CHECK(simt_only.median_spearman < plain.median_spearman);
  CHECK(both.median_spearman > simt_only.median_spearman);
  CHECK(both.median_regret < simt_only.median_regret);
  CHECK(both.median_regret < plain.median_regret);

  const QualityReport simt_alone = rank_quality(d, simt_test, simt_fit);
  const QualityReport simt_with_tensor = rank_quality(d, simt_test, tensor_fit);
  WARN("held-out SIMT median Spearman: SIMT fit " << simt_alone.median_spearman << ", with tensor "
                                                  << simt_with_tensor.median_spearman);
  CHECK(simt_with_tensor.median_spearman >= 0.85);
  CHECK(simt_with_tensor.median_spearman > simt_alone.median_spearman - 0.02);
  CHECK(simt_with_tensor.median_regret <= 1.10);
}

TEST_CASE("calibration refuses nothing to fit") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  CHECK_THROWS_AS(calibrate(d, {}), InputError);
  // FP16 measurements alone: the coefficients rest on the S, D, C and Z kernels.
  const Problem h = make_problem(Precision::H, Op::T, Op::N, 512, 512, 512);
  KernelConfig c;
  c.mma = 4;
  const std::vector<CalibrationSample> half = {{h, c, -1, 1e-4, {}}, {h, c, -1, 2e-4, {}}};
  CHECK_THROWS_WITH(calibrate(d, half),
                    Catch::Contains("S, D, C or Z") && Catch::Contains("all 2 given"));
}

namespace {

// n configurations of p whose predicted times (uncalibrated) differ by more than 1% from one
// another, fastest predicted first: the model's ranking of them is known without ties.
std::vector<KernelConfig> ranked_by_model(const Problem& p, const DeviceSpec& d, size_t n) {
  std::vector<std::pair<double, KernelConfig>> picked;
  for (const auto& c : pruned_space(p, d, SpaceDomain::named("compact"))) {
    const double t = predict(p, d, c).time_s;
    if (std::none_of(picked.begin(), picked.end(),
                     [&](const auto& q) { return std::abs(q.first / t - 1) < 0.01; }))
      picked.push_back({t, c});
    if (picked.size() == n) break;
  }
  REQUIRE(picked.size() == n);
  std::sort(picked.begin(), picked.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<KernelConfig> out;
  for (const auto& [t, c] : picked) out.push_back(c);
  return out;
}

// Samples of p whose measured times, in the model's order, are `times` (milliseconds), added
// last-predicted first so that row order cannot stand in for the ranking.
void add_measured(std::vector<CalibrationSample>& samples, const Problem& p, const DeviceSpec& d,
                  const std::vector<double>& times) {
  const auto configs = ranked_by_model(p, d, times.size());
  for (size_t i = times.size(); i-- > 0;)
    samples.push_back({p, configs[i], -1, times[i] * 1e-3, {}});
}

}  // namespace

TEST_CASE("quantiles are linear between the nearest ranks") {
  CHECK(quantile({}, 0.1) == 0);
  CHECK(quantile({0.7}, 0.1) == 0.7);
  CHECK(quantile({1, 0.9, 0.8, 0.5, 0.2}, 0.5) == Approx(0.8));
  CHECK(quantile({1, 0.9, 0.8, 0.5, 0.2}, 0.1) == Approx(0.32));  // 0.2 + 0.4 x (0.5 - 0.2)
  CHECK(quantile({3, 1, 2, 4}, 0.5) == Approx(2.5));
  CHECK(quantile({3, 1, 2, 4}, 1.0) == 4);
}

TEST_CASE("peak scores: the model's top-1 and top-5 as fractions of the best measured") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem a = make_problem(Precision::S, Op::N, Op::N, 2048, 2048, 2048);
  const Problem b = make_problem(Precision::D, Op::N, Op::N, 1024, 1024, 1024);
  const Problem c = make_problem(Precision::S, Op::N, Op::N, 6144, 128, 128);
  std::vector<CalibrationSample> samples;
  // a: the pick takes 2.0 ms, the best of the top 5 1.0, the best of all (predicted 6th) 0.8.
  add_measured(samples, a, d, {2.0, 1.5, 1.0, 3.0, 1.25, 0.8});
  add_measured(samples, b, d, {1.0, 2.0, 3.0, 4.0});  // ranked exactly
  add_measured(samples, c, d, {2.0, 1.0, 3.0});       // the top 5 holds all three
  const QualityReport r = rank_quality(d, samples, {});
  REQUIRE(r.problems.size() == 3);
  const RankQuality &qa = r.problems[0], &qb = r.problems[1], &qc = r.problems[2];
  CHECK(qa.problem == a.shape_id());
  CHECK(qa.pick_fraction == Approx(0.4));
  CHECK(qa.top5_fraction == Approx(0.8));
  CHECK(qa.regret == Approx(2.5));
  CHECK(qa.spearman == Approx(1 - 6.0 * 54 / (6 * 35)));  // squared rank differences sum to 54
  CHECK(qb.pick_fraction == 1.0);
  CHECK(qb.top5_fraction == 1.0);
  CHECK(qb.spearman == Approx(1.0));
  CHECK(qb.kendall == Approx(1.0));
  CHECK(qc.pick_fraction == Approx(0.5));
  CHECK(qc.top5_fraction == 1.0);
  CHECK(qc.spearman == Approx(0.5));
  CHECK(qc.kendall == Approx(1.0 / 3));  // one discordant pair of three
  CHECK(r.median_pick_fraction == Approx(0.5));
  CHECK(r.p10_pick_fraction == Approx(0.42));  // 0.4 + 0.2 x (0.5 - 0.4)
  CHECK(r.median_top5_fraction == 1.0);
  CHECK(r.p10_top5_fraction == Approx(0.84));  // 0.8 + 0.2 x (1 - 0.8)
  CHECK(r.median_spearman == Approx(0.5));
  CHECK(r.median_kendall == Approx(1.0 / 3));
  // Summarizing again gives the same rates, not twice them.
  QualityReport again = r;
  summarize(again);
  CHECK(again.shortlist10_rate == r.shortlist10_rate);
  CHECK(again.p10_pick_fraction == r.p10_pick_fraction);
}

TEST_CASE("the shortlist's peak score counts one configuration per tile family first") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  auto family = [](const KernelConfig& c) {
    return std::array<int, 5>{c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y};
  };
  // A problem whose model ranking holds a configuration ranked 6th or later that opens a new
  // tile family among the first 5 families: the raw top 5 miss it, the shortlist's first 5 hold it.
  for (const Problem& p : {make_problem(Precision::S, Op::N, Op::N, 2048, 2048, 2048),
                           make_problem(Precision::D, Op::T, Op::T, 3688, 15616, 36),
                           make_problem(Precision::D, Op::N, Op::N, 512, 512, 512)}) {
    // The 60 fastest predicted of the compact space. Variants of one tile family are often
    // predicted alike; samples go in in this order, which the ranking keeps for ties.
    std::vector<std::pair<double, KernelConfig>> ranked;
    for (const auto& c : pruned_space(p, d, SpaceDomain::named("compact")))
      ranked.push_back({predict(p, d, c).time_s, c});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<KernelConfig> configs;
    for (std::size_t i = 0; i < ranked.size() && configs.size() < 60; ++i)
      configs.push_back(ranked[i].second);
    std::set<std::array<int, 5>> seen;
    std::size_t fast = 0;
    for (std::size_t i = 0; i < configs.size() && seen.size() < 5 && !fast; ++i)
      if (seen.insert(family(configs[i])).second && i >= 5) fast = i;
    if (!fast) continue;
    std::vector<double> times(configs.size(), 2.0);
    times[fast] = 1.0;
    std::vector<CalibrationSample> samples;
    for (size_t i = 0; i < times.size(); ++i)
      samples.push_back({p, configs[i], -1, times[i] * 1e-3, {}});
    const QualityReport r = rank_quality(d, samples, {});
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].top5_fraction == Approx(0.5));
    CHECK(r.problems[0].short5_fraction == 1.0);
    CHECK(r.median_short5_fraction == 1.0);
    return;
  }
  FAIL("no problem's model ranking repeats a tile family within its top 5");
}

TEST_CASE("problem keys tell apart leading dimensions and beta") {
  Problem p = make_problem(Precision::S, Op::N, Op::T, 1000, 500, 64);
  CHECK(problem_key(p) == p.shape_id());
  Problem padded = p;
  padded.ldc = 1024;
  CHECK(problem_key(padded) == p.shape_id() + "_ld1000x500x1024");
  Problem accumulate = p;
  accumulate.beta = {1.0, 0.0};
  CHECK(problem_key(accumulate) == p.shape_id() + "_beta1");
}

TEST_CASE("k folds of problems: deterministic, complete, independent of row order") {
  std::vector<CalibrationSample> samples;
  std::set<std::string> keys;
  for (std::int64_t m : {64, 128, 256, 512, 1000, 1024, 2048, 4096, 4097, 8192}) {
    const Problem p = make_problem(Precision::S, Op::N, Op::N, m, 256, 128);
    for (int repeat = 0; repeat < 3; ++repeat) samples.push_back({p, {}, -1, 1e-3, {}});
    keys.insert(problem_key(p));
  }
  Problem padded = samples.front().problem, accumulate = padded;
  padded.lda = 80;
  accumulate.beta = {1.0, 0.0};
  samples.push_back({padded, {}, -1, 1e-3, {}});
  samples.push_back({accumulate, {}, -1, 1e-3, {}});
  keys.insert({problem_key(padded), problem_key(accumulate)});
  REQUIRE(keys.size() == 12);

  const auto folds = k_fold_problems(samples, 5, 1);
  REQUIRE(folds.size() == keys.size());
  std::map<int, int> sizes;
  for (const auto& [key, fold] : folds) {
    CHECK(keys.count(key) == 1);
    CHECK(fold >= 0);
    CHECK(fold < 5);
    ++sizes[fold];
  }
  CHECK(sizes == std::map<int, int>{{0, 3}, {1, 3}, {2, 2}, {3, 2}, {4, 2}});
  CHECK(k_fold_problems(samples, 5, 1) == folds);
  std::vector<CalibrationSample> reordered(samples.rbegin(), samples.rend());
  std::rotate(reordered.begin(), reordered.begin() + 7, reordered.end());
  CHECK(k_fold_problems(reordered, 5, 1) == folds);
  CHECK(k_fold_problems(samples, 5, 2) != folds);
  // One fold per problem: leave-one-problem-out.
  std::set<int> singles;
  for (const auto& [key, fold] : k_fold_problems(samples, 12, 7)) singles.insert(fold);
  CHECK(singles.size() == 12);
  CHECK_THROWS_WITH(k_fold_problems(samples, 1, 1), Catch::Contains("k = 1 folds"));
  CHECK_THROWS_WITH(k_fold_problems(samples, 13, 1), Catch::Contains("k = 13 folds"));
  // The same shapes recorded on a second GPU: each shape's two recordings share its fold.
  std::vector<CalibrationSample> two_gpus = samples;
  const auto h200 = std::make_shared<const DeviceSpec>(find_builtin_device("H200"));
  for (CalibrationSample s : samples) {
    s.device = h200;
    two_gpus.push_back(s);
  }
  const auto shared = k_fold_problems(two_gpus, 5, 1);
  REQUIRE(shared.size() == 2 * keys.size());
  for (const auto& [key, fold] : folds) CHECK(shared.at("H200:" + key) == shared.at(key));
  CHECK_THROWS_WITH(k_fold_problems(two_gpus, 13, 1), Catch::Contains("needs 2 to 12"));
}

TEST_CASE("k-fold cross-validation by problem on recorded sweeps, pooled over every problem") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const std::set<std::string> chosen = {"s_nn_4096x4096x4096_b1", "d_nn_4096x4096x4096_b1",
                                        "s_nn_6144x128x128_b1",   "d_nn_512x512x512_b1",
                                        "s_tn_1024x1024x1024_b1", "s_nn_8192x8192x16_b1"};
  // Every 20th configuration of six problems keeps each fold's fit to a second or two.
  std::vector<CalibrationSample> subset;
  std::map<std::string, int> seen;
  for (const auto& s : recorded())
    if (chosen.count(s.problem.shape_id()) && seen[s.problem.shape_id()]++ % 20 == 0)
      subset.push_back(s);
  REQUIRE(subset.size() > 600);

  const ProblemCrossValidation cv = cross_validate_problems(d, subset, 3, 1);
  REQUIRE(cv.folds.size() == 3);
  std::set<std::string> held;
  for (const auto& f : cv.folds) {
    CHECK(f.train_samples + f.held_samples == subset.size());
    CHECK(f.calibrated.problems.size() == 2);
    for (const auto& q : f.calibrated.problems) CHECK(held.insert(q.problem).second);
  }
  std::set<std::string> chosen_keys;  // the recordings' GPU names each ranking
  for (const auto& id : chosen) chosen_keys.insert("H100-SXM:" + id);
  CHECK(held == chosen_keys);
  REQUIRE(cv.calibrated.problems.size() == chosen.size());
  REQUIRE(cv.uncalibrated.problems.size() == chosen.size());
  for (const QualityReport* r : {&cv.uncalibrated, &cv.calibrated}) {
    for (const auto& q : r->problems) {
      INFO(q.problem);
      CHECK(q.pick_fraction > 0);
      CHECK(q.pick_fraction <= 1);
      CHECK(q.top5_fraction >= q.pick_fraction);
      CHECK(q.top5_fraction <= 1);
      CHECK(std::abs(q.spearman) <= 1);
      CHECK(std::abs(q.kendall) <= 1);
    }
    CHECK(r->p10_pick_fraction > 0);
    CHECK(r->p10_pick_fraction <= r->median_pick_fraction);
    CHECK(r->median_pick_fraction <= 1);
    CHECK(r->p10_top5_fraction <= r->median_top5_fraction);
    CHECK(r->median_top5_fraction <= 1);
  }
  // The uncalibrated model does not depend on the folds: pooled, it is the report of the whole.
  const QualityReport whole = rank_quality(d, subset, {});
  std::map<std::string, RankQuality> by_id;
  for (const auto& q : cv.uncalibrated.problems) by_id[q.problem] = q;
  for (const auto& q : whole.problems) {
    CHECK(by_id[q.problem].pick_fraction == q.pick_fraction);
    CHECK(by_id[q.problem].spearman == q.spearman);
  }
  CHECK(cv.uncalibrated.median_pick_fraction == whole.median_pick_fraction);
  CHECK(cv.uncalibrated.p10_top5_fraction == whole.p10_top5_fraction);
  WARN("3 folds of 6 problems: median pick "
       << cv.uncalibrated.median_pick_fraction << " -> " << cv.calibrated.median_pick_fraction
       << ", p10 " << cv.uncalibrated.p10_pick_fraction << " -> " << cv.calibrated.p10_pick_fraction
       << ", rho " << cv.uncalibrated.median_spearman << " -> " << cv.calibrated.median_spearman);
}
