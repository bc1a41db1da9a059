// gemmtune measure: compile the model's top K (or given ids) in parallel, verify and time each
// on the local GPU, cuBLAS timed in the same run; measured beside predicted.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct MeasureArgs {
  ProblemOptions problem;
  std::vector<std::string> configs;
  int top = 10;
  int repetitions = 20;
  std::string format = "table";
  std::string cache = CompileCache::default_directory();
  std::string db = Database::default_path(), calibration = "auto";
};

void run(const MeasureArgs& a) {
  const Problem p = a.problem.problem();
  const Format format = parse_format(a.format);
  const auto start = std::chrono::steady_clock::now();
  GpuSession gpu(0);
  const DeviceSpec& d = gpu.device();
  const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
  std::vector<KernelConfig> configs;
  for (const auto& id : a.configs) {
    const KernelConfig c = KernelConfig::parse(id);
    if (auto v = check_hard(p, d, c))
      throw InputError("configuration " + c.id() + " breaks " + v->message);
    configs.push_back(c);
  }
  if (a.top > 0)
    for (const auto& r : rank_space(p, d, a.top, calibration.coefficients).top)
      configs.push_back(r.config);
  std::vector<CompileJob> jobs;
  for (const auto& c : configs) jobs.push_back({c, p.precision, p.op_a, p.op_b});
  CompileCache cache(a.cache);
  const auto compiled = compile_many(jobs, d.arch(), &cache);
  TimingOptions timing;
  timing.repetitions = a.repetitions;
  const Measurement ref = gpu.measure_cublas(p, timing);
  // Kept for reports in a store that exists already (measure creates none).
  if (ref.status == Status::Ok && std::filesystem::exists(a.db)) {
    Database db(a.db);
    db.save_device(d);
    db.add_reference({d.name, p, "cublas", ref.median_s, ref.gflops, ""});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < configs.size(); ++i) {
    const Measurement m = gpu.measure(p, configs[i], compiled[i], timing);
    const Prediction pred = predict(p, d, configs[i], calibration.coefficients,
                                    compiled[i].ok ? compiled[i].registers : -1);
    rows.push_back({{"config", configs[i].id()},
                    {"status", to_string(m.status)},
                    {"error", m.error},
                    {"registers", compiled[i].registers},
                    {"spill_bytes", compiled[i].spill_store_bytes + compiled[i].spill_load_bytes},
                    {"measured_us", m.median_s * 1e6},
                    {"min_us", m.min_s * 1e6},
                    {"max_us", m.max_s * 1e6},
                    {"gflops", m.gflops},
                    {"rel_error", m.rel_error},
                    {"predicted_us", pred.time_s * 1e6},
                    {"predicted_limit", to_string(pred.limit)},
                    {"vs_cublas", m.status == Status::Ok ? ref.median_s / m.median_s : 0.0}});
    if (gpu.poisoned()) break;  // the context is gone; the rest cannot run in this process
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (format == Format::Json) {
    nlohmann::json out = {{"problem", p.shape_id()},
                          {"device", d.name},
                          {"cublas_us", ref.median_s * 1e6},
                          {"cublas_gflops", ref.gflops},
                          {"wall_s", wall},
                          {"calibration", calibration.description},
                          {"results", rows}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%s on %s: cuBLAS %.2f us (%.0f GFLOP/s); %zu configurations in %.1f s\n",
              p.shape_id().c_str(), d.name.c_str(), ref.median_s * 1e6, ref.gflops, configs.size(),
              wall);
  std::printf("calibration: %s\n", calibration.description.c_str());
  std::printf("%-90s %-13s %5s %10s %9s %10s %7s\n", "config", "status", "regs", "meas_us",
              "GFLOP/s", "pred_us", "x cuBLAS");
  for (const auto& r : rows)
    std::printf("%-90s %-13s %5d %10.2f %9.0f %10.2f %7.3f\n",
                r["config"].get<std::string>().c_str(), r["status"].get<std::string>().c_str(),
                r["registers"].get<int>(), r["measured_us"].get<double>(),
                r["gflops"].get<double>(), r["predicted_us"].get<double>(),
                r["vs_cublas"].get<double>());
}

}  // namespace

void register_measure(CLI::App& app) {
  auto args = std::make_shared<MeasureArgs>();
  auto* cmd = app.add_subcommand("measure",
                                 "verify and time configurations on the local GPU beside cuBLAS");
  add_problem_options(*cmd, args->problem);
  cmd->add_option("--config,-c", args->configs, "configuration ids to measure");
  cmd->add_option("--top,-t", args->top, "also measure the model's top K")->capture_default_str();
  cmd->add_option("--repetitions,-r", args->repetitions, "timed repetitions")
      ->capture_default_str();
  cmd->add_option("--cache", args->cache, "cubin cache directory")->capture_default_str();
  add_format_option(*cmd, args->format);
  add_calibration_option(*cmd, args->calibration);
  cmd->add_option("--db", args->db,
                  "the store holding calibrations; cuBLAS's time is added to it if it exists")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
