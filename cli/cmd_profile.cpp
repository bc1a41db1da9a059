// gemmtune profile: one configuration's hardware counters (CUPTI) and energy (NVML) beside the
// model's prediction of the same quantities; the counters are stored with the attempt.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/options.hpp"
#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct ProfileArgs {
  ProblemOptions problem;
  std::string config;
  bool best = false;
  std::string metrics;  // comma-separated; default set when empty
  std::string format = "table";
  std::string db = Database::default_path(), calibration = "auto";
  bool energy = true;
  int repetitions = 20;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void run(const ProfileArgs& a) {
  const Problem p = a.problem.problem();
  const Format format = parse_format(a.format);
  GpuSession gpu(0);
  const DeviceSpec& d = gpu.device();
  KernelConfig config;
  if (a.best) {
    if (!std::filesystem::exists(a.db))
      throw InputError("--best needs a store; " + a.db + " does not exist (tune first)");
    const auto stored = Database(a.db).best(d.name, p);
    if (!stored)
      throw InputError("the store has no ok attempt of " + p.shape_id() + " on " + d.name);
    config = stored->config;
  } else if (!a.config.empty()) {
    config = KernelConfig::parse(a.config);
  } else {
    throw InputError("name a configuration with --config ID, or --best");
  }
  if (auto v = check_hard(p, d, config))
    throw InputError("configuration " + config.id() + " breaks " + v->message);
  const std::vector<std::string> metrics =
      a.metrics.empty() ? default_counter_metrics(p.precision) : split(a.metrics);

  const CompileCache cache(CompileCache::default_directory());
  const CompileResult compiled =
      compile_source(render_source(config, p.precision, p.op_a, p.op_b), d.arch(), &cache);
  TimingOptions timing;
  timing.repetitions = a.repetitions;
  const Measurement m = gpu.measure(p, config, compiled, timing);
  if (m.status != Status::Ok)
    throw InputError("configuration " + config.id() + " did not run correctly: " +
                     std::string(to_string(m.status)) + ": " + m.error);
  const auto t0 = std::chrono::steady_clock::now();
  CounterValues counters;
  std::string counter_error;
  try {
    counters = gpu.profile(p, config, compiled, metrics);
  } catch (const CounterError& e) {
    counter_error = e.what();
  }
  const double profile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double joules = 0;
  std::string energy_error;
  if (a.energy) {
    try {
      joules = gpu.energy(p, config, compiled, m.median_s).joules_per_run;
    } catch (const EnergyError& e) {
      energy_error = e.what();
    }
  }
  const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
  const Prediction pred = predict(p, d, config, calibration.coefficients, compiled.registers);
  const auto rows =
      counters.empty() ? std::vector<CounterComparison>{} : compare_with_model(counters, pred);

  // Stored with the attempt, so `show` and exports carry the hardware's view.
  nlohmann::json counter_json = nlohmann::json::object();
  for (const auto& [name, value] : counters) counter_json[name] = value;
  Evaluation e = evaluation_of(config, compiled, m);
  e.energy_j = joules;
  if (!counters.empty()) e.counters_json = counter_json.dump();
  Database db(a.db);
  db.save_device(d);
  db.add(TuningRun("profile").attempt(e, p, d));

  const double gflops_per_j = joules > 0 ? p.flops() / joules * 1e-9 : 0;
  if (format == Format::Json) {
    nlohmann::json out = {{"problem", p.shape_id()},
                          {"device", d.name},
                          {"config", config.id()},
                          {"measured_us", m.median_s * 1e6},
                          {"gflops", m.gflops},
                          {"registers", compiled.registers},
                          {"profile_seconds", profile_s},
                          {"counters", counter_json},
                          {"energy_j", joules},
                          {"gflops_per_joule", gflops_per_j},
                          {"predicted_limit", to_string(pred.limit)},
                          {"calibration", calibration.description},
                          {"why", pred.why()}};
    for (const auto& r : rows)
      out["comparison"].push_back(
          {{"quantity", r.quantity},
           {"metrics", r.metrics},
           {"counter", std::isnan(r.counter) ? nlohmann::json(nullptr) : nlohmann::json(r.counter)},
           {"model", r.model},
           {"ratio", r.ratio()}});
    for (const auto& [reason, pct] : top_stall_reasons(counters))
      out["top_stalls"].push_back({{"reason", reason}, {"pct_of_active_warps", pct}});
    if (!counter_error.empty()) out["counters_error"] = counter_error;
    if (!energy_error.empty()) out["energy_error"] = energy_error;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%s on %s\n%s\n  measured %.2f us (%.0f GFLOP/s), %d registers\n",
              p.shape_id().c_str(), d.name.c_str(), config.id().c_str(), m.median_s * 1e6, m.gflops,
              compiled.registers);
  std::printf("  model (calibration: %s): %s\n", calibration.description.c_str(),
              pred.why().c_str());
  if (!counter_error.empty()) std::printf("  counters not collected: %s\n", counter_error.c_str());
  if (!rows.empty()) {
    std::printf("\n  %-38s %16s %16s %8s\n", "quantity", "counter", "model", "ratio");
    for (const auto& r : rows)
      std::printf("  %-38s %16.4g %16.4g %8.3f\n", r.quantity.c_str(), r.counter, r.model,
                  r.ratio());
    std::printf("\n  top warp stalls (%% of active warps):");
    for (const auto& [reason, pct] : top_stall_reasons(counters))
      std::printf("  %s %.1f", reason.c_str(), pct);
    std::printf("\n\n  all counters (%zu, collected in %.2f s):\n", counters.size(), profile_s);
    for (const auto& [name, value] : counters)
      std::printf("    %-66s %16.6g\n", name.c_str(), value);
  }
  if (joules > 0)
    std::printf("  energy: %.4f J per run, %.1f GFLOP/J\n", joules, gflops_per_j);
  else if (!energy_error.empty())
    std::printf("  energy not measured: %s\n", energy_error.c_str());
}

}  // namespace

void register_profile(CLI::App& app) {
  auto a = std::make_shared<ProfileArgs>();
  auto* cmd = app.add_subcommand(
      "profile", "hardware counters and energy of one configuration beside the model's figures");
  add_problem_options(*cmd, a->problem);
  cmd->add_option("--config,-c", a->config, "configuration id");
  cmd->add_flag("--best", a->best, "the store's best configuration for this problem");
  cmd->add_option("--metrics", a->metrics,
                  "comma-separated Nsight Compute metric names (default: the GEMM set)");
  add_format_option(*cmd, a->format);
  cmd->add_option("--db", a->db, "the store (read by --best, written with the counters)")
      ->capture_default_str();
  add_calibration_option(*cmd, a->calibration);
  cmd->add_flag("!--no-energy", a->energy, "skip the NVML energy loop");
  cmd->add_option("--repetitions,-r", a->repetitions, "timed repetitions")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
