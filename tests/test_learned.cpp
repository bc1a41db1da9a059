// The learned correction: its features, the tree evaluation against XGBoost's own predictions,
// the JSON round trip, and what it does to rankings of recorded problems.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>

#include "catch.hpp"
#include "model/model.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {

// The recordings named (files of tests/data) as bench/model_accuracy reads them: one sample per
// configuration, at the median of its times in every file; a row it cannot read fails the test.
std::vector<CalibrationSample> recorded_samples(std::initializer_list<const char*> files) {
  std::vector<Attempt> attempts;
  for (const char* file : files) {
    CsvImportReport report;
    auto part = read_attempts_csv(
        read_text_file(std::string(GEMMTUNE_SOURCE_DIR "/tests/data/") + file), report);
    REQUIRE(report.rejected.empty());
    attempts.insert(attempts.end(), part.begin(), part.end());
  }
  return calibration_samples(attempts);
}

// Recordings in no fit ranked as predict ranks (estimated registers), uncalibrated and by the
// shipped H100 calibration: {before, after}.
std::pair<QualityReport, QualityReport> shipped_h100_on(std::initializer_list<const char*> files) {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  auto samples = recorded_samples(files);
  for (auto& s : samples) s.registers = -1;
  const auto shipped = shipped_calibration("H100-SXM");
  REQUIRE(shipped);
  return {rank_quality(d, samples, {}),
          rank_quality(d, samples, coefficients_from_json(shipped->json, "shipped"))};
}

// Every n-th sample of one recording.
std::vector<CalibrationSample> every_nth(const char* file, int n) {
  const auto all = recorded_samples({file});
  std::vector<CalibrationSample> out;
  for (std::size_t i = 0; i < all.size(); i += std::size_t(n)) out.push_back(all[i]);
  return out;
}

// Coefficients whose only part is trees fitted with each of two settings.
std::pair<ModelCoefficients, ModelCoefficients> fitted_trees(
    const DeviceSpec& d, const std::vector<CalibrationSample>& train,
    const LearnedCorrectionOptions& first, const LearnedCorrectionOptions& second) {
  ModelCoefficients a, b;
  a.learned = fit_learned_correction(d, train, {}, first);
  b.learned = fit_learned_correction(d, train, {}, second);
  return {a, b};
}

// How trees fitted with each of two settings rank the samples they were fitted on.
std::pair<QualityReport, QualityReport> fitted_rank_quality(
    const DeviceSpec& d, const std::vector<CalibrationSample>& train,
    const LearnedCorrectionOptions& first, const LearnedCorrectionOptions& second) {
  const auto [a, b] = fitted_trees(d, train, first, second);
  return {rank_quality(d, train, a), rank_quality(d, train, b)};
}

// Floors under the held-out figures of measure's zero-run pick on the recorded H100 problems
// (bench/RESULTS.md: pick median 0.953, p10 0.866, top 5 0.980, Spearman 0.760, the first three
// at or past their targets of 0.95, 0.85 and 0.98), so that a change which loses held-out quality
// fails. They sit 0.013-0.03 under: XGBoost sums its histograms per thread, and a machine with
// another core count fits other trees.
constexpr double kHeldOutPickMedian = 0.94, kHeldOutPickP10 = 0.84, kHeldOutTop5Median = 0.97,
                 kHeldOutSpearman = 0.73;

}  // namespace

TEST_CASE("learned features: one value per name, problem and configuration read back") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = make_problem(Precision::Z, Op::T, Op::C, 300, 2000, 64, 7);
  KernelConfig c;
  c.blk_m = 128;
  const Prediction r = predict(p, d, c);
  std::vector<float> f;
  learned_features(p, c, r, f);
  const auto& names = learned_feature_names();
  REQUIRE(f.size() == names.size());
  REQUIRE(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  auto value = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return f[std::size_t(it - names.begin())];
  };
  CHECK(value("m_log2") == Approx(std::log2(300.0)));
  CHECK(value("batch_log2") == Approx(std::log2(7.0)));
  CHECK(value("precision_z") == 1);
  CHECK(value("precision_s") == 0);
  CHECK(value("a_transposed") == 1);
  CHECK(value("config_BM") == 128);
  CHECK(value("thread_tile_m_log2") == Approx(std::log2(128.0 / c.dim_x)));
  CHECK(value("predicted_log") == Approx(std::log(r.time_s)));
  CHECK(value("tile_waste_m") == Approx(384.0 / 300.0));
}

