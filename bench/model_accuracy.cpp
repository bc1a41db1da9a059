// bench/model_accuracy: how well the model ranks recorded measurements, before and after
// calibration, on problems held out of the fit (leave-one-class-out cross-validation).
//   model_accuracy [FILE.csv] [--gpu H100-SXM] [--folds class|problem]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "model/model.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {

std::vector<CalibrationSample> load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  CsvImportReport report;
  auto samples = calibration_samples(read_attempts_csv(text.str(), report));
  if (!report.rejected.empty())
    std::fprintf(stderr, "%zu unreadable rows left out (first: %s)\n", report.rejected.size(),
                 report.rejected.front().c_str());
  return samples;
}

void print(const char* title, const QualityReport& before, const QualityReport& after) {
  std::printf("%s\n%-28s %5s  %8s %8s  %8s %8s  %7s %7s  %s\n", title, "problem", "n", "rho0",
              "rho", "tau0", "tau", "regret0", "regret", "top1/5/10 short10 (calibrated)");
  std::map<std::string, RankQuality> b;
  for (const auto& q : before.problems) b[q.problem] = q;
  for (const auto& q : after.problems) {
    const auto& o = b[q.problem];
    std::printf("%-28s %5zu  %8.3f %8.3f  %8.3f %8.3f  %7.3f %7.3f  %d/%d/%d %d\n",
                q.problem.c_str(), q.samples, o.spearman, q.spearman, o.kendall, q.kendall,
                o.regret, q.regret, q.top1, q.top5, q.top10, q.shortlist10);
  }
  std::printf(
      "%-28s %5s  %8.3f %8.3f  %8.3f %8.3f  %7.3f %7.3f  top1 %.2f->%.2f top5 %.2f->%.2f "
      "top10 %.2f->%.2f shortlist10 %.2f->%.2f\n\n",
      "median", "", before.median_spearman, after.median_spearman, before.median_kendall,
      after.median_kendall, before.median_regret, after.median_regret, before.top1_rate,
      after.top1_rate, before.top5_rate, after.top5_rate, before.top10_rate, after.top10_rate,
      before.shortlist10_rate, after.shortlist10_rate);
}

}  // namespace

int main(int argc, char** argv) try {
  std::string path = GEMMTUNE_SOURCE_DIR "/tests/data/h100_sweeps.csv", gpu = "H100-SXM",
              folds = "class";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gpu" && i + 1 < argc) {
      gpu = argv[++i];
    } else if (a == "--folds" && i + 1 < argc) {
      folds = argv[++i];
    } else {
      path = a;
    }
  }
  const DeviceSpec device = find_builtin_device(gpu);
  const auto samples = load(path);

  const auto t0 = std::chrono::steady_clock::now();
  const CalibrationResult all = calibrate(device, samples);
  std::printf(
      "calibration of all %zu samples: loss %.4f -> %.4f (coefficients, %d evaluations) -> %.4f "
      "(with the correction), %.1f s\n%s\n\n",
      all.samples, all.loss_before, all.loss_coefficients, all.evaluations, all.loss_after,
      all.seconds, coefficients_to_json(all.coefficients).c_str());
  print("in-sample (fitted on everything)", rank_quality(device, samples, {}),
        rank_quality(device, samples, all.coefficients));

  // Cross-validation: each fold's problems are ranked by coefficients fitted without them. The
  // coefficients alone and the correction alone are reported too, to show what each stage adds.
  std::map<std::string, std::vector<CalibrationSample>> fold_of;
  for (const auto& s : samples)
    fold_of[folds == "problem" ? s.problem.shape_id() : problem_class(s.problem)].push_back(s);
  QualityReport before, coefficients_only, correction_only, after;
  for (const auto& [fold, held] : fold_of) {
    std::vector<CalibrationSample> train;
    for (const auto& s : samples)
      if ((folds == "problem" ? s.problem.shape_id() : problem_class(s.problem)) != fold)
        train.push_back(s);
    CalibrationOptions options = fold_fit_options();
    const CalibrationResult r = calibrate(device, train, {}, options);
    ModelCoefficients full = r.coefficients, corrected_defaults;
    full.correction = fit_log_time_correction(device, train, r.coefficients);
    corrected_defaults.correction = fit_log_time_correction(device, train, {});
    const QualityReport qb = rank_quality(device, held, {});
    const QualityReport qc = rank_quality(device, held, r.coefficients);
    const QualityReport qr = rank_quality(device, held, corrected_defaults);
    const QualityReport qa = rank_quality(device, held, full);
    std::printf(
        "fold %-14s %2zu problems held out: median rho %.3f, coefficients %.3f, correction %.3f, "
        "both %.3f (fit %.1f s)\n",
        fold.c_str(), qa.problems.size(), qb.median_spearman, qc.median_spearman,
        qr.median_spearman, qa.median_spearman, r.seconds);
    for (auto [report, fold_report] : {std::pair{&before, &qb}, std::pair{&coefficients_only, &qc},
                                       std::pair{&correction_only, &qr}, std::pair{&after, &qa}})
      report->problems.insert(report->problems.end(), fold_report->problems.begin(),
                              fold_report->problems.end());
  }
  for (auto* report : {&before, &coefficients_only, &correction_only, &after}) summarize(*report);
  print("\nheld out (cross-validated): coefficients only", before, coefficients_only);
  print("held out (cross-validated): correction on the default coefficients only", before,
        correction_only);
  print("held out (cross-validated): calibrated (coefficients, then correction)", before, after);
  std::printf("total %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "model_accuracy: %s\n", e.what());
  return 1;
}
