// gemmtune measure: compile the model's top K (or given ids) in parallel, verify and time each
// on the local GPU, cuBLAS timed in the same run; measured beside predicted.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli/options.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct MeasureArgs {
  ProblemOptions problem;
  std::vector<std::string> configs;
  int top = 10;
  int shortlist = kCompiledShortlist;
  int repetitions = 20;
  std::string format = "table";
  std::string cache = CompileCache::default_directory();
  std::string db = Database::default_path(), calibration = "auto";
  // Pointer arrays or variable sizes: the problem's M, N, K are the shape (pointer) or the
  // largest sizes (variable: drawn uniform in [min_size, largest] unless a sizes file is given).
  std::string batch_kind = "strided", sizes_file;
  std::int64_t min_size = 1;
  unsigned seed = 1;
  bool keep = false;            // store each measured attempt in db, as tune would
  std::string domain = "full";  // the space --top ranks
};

// "m n k [lda ldb ldc]" per line; blank lines and '#' comments skipped.
std::vector<MatrixShape> read_sizes_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the sizes file '" + path + "'");
  std::vector<MatrixShape> shapes;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t") == std::string::npos ||
        line[line.find_first_not_of(" \t")] == '#')
      continue;
    std::istringstream fields(line);
    std::vector<std::int64_t> v;
    for (std::string f; fields >> f;)
      v.push_back(parse_int(f, path + " line " + std::to_string(number)));
    if (v.size() != 3 && v.size() != 6)
      throw InputError(path + " line " + std::to_string(number) +
                       ": expected 'm n k' or 'm n k lda ldb ldc', got " +
                       std::to_string(v.size()) + " numbers");
    MatrixShape s{v[0], v[1], v[2]};
    if (v.size() == 6) {
      s.lda = v[3];
      s.ldb = v[4];
      s.ldc = v[5];
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) throw InputError("the sizes file '" + path + "' holds no matrix");
  return shapes;
}

// The --config ids (each checked against the problem kernels are chosen for), then the model's
// --top, adapted to the batch kind as the runtime adapts them. Repeats stay: rows keep the
// positions the caller asked for (scripts/device-fresh-check reads them so).
// A variable batch's --top is ranked for its sizes (rank_for_sizes), not for its largest matrix;
// any other's is the first of the model's --compiled-shortlist, compiled and ranked again with the
// compiler's registers (rank_compiled), those it rules out after the rest.
std::vector<KernelConfig> configs_to_measure(const MeasureArgs& a, const Problem& chosen_for,
                                             const DeviceSpec& d, const ModelCoefficients& k,
                                             BatchKind kind, const CompileCache& cache,
                                             const std::vector<Problem>& sizes = {}) {
  std::vector<KernelConfig> configs;
  auto add = [&](const KernelConfig& c) { configs.push_back(batched_config(c, kind)); };
  for (const auto& id : a.configs) {
    const KernelConfig c = KernelConfig::parse(id);
    if (auto v = check_hard(chosen_for, d, c))
      throw InputError("configuration " + c.id() + " breaks " + v->message);
    add(c);
  }
  if (a.top <= 0) return configs;
  if (kind == BatchKind::Variable) {
    for (const auto& r : rank_for_sizes(chosen_for, sizes, d, a.top, k)) add(r.config);
    return configs;
  }
  std::vector<KernelConfig> ranked;
  const SpaceDomain domain = SpaceDomain::named(a.domain);
  for (const auto& r : rank_space(chosen_for, d, std::max(a.top, a.shortlist), k, domain).top)
    ranked.push_back(r.config);
  // The compiled shortlist weighs the calibration's proven kernels beside the space's first.
  if (a.shortlist > 0) ranked = with_proven(chosen_for, d, k, std::move(ranked));
  for (auto& c : ranked) c = batched_config(c, kind);
  if (a.shortlist > 0) {
    std::vector<KernelConfig> reranked;
    for (const auto& c : app::rank_with_compiler(chosen_for, d, ranked, k, kind, cache))
      reranked.push_back(c.config);
    ranked = std::move(reranked);
  }
  configs.insert(configs.end(), ranked.begin(),
                 ranked.begin() + long(std::min(ranked.size(), size_t(a.top))));
  return configs;
}