TEST_CASE("excluded features: no tree splits on them; an unknown name is refused") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = every_nth("h100_sweeps.csv", 7);
  LearnedCorrectionOptions o;
  o.rounds = 10;
  auto splits_on = [&](const TreeEnsemble& t, const std::string& name) {
    const auto& names = learned_feature_names();
    const int index = int(std::find(names.begin(), names.end(), name) - names.begin());
    int count = 0;
    const auto model = nlohmann::json::parse(t.json);
    for (const auto& tree : model["learner"]["gradient_booster"]["model"]["trees"]) {
      const auto left = tree["left_children"].get<std::vector<int>>();
      const auto index_of = tree["split_indices"].get<std::vector<int>>();
      for (std::size_t i = 0; i < left.size(); ++i) count += left[i] >= 0 && index_of[i] == index;
    }
    return count;
  };
  // The most used feature of a plain fit is the one to exclude.
  const TreeEnsemble plain = fit_learned_correction(d, samples, {}, o);
  std::string most;
  int uses = 0;
  for (const auto& name : learned_feature_names())
    if (const int n = splits_on(plain, name); n > uses) uses = n, most = name;
  REQUIRE(uses > 0);
  o.excluded_features = {most};
  const TreeEnsemble without = fit_learned_correction(d, samples, {}, o);
  CHECK(splits_on(without, most) == 0);
  CHECK(without.tree_count() == plain.tree_count());

  o.excluded_features = {"no_such_feature"};
  CHECK_THROWS_WITH(fit_learned_correction(d, samples, {}, o),
                    Catch::Contains("no feature 'no_such_feature'") && Catch::Contains("m_log2"));
}

TEST_CASE("the tree ensemble predicts what XGBoost predicts, and round-trips through JSON") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = every_nth("h100_sweeps.csv", 7);
  LearnedCorrectionOptions o;
  o.rounds = 20;
  // A forest per round: its trees' leaves are scaled at fit time, so a plain sum predicts.
  const int forest = GENERATE(1, 3);
  o.parallel_trees = forest;
  o.subsample = forest > 1 ? 0.7 : 1.0;
  // The fit's whole XGBoost model, and the compact ensemble calibrations keep of it.
  const std::string full = fit_learned_model_json(d, samples, {}, o);
  const TreeEnsemble trees = fit_learned_correction(d, samples, {}, o);
  REQUIRE(trees.tree_count() == std::size_t(20 * forest));
  CHECK(TreeEnsemble::compact_xgboost_json(full) == trees.json);
  CHECK_THAT(full, Catch::Contains("loss_changes") && Catch::Contains("sum_hessian"));
  CHECK_THAT(trees.json, !Catch::Contains("loss_changes") && !Catch::Contains("sum_hessian") &&
                             Catch::Contains("split_conditions"));
  CHECK(trees.json.size() * 2 < full.size());
  CHECK(TreeEnsemble::compact_xgboost_json(trees.json) == trees.json);
  CHECK_THROWS_WITH(TreeEnsemble::compact_xgboost_json("{\"learner\": 3}"),
                    Catch::Contains("not an XGBoost JSON model"));

  BoosterHandle booster = nullptr;
  REQUIRE(XGBoosterCreate(nullptr, 0, &booster) == 0);
  REQUIRE(XGBoosterLoadModelFromBuffer(booster, full.data(), full.size()) == 0);
  const std::size_t width = learned_feature_names().size();
  std::vector<float> data, row;
  for (std::size_t i = 0; i < samples.size(); i += 10) {
    learned_features(samples[i].problem, samples[i].config,
                     predict(samples[i].problem, d, samples[i].config, {}, samples[i].registers),
                     row);
    data.insert(data.end(), row.begin(), row.end());
  }
  const std::size_t rows = data.size() / width;
  DMatrixHandle m = nullptr;
  REQUIRE(XGDMatrixCreateFromMat(data.data(), rows, width, NAN, &m) == 0);
  bst_ulong n = 0;
  const float* out = nullptr;
  REQUIRE(XGBoosterPredict(booster, m, 0, 0, 0, &n, &out) == 0);
  REQUIRE(n == rows);
  double spread = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::vector<float> f(data.begin() + long(i * width),
                               data.begin() + long((i + 1) * width));
    CHECK(trees.evaluate(f) == Approx(out[i]).margin(1e-5));
    spread = std::max(spread, std::abs(double(out[i]) - out[0]));
  }
  CHECK(spread > 0.05);  // the trees say something, not one constant
  XGDMatrixFree(m);
  XGBoosterFree(booster);

  ModelCoefficients k;
  k.learned = trees;
  const ModelCoefficients back = coefficients_from_json(coefficients_to_json(k));
  CHECK(back == k);
  const Prediction a = predict(samples[0].problem, d, samples[0].config, k);
  const Prediction b = predict(samples[0].problem, d, samples[0].config, back);
  CHECK(a.time_s == b.time_s);
  CHECK(a.correction != 1.0);
}

