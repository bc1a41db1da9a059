// gemmtune calibrate: fit the model's coefficients to stored (or exported) measurements, print
// the ranking quality before and after, and keep the result in the store for predict and tune.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/options.hpp"
#include "model/model.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct CalibrateArgs {
  std::string db = Database::default_path();
  std::vector<std::string> inputs;  // CSV files of attempts; else the store's attempts
  std::string device;               // with no inputs: only this recorded device
  GpuOption gpu;
  std::string output;  // JSON file
  // Evaluations stop the fit, as they stop cross-validation's folds, so that the same data gives
  // the same calibration on any machine; the time limit only guards against a huge store.
  int evaluations = 600;
  double seconds = 900;
  bool dry_run = false;
};

void print_quality(const QualityReport& before, const QualityReport& after) {
  std::printf("%-28s %5s %7s %7s %7s %7s %8s %8s\n", "problem", "n", "rho", "rho'", "tau", "tau'",
              "regret", "regret'");
  for (size_t i = 0; i < after.problems.size(); ++i) {
    const auto &b = before.problems[i], &a = after.problems[i];
    std::printf("%-28s %5zu %7.3f %7.3f %7.3f %7.3f %8.3f %8.3f\n", a.problem.c_str(), a.samples,
                b.spearman, a.spearman, b.kendall, a.kendall, b.regret, a.regret);
  }
  std::printf("%-28s %5s %7.3f %7.3f %7.3f %7.3f %8.3f %8.3f\n", "median", "",
              before.median_spearman, after.median_spearman, before.median_kendall,
              after.median_kendall, before.median_regret, after.median_regret);
  std::printf(
      "top-1/5/10 within 3%% of the best: %.0f/%.0f/%.0f%% -> %.0f/%.0f/%.0f%% of problems\n",
      before.top1_rate * 100, before.top5_rate * 100, before.top10_rate * 100,
      after.top1_rate * 100, after.top5_rate * 100, after.top10_rate * 100);
}

void run(const CalibrateArgs& a) {
  if (a.evaluations < 1)
    throw InputError("--evaluations = " + std::to_string(a.evaluations) + " must be >= 1");
  if (!(a.seconds > 0)) {
    std::ostringstream seconds;
    seconds << a.seconds;
    throw InputError("--seconds = " + seconds.str() + " must be > 0");
  }
  const DeviceSpec device = a.gpu.device();
  std::vector<Attempt> attempts;
  if (a.inputs.empty()) {
    if (!std::filesystem::exists(a.db))
      throw InputError("the store " + a.db + " does not exist; tune or import measurements first");
    attempts = Database(a.db).attempts(a.device);
  } else {
    for (const auto& path : a.inputs) {
      CsvImportReport report;
      auto rows = read_attempts_csv(read_text_file(path, "measurements file"), report);
      if (!report.rejected.empty())
        std::fprintf(stderr, "%s: %zu unreadable rows left out (first: %s)\n", path.c_str(),
                     report.rejected.size(), report.rejected.front().c_str());
      if (!report.unknown_columns.empty())
        std::fprintf(stderr, "%s: ignored unknown columns: %s\n", path.c_str(),
                     join(report.unknown_columns, ", ").c_str());
      attempts.insert(attempts.end(), rows.begin(), rows.end());
    }
  }
  // Measurements fit the spec they are interpreted on: say so where the recording's GPU is not it.
  std::set<std::string> recorded_on;
  for (const auto& at : attempts) recorded_on.insert(at.device);
  for (const auto& name : recorded_on) {
    const std::string spec = spec_name_of(name);
    if (spec.empty())
      std::fprintf(stderr,
                   "warning: attempts recorded on '%s', which matches no built-in spec (%s), are "
                   "fitted on the %s spec\n",
                   name.c_str(), join(builtin_device_names(), ", ").c_str(), device.name.c_str());
    else if (spec != device.name)
      std::printf(
          "attempts recorded on '%s' are predicted on its own spec (%s) in the fit for %s\n",
          name.c_str(), spec.c_str(), device.name.c_str());
  }
  const auto samples = calibration_samples(attempts);
  if (samples.empty())
    throw InputError("no ok measurement to calibrate on (" + std::to_string(attempts.size()) +
                     " attempts read)");
  const ModelCoefficients start = stored_coefficients(a.db, device.name, "none");
  CalibrationOptions options;
  options.max_seconds = a.seconds;
  options.max_evaluations = a.evaluations;
  const CalibrationResult r = calibrate(device, samples, start, options);
  if (r.stopped_by_clock)
    std::fprintf(stderr,
                 "warning: the fit stopped at the time limit (--seconds %g) after %d of %d "
                 "evaluations: a rerun on the same data may differ; raise --seconds\n",
                 a.seconds, r.evaluations, a.evaluations);
  std::printf(
      "calibrated %s on %zu measurements: loss %.4f -> %.4f (coefficients, %d evaluations) -> "
      "%.4f (with the log-time correction), %.1f s\n",
      device.name.c_str(), r.samples, r.loss_before, r.loss_coefficients, r.evaluations,
      r.loss_after, r.seconds);
  std::printf("%s\n", correction_note(r, options).c_str());
  print_quality(rank_quality(device, samples, start),
                rank_quality(device, samples, r.coefficients));
  const std::string json = coefficients_to_json(r.coefficients);
  std::printf("%s\n", json.c_str());
  if (!a.output.empty()) {
    std::ofstream out(a.output);
    if (!(out << json << "\n")) throw InputError("cannot write '" + a.output + "'");
  }
  if (a.dry_run) return;
  // Under the spec's name (predict --gpu) and every recorded device name of that spec (tune on
  // that GPU); recordings of other GPUs helped the fit but keep their own calibrations.
  std::set<std::string> names{device.name};
  for (const auto& name : recorded_on)
    if (const std::string spec = spec_name_of(name); spec == device.name || spec.empty())
      names.insert(name);
  Database db(a.db);
  for (const auto& name : names) db.save_calibration(name, json);
  std::printf("saved in %s for %zu device name(s)\n", a.db.c_str(), names.size());
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "fit the model to measurements (NLopt coefficients, then a linear log-time correction) and "
      "store them per device");
  cmd->add_option("--db", a->db, "the store")->capture_default_str();
  cmd->add_option("--input,-i", a->inputs, "CSV files of attempts (default: the store's)");
  cmd->add_option("--device", a->device, "with the store: only attempts on this device");
  add_gpu_option(*cmd, a->gpu);
  cmd->add_option("--output,-o", a->output, "also write the coefficients to this JSON file");
  cmd->add_option("--evaluations", a->evaluations,
                  "optimizer evaluations of the loss (the same data, the same calibration)")
      ->capture_default_str();
  cmd->add_option("--seconds", a->seconds, "optimizer time limit (a guard; see --evaluations)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", a->dry_run, "print, but do not store the calibration");
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