// Pointer-array and variable-size batches: each configuration (adapted as the runtime adapts
// it) verified on every matrix against the FP64 host reference and timed; cuBLAS's strided
// batched call beside a pointer-array batch (the same shape), none beside a variable one.
void run_batched(const MeasureArgs& a, BatchKind kind) {
  const Problem p = a.problem.problem();
  const auto start = std::chrono::steady_clock::now();
  std::vector<MatrixShape> shapes;
  if (!a.sizes_file.empty()) {
    if (kind != BatchKind::Variable)
      throw InputError("--sizes is for --batch-kind variable; a pointer batch has one shape");
    shapes = read_sizes_file(a.sizes_file);
  } else if (kind == BatchKind::PointerArray) {
    shapes.assign(std::size_t(p.batch), MatrixShape{p.m, p.n, p.k, p.lda, p.ldb, p.ldc});
  } else {
    if (a.min_size < 0 || a.min_size > std::min({p.m, p.n, p.k}))
      throw InputError("--min-size = " + std::to_string(a.min_size) +
                       " must be 0 to the smallest of M, N, K");
    std::mt19937_64 rng(a.seed);
    auto draw = [&](std::int64_t max) {
      return std::uniform_int_distribution<std::int64_t>(a.min_size, max)(rng);
    };
    for (std::int64_t i = 0; i < p.batch; ++i) {
      const std::int64_t m = draw(p.m), n = draw(p.n), k = draw(p.k);
      shapes.push_back({m, n, k});
    }
  }
  GpuSession gpu(0);
  const DeviceSpec& d = gpu.device();
  const BatchedData data(p.precision, p.op_a, p.op_b, shapes, p.alpha, p.beta, a.seed);
  const Problem call = data.call(kind);
  const Problem representative = batched_representative(call, kind);
  const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
  CompileCache cache(a.cache);
  const std::vector<KernelConfig> configs =
      configs_to_measure(a, representative, d, calibration.coefficients, kind, cache,
                         matrix_problems(representative, shapes));
  std::vector<CompileJob> jobs;
  for (const auto& c : configs) jobs.push_back({c, p.precision, p.op_a, p.op_b, kind});
  const auto compiled = compile_many(jobs, d.arch(), &cache);
  TimingOptions timing;
  timing.repetitions = a.repetitions;
  const Measurement ref =
      kind == BatchKind::PointerArray ? gpu.measure_cublas(call, timing) : Measurement{};
  std::printf("%s batch of %zu (%s %s%s, largest %lldx%lldx%lld) on %s\n", to_string(kind),
              shapes.size(), std::string(1, to_char(p.precision)).c_str(),
              std::string(1, to_char(p.op_a)).c_str(), std::string(1, to_char(p.op_b)).c_str(),
              (long long)call.m, (long long)call.n, (long long)call.k, d.name.c_str());
  if (ref.median_s > 0)
    std::printf("cuBLAS strided batched, same shape: %.2f us (%.0f GFLOP/s)\n", ref.median_s * 1e6,
                ref.gflops);
  std::printf("%-90s %-8s %5s %10s %9s %10s %7s\n", "config", "status", "regs", "meas_us",
              "GFLOP/s", "max_err", "x cuBLAS");
  for (size_t i = 0; i < configs.size(); ++i) {
    std::string status = "ok";
    double median_us = 0, gflops = 0, error = 0;
    if (!compiled[i].ok) {
      status = "compile";
    } else {
      const LoadedKernel kernel(compiled[i], configs[i], p.precision, kind);
      data.reset_output(nullptr);  // the default stream
      kernel.launch_batched(call, data.arrays(), nullptr);
      const std::vector<double> errors = data.errors();
      for (double e : errors) error = std::isnan(e) ? e : std::max(error, e);
      if (!(error <= verify_tolerance(p.precision, p.k))) {
        status = "wrong";
      } else {
        const Measurement m =
            time_launches([&] { kernel.launch_batched(call, data.arrays(), nullptr); }, nullptr,
                          timing, data.flops());
        median_us = m.median_s * 1e6;
        gflops = m.gflops;
      }
    }
    std::printf("%-90s %-8s %5d %10.2f %9.0f %10.2e %7.3f\n", configs[i].id().c_str(),
                status.c_str(), compiled[i].registers, median_us, gflops, error,
                ref.median_s > 0 && median_us > 0 ? ref.median_s * 1e6 / median_us : 0.0);
  }
  std::printf("%.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void run(const MeasureArgs& a) {
  if (a.shortlist < 0 || a.shortlist > 4096)
    throw InputError("--compiled-shortlist = " + std::to_string(a.shortlist) +
                     " must be 0 (none) to 4096");
  const BatchKind kind = parse_batch_kind(a.batch_kind);
  if (kind != BatchKind::Strided) {
    if (a.keep)
      throw InputError("--keep stores strided batches only, not --batch-kind " + a.batch_kind);
    if (parse_format(a.format) != Format::Table)
      throw InputError("--format " + a.format + ": --batch-kind " + a.batch_kind +
                       " prints a table only");
    return run_batched(a, kind);
  }
  if (!a.sizes_file.empty()) throw InputError("--sizes needs --batch-kind variable");
  const Problem p = a.problem.problem();
  const Format format = parse_format(a.format);
  const auto start = std::chrono::steady_clock::now();
  GpuSession gpu(0);
  const DeviceSpec& d = gpu.device();
  const ChosenCalibration calibration = calibration_for(a.db, d.name, a.calibration);
  CompileCache cache(a.cache);
  const std::vector<KernelConfig> configs =
      configs_to_measure(a, p, d, calibration.coefficients, BatchKind::Strided, cache);
  std::vector<CompileJob> jobs;
  for (const auto& c : configs) jobs.push_back({c, p.precision, p.op_a, p.op_b});
  const auto compiled = compile_many(jobs, d.arch(), &cache);
  TimingOptions timing;
  timing.repetitions = a.repetitions;
  const Measurement ref = gpu.measure_cublas(p, timing);
  // Kept for reports in a store that exists already (measure creates none, unless --keep).
  std::unique_ptr<Database> db;
  if (a.keep || std::filesystem::exists(a.db)) {
    db = std::make_unique<Database>(a.db);
    db->save_device(d);
    if (ref.status == Status::Ok)
      db->add_reference({d.name, p, "cublas", ref.median_s, ref.gflops, ""});
  }
  const TuningRun kept_run("measure");
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < configs.size(); ++i) {
    const Measurement m = gpu.measure(p, configs[i], compiled[i], timing);
    if (a.keep) db->add(kept_run.attempt(evaluation_of(configs[i], compiled[i], m), p, d));
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
                          {"shortlist", a.top > 0 ? a.shortlist : 0},
                          {"results", rows}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%s on %s: cuBLAS %.2f us (%.0f GFLOP/s); %zu configurations in %.1f s\n",
              p.shape_id().c_str(), d.name.c_str(), ref.median_s * 1e6, ref.gflops, configs.size(),
              wall);
  std::printf("calibration: %s\n", calibration.description.c_str());
  if (a.top > 0 && a.shortlist > 0)
    std::printf(
        "the model's top %d: its first %d and the calibration's proven kernels (up to %d) "
        "compiled and ranked again with their registers\n",
        a.top, std::max(a.top, a.shortlist), kProvenCandidates);
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
  cmd->add_option("--compiled-shortlist", args->shortlist,
                  "compile the model's first N (ranked with estimated registers) and take --top "
                  "from them ranked again with the compiler's registers; 0: the estimate's order")
      ->capture_default_str();
  cmd->add_option("--repetitions,-r", args->repetitions, "timed repetitions")
      ->capture_default_str();
  cmd->add_option("--cache", args->cache, "cubin cache directory")->capture_default_str();
  add_format_option(*cmd, args->format);
  add_domain_option(*cmd, args->domain);
  add_calibration_option(*cmd, args->calibration);
  cmd->add_option("--db", args->db,
                  "the store holding calibrations; cuBLAS's time is added to it if it exists "
                  "(--keep creates it and adds every attempt)")
      ->capture_default_str();
  cmd->add_flag("--keep", args->keep,
                "store every measured attempt in --db (created if missing), so that what was "
                "measured can calibrate the model");
  cmd->add_option("--batch-kind", args->batch_kind,
                  "strided, pointer (arrays of pointers, one shape) or variable (sizes per "
                  "matrix, the problem's M, N, K the largest)")
      ->capture_default_str();
  cmd->add_option("--sizes", args->sizes_file,
                  "variable batch: a file of 'm n k [lda ldb ldc]' lines, one per matrix");
  cmd->add_option(
         "--min-size", args->min_size,
         "variable batch without --sizes: sizes uniform in [this, M], [this, N], [this, K]")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "random sizes and inputs of a batched measurement")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