TEST_CASE("FP16, BF16 and TF32 problems get trees of their own; the others' leave them out") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto classic = every_nth("h100_sweeps.csv", 7);
  const auto reduced = every_nth("h100_reduced_seed12.csv.gz", 7);
  std::vector<CalibrationSample> both = classic;
  both.insert(both.end(), reduced.begin(), reduced.end());
  LearnedCorrectionOptions o;
  o.rounds = 20;
  o.by_family = true;
  ModelCoefficients k;
  fit_learned_trees(d, both, k, o);
  // The S, D, C and Z trees are what their samples alone fit, the family's what all samples fit
  // (XGBoost is deterministic on one machine).
  CHECK(k.learned == fit_learned_correction(d, classic, {}, o));
  CHECK(k.learned_reduced == fit_learned_correction(d, both, {}, o));
  CHECK_FALSE(k.learned == k.learned_reduced);
  // A problem is corrected by its own group's trees, in predict() and in the ranking's walk.
  ModelCoefficients classic_only, reduced_only;
  classic_only.learned = k.learned;
  reduced_only.learned = k.learned_reduced;
  const CalibrationSample &h = reduced.front(), &s = classic.front();
  CHECK(&k.trees_for(h.problem.precision) == &k.learned_reduced);
  CHECK(&k.trees_for(s.problem.precision) == &k.learned);
  CHECK(predict(h.problem, d, h.config, k).time_s ==
        predict(h.problem, d, h.config, reduced_only).time_s);
  CHECK(predict(h.problem, d, h.config, k).time_s !=
        predict(h.problem, d, h.config, classic_only).time_s);
  CHECK(predict(s.problem, d, s.config, k).time_s ==
        predict(s.problem, d, s.config, classic_only).time_s);
  const Ranking mine = rank_space(h.problem, d, 10, k),
                alone = rank_space(h.problem, d, 10, reduced_only);
  REQUIRE(mine.top.size() == 10);
  for (std::size_t i = 0; i < mine.top.size(); ++i)
    CHECK(mine.top[i].config.id() == alone.top[i].config.id());
  // Both kept by a calibration file.
  const ModelCoefficients back = coefficients_from_json(coefficients_to_json(k));
  CHECK(back == k);
  CHECK_THAT(coefficients_to_json(k), Catch::Contains("learned_correction_fp16_bf16_tf32"));

  // One ensemble for all by default, or when a group has fewer than 2 problems.
  o.by_family = LearnedCorrectionOptions{}.by_family;
  REQUIRE_FALSE(o.by_family);
  ModelCoefficients shared;
  fit_learned_trees(d, both, shared, o);
  CHECK(shared.learned_reduced.empty());
  CHECK(shared.learned == fit_learned_correction(d, both, {}, o));
  CHECK(&shared.trees_for(h.problem.precision) == &shared.learned);
  o.by_family = true;
  std::vector<CalibrationSample> one_reduced = classic;
  for (const auto& r : reduced)
    if (r.problem.shape_id() == h.problem.shape_id()) one_reduced.push_back(r);
  ModelCoefficients few = k;
  fit_learned_trees(d, one_reduced, few, o);
  CHECK(few.learned_reduced.empty());
  CHECK(few.learned == fit_learned_correction(d, one_reduced, {}, o));
}

