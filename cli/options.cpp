#include "cli/options.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "profiler/profiler.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {

void add_problem_options(CLI::App& app, ProblemOptions& o, bool sizes_required) {
  app.add_option("--precision,-p", o.precision,
                 "s, d, c or z; h, b or t (FP16, BF16 or TF32 inputs on tensor cores, FP32 C)")
      ->capture_default_str();
  app.add_option("--opa", o.op_a, "op(A): n, t or c")->capture_default_str();
  app.add_option("--opb", o.op_b, "op(B): n, t or c")->capture_default_str();
  auto* m = app.add_option("--m,-m", o.m, "rows of C");
  auto* n = app.add_option("--n,-n", o.n, "columns of C");
  auto* k = app.add_option("--k,-k", o.k, "inner dimension");
  if (sizes_required) {
    m->required();
    n->required();
    k->required();
  }
  app.add_option("--lda", o.lda, "leading dimension of A (0: packed)");
  app.add_option("--ldb", o.ldb, "leading dimension of B (0: packed)");
  app.add_option("--ldc", o.ldc, "leading dimension of C (0: packed)");
  app.add_option("--batch", o.batch, "strided batch count")->capture_default_str();
  app.add_option("--alpha", o.alpha, "alpha (real part)")->capture_default_str();
  app.add_option("--beta", o.beta, "beta (real part)")->capture_default_str();
}

namespace {

WorkloadEntry parse_workload_line(const std::string& line) {
  CLI::App app;
  ProblemOptions o;
  add_problem_options(app, o);
  std::string weight = "1";
  app.add_option("--weight", weight, "how often the problem runs");
  try {
    app.parse(line, false);
  } catch (const CLI::ParseError& e) {
    throw InputError("'" + line + "': " + e.what());
  }
  WorkloadEntry entry;
  size_t used = 0;
  try {
    entry.weight = std::stod(weight, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != weight.size() || !std::isfinite(entry.weight) || !(entry.weight > 0))
    throw InputError("weight '" + weight + "' is not a finite number > 0");
  try {
    entry.problem = o.problem();
  } catch (const InputError& e) {
    throw InputError("'" + line + "': " + e.what());
  }
  return entry;
}

}  // namespace

std::vector<WorkloadEntry> read_workload_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the problems file '" + path + "'");
  std::vector<WorkloadEntry> entries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      entries.push_back(parse_workload_line(line.substr(first)));
    } catch (const InputError& e) {
      throw InputError(path + " line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (entries.empty()) throw InputError("the problems file '" + path + "' holds no problem");
  return entries;
}

std::vector<Problem> read_problems_file(const std::string& path) {
  std::vector<Problem> problems;
  for (const WorkloadEntry& e : read_workload_file(path)) problems.push_back(e.problem);
  return problems;
}

void add_evaluator_options(CLI::App& app, EvaluatorOptions& o) {
  app.add_option("--replay", o.replay, "answer from a CSV of recorded attempts instead of the GPU");
  app.add_option("--replay-delay", o.replay_delay,
                 "with --replay: seconds each measurement takes, as on a GPU (to time schedules)");
  app.add_option("--gpu", o.gpu, "with --replay: the built-in spec the recording was made on")
      ->capture_default_str();
  app.add_option("--repetitions,-r", o.repetitions, "timed repetitions per kernel")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout,
                 "seconds one measurement may take before its worker is killed")
      ->capture_default_str();
}

void add_gpu_option(CLI::App& app, std::string& gpu) {
  app.add_option("--gpu,-g", gpu,
                 "built-in GPU (" + join(builtin_device_names(), ", ") +
                     "), 'local' for the GPU of this machine, or a JSON spec file")
      ->capture_default_str();
}

void add_domain_option(CLI::App& app, std::string& domain) {
  app.add_option("--domain", domain,
                 "parameter values enumerated: full; wide (full with the partial unrolls "
                 "and rasters refinement reaches: about 12 times the configurations, 3-4 "
                 "times predict's time); compact (small enough to sweep; no tensor cores, "
                 "cp.async or split-K); or tensor (FP64 tensor-core kernels only, to sample)")
      ->capture_default_str();
}

std::string correction_note(const CalibrationResult& r, const CalibrationOptions& options) {
  if (r.correction_refitted) {
    const std::string family =
        std::to_string(r.samples - r.correction_samples) + " FP16, BF16 and TF32 ones";
    return "log-time correction refitted on " + std::to_string(r.correction_samples) +
           " measurements of " + std::to_string(r.problems) + " problems" +
           (r.samples == r.correction_samples ? ""
            : r.coefficients.learned_reduced.empty()
                ? " (the trees on " + family + " too)"
                : " (the trees on them; " + family + " have their own, fitted on all)");
  }
  return "log-time correction " +
         std::string(r.coefficients.correction.empty() ? "not fitted" : "kept from the start") +
         ": " + std::to_string(r.correction_samples) + " measurements of " +
         std::to_string(r.problems) + " problems, a refit needs " +
         std::to_string(options.min_correction_samples) + " of " +
         std::to_string(options.min_correction_problems);
}

ModelCoefficients stored_coefficients(const std::string& db_path, const std::string& device_name,
                                      const std::string& source) {
  return calibration_for(db_path, device_name, source).coefficients;
}

void add_calibration_option(CLI::App& app, std::string& source) {
  app.add_option("--calibration", source,
                 "model coefficients: auto (the store's latest for this GPU, else the one shipped "
                 "for it), none, or a JSON file")
      ->capture_default_str();
}

namespace {
std::string& stored_command_line() {
  static std::string line;
  return line;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  stored_command_line() = join(args, " ");
}

const std::string& command_line() {
  return stored_command_line();
}

Format parse_format(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "json") return Format::Json;
  if (text == "csv") return Format::Csv;
  throw InputError("format '" + text + "' is not one of table, json, csv");
}

void add_format_option(CLI::App& app, std::string& format) {
  app.add_option("--format,-f", format, "table, json or csv")->capture_default_str();
}

std::vector<Precision> parse_precision_letters(const std::string& letters) {
  std::vector<Precision> out;
  for (char letter : letters) out.push_back(parse_precision(std::string(1, letter)));
  return out;
}

}  // namespace gemmtune::cli