TEST_CASE("ranking with the trees skips only what cannot enter the top: the same list") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  ModelCoefficients k;
  k.learned = fit_learned_correction(d, every_nth("h100_sweeps.csv", 5), {});
  const Problem p = make_problem(Precision::C, Op::N, Op::T, 700, 300, 200);
  // A walk stopped early returns a bound that exceeds `above` and no more than the sum; one taken
  // to the end returns evaluate()'s sum exactly.
  const std::vector<double> tails = learned_bounds(k.learned, p).tails;
  REQUIRE(tails.size() == k.learned.tree_count() + 1);
  CHECK(tails.back() == 0.0);
  ModelCoefficients analytical = k;
  analytical.learned = {};
  std::vector<float> features;
  int stopped = 0;
  for (const auto& c : pruned_space(p, d)) {
    learned_features(p, c, predict(p, d, c, analytical), features);
    const double sum = k.learned.evaluate(features);
    for (const double above : {sum - 0.5, sum - 0.01, sum + 0.01}) {
      const double got = k.learned.evaluate_unless_above(features, tails, above);
      if (above < sum) {
        CHECK(got > above);
        CHECK(got <= sum + 1e-9);
        stopped += got != sum;
      } else {
        CHECK(got == sum);
      }
    }
  }
  CHECK(stopped > 0);
  // The least sum inside a box of feature rows bounds each row's sum, is that sum for a box of
  // one row, and is far tighter than the problem's own bound for rows walked one after another.
  FeatureBox box, one;
  std::vector<double> sums;
  int groups = 0, tighter = 0;
  for (const auto& c : pruned_space(p, d)) {
    learned_features(p, c, predict(p, d, c, analytical), features);
    sums.push_back(k.learned.evaluate(features));
    box.include(features);
    one.clear();
    one.include(features);
    CHECK(k.learned.least_within(one) == sums.back());
    if (sums.size() == 32) {
      const double least = k.learned.least_within(box);
      CHECK(least <= *std::min_element(sums.begin(), sums.end()));
      ++groups;
      tighter += least > tails.front() + 0.5;
      box.clear();
      sums.clear();
    }
  }
  REQUIRE(groups > 10);
  CHECK(tighter > groups / 2);
  features.front() = std::numeric_limits<float>::quiet_NaN();
  box.include(features);
  CHECK(std::isnan(box.lo.front()));
  CHECK(std::isnan(box.hi.front()));
  CHECK_THROWS_WITH(box.include({1.0f}), Catch::Contains("1 values joins a box of"));
  const Ranking ranked = rank_space(p, d, 25, k);
  std::vector<std::pair<double, std::string>> all;
  for (const auto& c : pruned_space(p, d)) all.emplace_back(predict(p, d, c, k).time_s, c.id());
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  REQUIRE(ranked.top.size() == 25);
  for (std::size_t i = 0; i < ranked.top.size(); ++i) {
    CHECK(ranked.top[i].prediction.time_s == all[i].first);
    CHECK(ranked.top[i].prediction.time_s == predict(p, d, ranked.top[i].config, k).time_s);
  }
}

TEST_CASE("a learned correction of other features is refused, naming both feature sets") {
  const std::string model =
      R"({"learner": {"learner_model_param": {"base_score": "5E-1", "num_feature": "3"},
          "feature_names": ["a", "b", "c"],
          "gradient_booster": {"model": {"trees": []}}}})";
  CHECK_THROWS_WITH(TreeEnsemble::from_xgboost_json(model),
                    Catch::Contains("fitted on 3 features") && Catch::Contains("m_log2"));
  CHECK_THROWS_WITH(TreeEnsemble::from_xgboost_json("{\"learner\": 3}"),
                    Catch::Contains("not an XGBoost JSON model"));
}

TEST_CASE("the learned correction ranks held-out recorded problems better") {
  // Fitted on the exhaustive sweeps, judged on the sampled sweeps' problems that the exhaustive
  // file does not hold.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto train = every_nth("h100_exhaustive.csv", 3);
  std::set<std::string> trained;
  for (const auto& s : train) trained.insert(problem_key(s.problem));
  std::vector<CalibrationSample> held;
  for (const auto& s : recorded_samples({"h100_sweeps.csv"}))
    if (!trained.count(problem_key(s.problem))) held.push_back(s);
  ModelCoefficients k;
  k.learned = fit_learned_correction(d, train, {});
  const QualityReport before = rank_quality(d, held, {});
  const QualityReport after = rank_quality(d, held, k);
  REQUIRE(after.problems.size() >= 8);
  // Nine problems judged, eighteen fitted: the correlation over each whole sample is the steady
  // figure here; the peak scores are asserted on every recording, k-fold, in [cross-validation].
  CHECK(after.median_spearman > before.median_spearman + 0.03);
}

TEST_CASE("fitted on FP16, BF16 and TF32 recordings, the trees rank those held-out problems") {
  // 4 folds over the family's 16 recorded problems, the trees alone fitted on the other three
  // folds; the uncalibrated terms rank these kernels at a median Spearman under 0.5.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = recorded_samples({"h100_reduced_seed12.csv.gz"});
  const FoldFit trees_only = [](const DeviceSpec& device,
                                const std::vector<CalibrationSample>& train) {
    LearnedCorrectionOptions o;
    o.rounds = 60;
    ModelCoefficients k;
    k.learned = fit_learned_correction(device, train, {}, o);
    return k;
  };
  const ProblemCrossValidation cv = cross_validate_problems(d, samples, 4, 1, trees_only);
  REQUIRE(cv.calibrated.problems.size() == 16);
  WARN("held-out FP16/BF16/TF32 problems: median Spearman "
       << cv.uncalibrated.median_spearman << " -> " << cv.calibrated.median_spearman
       << ", pick median " << cv.uncalibrated.median_pick_fraction << " -> "
       << cv.calibrated.median_pick_fraction);
  CHECK(cv.calibrated.median_spearman > cv.uncalibrated.median_spearman + 0.1);
  CHECK(cv.calibrated.median_pick_fraction > cv.uncalibrated.median_pick_fraction);
  // An FP16 problem's features say which of the three it is.
  std::vector<float> f;
  const Problem h = make_problem(Precision::H, Op::T, Op::N, 256, 256, 256, 1);
  learned_features(h, KernelConfig{}, predict(h, d, KernelConfig{}), f);
  const auto& names = learned_feature_names();
  const auto at = [&](const char* name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return f[std::size_t(it - names.begin())];
  };
  CHECK(at("precision_h") == 1);
  CHECK(at("precision_b") == 0);
  CHECK(at("precision_s") == 0);

  // The linear correction rests on S, D, C and Z alone: the family's samples leave it as it was,
  // and it does not touch the family's predictions, which the trees do.
  const auto sweeps = every_nth("h100_sweeps.csv", 5);
  std::vector<CalibrationSample> with_family = sweeps;
  with_family.insert(with_family.end(), samples.begin(), samples.end());
  const LogTimeCorrection plain = fit_log_time_correction(d, sweeps, {}),
                          mixed = fit_log_time_correction(d, with_family, {});
  CHECK(mixed.offset == plain.offset);
  CHECK(mixed.all == plain.all);
  CHECK(mixed.tensor_core == plain.tensor_core);
  ModelCoefficients k;
  k.correction = mixed;
  const CalibrationSample& s = samples.front();
  CHECK(predict(s.problem, d, s.config, k, s.registers).correction == 1);
  const CalibrationSample& single = sweeps.front();
  CHECK(predict(single.problem, d, single.config, k, single.registers).correction != 1);
  k.learned = trees_only(d, samples).learned;
  CHECK(predict(s.problem, d, s.config, k, s.registers).time_s !=
        predict(s.problem, d, s.config, {}, s.registers).time_s);
}

TEST_CASE("centred labels: the trees leave each problem's level to the linear correction") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto train = every_nth("h100_exhaustive.csv", 3);
  LearnedCorrectionOptions plain, centred;
  plain.rounds = centred.rounds = 40;
  plain.center = 0;
  centred.center = 1;
  const auto [a, b] = fitted_trees(d, train, plain, centred);
  // Per problem, the trees' mean correction over its fast end (within 10% of its best measured).
  const auto level = [&](const TreeEnsemble& trees) {
    std::map<std::string, double> best;
    for (const auto& s : train) {
      auto [it, fresh] = best.emplace(problem_key(s.problem), s.time_s);
      if (!fresh) it->second = std::min(it->second, s.time_s);
    }
    std::map<std::string, std::pair<double, int>> sums;
    std::vector<float> features;
    for (const auto& s : train) {
      if (s.time_s > 1.1 * best[problem_key(s.problem)]) continue;
      learned_features(s.problem, s.config, predict(s.problem, d, s.config, {}, s.registers),
                       features);
      auto& [sum, n] = sums[problem_key(s.problem)];
      sum += trees.evaluate(features);
      ++n;
    }
    std::vector<double> means;
    for (const auto& [key, sn] : sums) means.push_back(sn.first / sn.second);
    const double mean = std::accumulate(means.begin(), means.end(), 0.0) / double(means.size());
    double spread = 0;
    for (double m : means) spread += (m - mean) * (m - mean);
    return std::sqrt(spread / double(means.size()));
  };
  const double spread_plain = level(a.learned), spread_centred = level(b.learned);
  WARN("spread of the problems' mean correction at their fast end: "
       << spread_plain << " plain, " << spread_centred << " centred");
  CHECK(spread_centred < 0.85 * spread_plain);  // 0.70 of it when measured
}

TEST_CASE("own_device_weight: the fit for a GPU follows its own samples more closely") {
  // Samples of two GPUs, each predicted on its own spec; the fit is for the H200.
  const DeviceSpec h200 = find_builtin_device("H200");
  auto train = every_nth("h100_random_seed1.csv.gz", 4);
  const auto own = every_nth("h200_random_seed19.csv.gz", 2);
  train.insert(train.end(), own.begin(), own.end());
  REQUIRE(std::any_of(train.begin(), train.end(), [&](const CalibrationSample& s) {
    return sample_device(s, h200).name != h200.name;
  }));
  // RMS log residual of the trees fitted at a weight: {the H200's samples, the H100's}.
  const auto residuals = [&](double weight) {
    LearnedCorrectionOptions o;
    o.rounds = 40;
    o.rank_weight = 0;
    o.own_device_weight = weight;
    const TreeEnsemble trees = fit_learned_correction(h200, train, {}, o);
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    std::vector<float> features;
    for (const auto& s : train) {
      const int other = sample_device(s, h200).name == h200.name ? 0 : 1;
      const auto r = predict_measured(h200, s, {});
      if (!r) continue;
      learned_features(s.problem, s.config, *r, features);
      const double miss = std::log(s.time_s / r->time_s) - trees.evaluate(features);
      sum[other] += miss * miss;
      ++n[other];
    }
    REQUIRE(n[0] > 100);
    REQUIRE(n[1] > 100);
    return std::pair{std::sqrt(sum[0] / n[0]), std::sqrt(sum[1] / n[1])};
  };
  const auto [own_even, other_even] = residuals(1);
  const auto [own_heavy, other_heavy] = residuals(10);
  WARN("RMS log residual, H200 samples: " << own_even << " at weight 1, " << own_heavy
                                          << " at 10; H100 samples: " << other_even << ", "
                                          << other_heavy);
  CHECK(own_heavy < 0.9 * own_even);  // 0.80 of it when measured; the H100's 1.007
  CHECK(own_heavy / own_even < 0.9 * (other_heavy / other_even));
  LearnedCorrectionOptions bad;
  bad.own_device_weight = 0;
  CHECK_THROWS_AS(fit_learned_correction(h200, train, {}, bad), InputError);
}

TEST_CASE("the ranking loss orders the fitted problems better than the regression alone") {
  // A sign error in its gradient would order them worse; the held-out gain is asserted, k-fold,
  // in [cross-validation].
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto train = every_nth("h100_exhaustive.csv", 3);
  LearnedCorrectionOptions regression, ranking;
  regression.rank_weight = 0;
  ranking.rank_weight = 5;
  regression.rounds = ranking.rounds = 40;
  const auto [qa, qb] = fitted_rank_quality(d, train, regression, ranking);
  WARN("fitted problems' median Kendall: regression " << qa.median_kendall << ", with ranking "
                                                      << qb.median_kendall);
  CHECK(qb.median_kendall > qa.median_kendall + 0.01);

  LearnedCorrectionOptions bad;
  bad.rank_sigma = 0;
  CHECK_THROWS_WITH(fit_learned_correction(d, train, {}, bad),
                    Catch::Contains("rank_sigma > 0") && Catch::Contains("not 0"));
}

TEST_CASE("ranking pairs spread evenly over a problem order its whole recording better") {
  // Pairs weighted by the faster row's fast-end weight order the fast end; spread evenly they
  // order every configuration, which the Spearman over the whole recording reads.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto train = every_nth("h100_exhaustive.csv", 3);
  LearnedCorrectionOptions fast_end, spread;
  fast_end.rank_weight = spread.rank_weight = 3;
  fast_end.rank_spread = 0;
  spread.rank_spread = 1;
  fast_end.rounds = spread.rounds = 40;
  const auto [qa, qb] = fitted_rank_quality(d, train, fast_end, spread);
  WARN("fitted problems' median Spearman: pairs at the fast end "
       << qa.median_spearman << ", spread " << qb.median_spearman);
  CHECK(qb.median_spearman > qa.median_spearman + 0.002);  // 0.964 -> 0.970 when measured

  LearnedCorrectionOptions bad;
  bad.rank_spread = 1.5;
  CHECK_THROWS_WITH(fit_learned_correction(d, train, {}, bad),
                    Catch::Contains("rank_spread") && Catch::Contains("1.5"));
}

TEST_CASE("ranking pairs among single steps order one parameter's steps better") {
  // Pairs of configurations that differ in one tuning parameter alone show its effect with the
  // rest held; drawn among them, the ranking loss orders such steps (a tune's refinement moves)
  // more often the way they measured.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto train = every_nth("h100_exhaustive.csv", 3);
  LearnedCorrectionOptions whole, steps;
  whole.rank_weight = steps.rank_weight = 3;
  steps.rank_step = 1;
  whole.rounds = steps.rounds = 40;
  const auto [a, b] = fitted_trees(d, train, whole, steps);
  // The share of single steps measured over 3% apart whose predicted times order them alike.
  const auto& parameters = tuning_parameters();
  const auto ordered = [&](const ModelCoefficients& k) {
    std::map<std::string, std::vector<std::pair<const CalibrationSample*, double>>> by_problem;
    for (const auto& s : train)
      if (const auto r = predict_measured(d, s, k))
        by_problem[sample_key(s)].push_back({&s, r->time_s});
    int pairs = 0, alike = 0;
    for (const auto& [key, rows] : by_problem)
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = i + 1; j < rows.size(); ++j) {
          int differing = 0;
          for (const auto& p : parameters)
            differing += p.get(rows[i].first->config) != p.get(rows[j].first->config);
          const double measured = std::log(rows[i].first->time_s / rows[j].first->time_s);
          if (differing != 1 || std::abs(measured) < std::log(1.03)) continue;
          ++pairs;
          alike += (measured > 0) == (rows[i].second > rows[j].second);
        }
    REQUIRE(pairs > 1000);
    return double(alike) / pairs;
  };
  const double before = ordered(a), after = ordered(b);
  WARN("single steps over 3% apart ordered as measured: pairs over the problem "
       << before << ", single steps " << after);
  CHECK(after > before + 0.005);  // 0.954 -> 0.964 when measured

  LearnedCorrectionOptions bad;
  bad.rank_step = -0.5;
  CHECK_THROWS_WITH(fit_learned_correction(d, train, {}, bad),
                    Catch::Contains("rank_step") && Catch::Contains("-0.5"));
}

TEST_CASE("held out by problem, 5 folds over every recording: measure's zero-run pick",
          "[cross-validation]") {
  // The twelve recordings of the headline k-fold of bench/RESULTS.md (the H100's and the H200's
  // seed 2, 20 problems; the H200's later recordings are in the shipped fit only): problems go to
  // folds at random (seed 1), each fold's calibration is fitted on the others' problems (on the
  // compiler's registers, as shipped), and each held-out problem is picked as `measure` picks:
  // the estimate's first kCompiledShortlist ranked again by the compiler's registers. Only
  // recorded configurations are ranked.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto samples = recorded_samples(
      {"h100_exhaustive.csv", "h100_tensor_sweeps.csv", "h100_sweeps.csv",
       "h100_random_seed1.csv.gz", "h100_random_seed1_54-68.csv.gz",
       "h100_random_seed1_69-88.csv.gz", "h100_random_seed1_89-115.csv.gz",
       "h100_random_seed1_beta.csv.gz", "h100_random_seed2.csv.gz", "h200_random_seed2.csv.gz",
       "h100_model_picks.csv.gz", "h100_model_picks_held_out.csv.gz"});
  const std::map<std::string, int> folds = k_fold_problems(samples, 5, 1);
  std::vector<FoldQuality> done;
  for (int f = 0; f < 5; ++f)
    done.push_back(evaluate_fold(d, samples, folds, f, fit_fold, kCompiledShortlist));
  const ProblemCrossValidation cv = pool_folds(std::move(done));
  // The H100's problems: sample keys "H100-SXM:problem" (the H200's are "H200:problem").
  const auto h100 = [](const QualityReport& pooled) {
    QualityReport out;
    for (const auto& q : pooled.problems)
      if (q.problem.rfind("H100-SXM:", 0) == 0) out.problems.push_back(q);
    summarize(out);
    return out;
  };
  const QualityReport before = h100(cv.uncalibrated), after = h100(cv.calibrated);
  WARN("held out, the H100's " << after.problems.size() << " problems: pick median "
                               << before.median_pick_fraction << " -> "
                               << after.median_pick_fraction << ", p10 " << before.p10_pick_fraction
                               << " -> " << after.p10_pick_fraction << "; top-5 median "
                               << before.median_top5_fraction << " -> "
                               << after.median_top5_fraction << "; Spearman "
                               << before.median_spearman << " -> " << after.median_spearman);
  REQUIRE(after.problems.size() == 157);
  CHECK(after.median_pick_fraction >= kHeldOutPickMedian);
  CHECK(after.p10_pick_fraction >= kHeldOutPickP10);
  CHECK(after.median_top5_fraction >= kHeldOutTop5Median);
  CHECK(after.median_spearman >= kHeldOutSpearman);
  // The calibration's gain over the uncalibrated ranking of the same folds (measured: +0.09,
  // +0.25, +0.06, +0.18).
  CHECK(after.median_pick_fraction > before.median_pick_fraction + 0.05);
  CHECK(after.p10_pick_fraction > before.p10_pick_fraction + 0.1);
  CHECK(after.median_top5_fraction > before.median_top5_fraction);
  CHECK(after.median_spearman > before.median_spearman + 0.1);
}

TEST_CASE("the shipped H100 calibration on random problems drawn after its fit") {
  // h100_random_seed2.csv.gz is in no fit: the zero-run pick (estimated registers, as predict
  // ranks) of the calibration that ships, on problems a user could meet first. Floors a little
  // under the figures measured (bench/RESULTS.md).
  const auto [before, after] = shipped_h100_on({"h100_random_seed2.csv.gz"});
  WARN("15 unseen problems: pick median "
       << before.median_pick_fraction << " -> " << after.median_pick_fraction << ", p10 "
       << before.p10_pick_fraction << " -> " << after.p10_pick_fraction << "; top-5 median "
       << after.median_top5_fraction);
  REQUIRE(after.problems.size() == 15);
  CHECK(after.median_pick_fraction >= 0.92);
  CHECK(after.p10_pick_fraction >= 0.82);
  CHECK(after.median_top5_fraction >= 0.95);
  CHECK(after.median_pick_fraction > before.median_pick_fraction);
  CHECK(after.p10_pick_fraction > before.p10_pick_fraction);

  // With seed 1's problems 89-115 and the measured zero-run picks of all 41 (the picks of fold
  // calibrations that never saw them), also in no shipped fit: the problems a refit must not
  // lose. One sample per configuration, at the median of its times in every file.
  const QualityReport wide =
      shipped_h100_on({"h100_random_seed2.csv.gz", "h100_random_seed1_89-115.csv.gz",
                       "h100_model_picks_held_out.csv.gz"})
          .second;
  WARN("41 unseen problems with their measured picks: pick median "
       << wide.median_pick_fraction << ", p10 " << wide.p10_pick_fraction);
  REQUIRE(wide.problems.size() == 41);
  CHECK(wide.median_pick_fraction >= 0.93);
  CHECK(wide.p10_pick_fraction >= 0.82);
}

TEST_CASE("the shipped H100 calibration on the fresh checks' tune attempts") {
  // The 60 s tunes' attempts of seeds 33, 34 and 35 (44 problems in no fit; seed 33's judged
  // which files the shipped fit takes): a tune's dense fast end, where near-ties are many, ranked
  // as predict ranks. Floors a little under the figures measured (bench/RESULTS.md: 0.930,
  // 0.840, 0.967; uncalibrated 0.880, 0.699).
  const auto [before, after] = shipped_h100_on(
      {"h100_fresh_seed33.csv.gz", "h100_fresh_seed34.csv.gz", "h100_fresh_seed35.csv.gz"});
  WARN("the fresh checks' 44 problems: pick median "
       << before.median_pick_fraction << " -> " << after.median_pick_fraction << ", p10 "
       << before.p10_pick_fraction << " -> " << after.p10_pick_fraction << "; top-5 median "
       << after.median_top5_fraction);
  REQUIRE(after.problems.size() == 44);
  CHECK(after.median_pick_fraction >= 0.91);
  CHECK(after.p10_pick_fraction >= 0.81);
  CHECK(after.median_top5_fraction >= 0.95);
  CHECK(after.median_pick_fraction > before.median_pick_fraction + 0.02);
  CHECK(after.p10_pick_fraction > before.p10_pick_fraction + 0.05);
}
