// Options shared by the subcommands: the problem, the GPU, the output format.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "core/core.hpp"
#include "model/model.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {

using app::ProblemOptions;
void add_problem_options(CLI::App& app, ProblemOptions& o, bool sizes_required = true);

// One problem per line in the options above ("--precision d --m 4096 --n 4096 --k 256");
// blank lines and lines starting with '#' are skipped. Throws InputError naming the line.
std::vector<Problem> read_problems_file(const std::string& path);

// A workload: the same lines, each optionally with `--weight W` (how often the problem runs;
// finite and > 0, default 1). Throws InputError naming the line and the bad value, or for a file
// with no problem.
using app::WorkloadEntry;
std::vector<WorkloadEntry> read_workload_file(const std::string& path);

struct GpuOption {
  std::string gpu = "H100-SXM";
  DeviceSpec device() const { return app::device_named(gpu); }
};
// Precisions given as letters ("sdcz", "hbt"); throws InputError naming a letter that is none.
std::vector<Precision> parse_precision_letters(const std::string& letters);
void add_gpu_option(CLI::App& app, std::string& gpu);
inline void add_gpu_option(CLI::App& app, GpuOption& o) {
  add_gpu_option(app, o.gpu);
}

using app::calibration_for;
using app::EvaluatorOptions;
using app::make_evaluator;
void add_evaluator_options(CLI::App& app, EvaluatorOptions& o);

// --domain: which value set the space is enumerated over (SpaceDomain::named).
void add_domain_option(CLI::App& app, std::string& domain);

enum class Format { Table, Json, Csv };
Format parse_format(const std::string& text);
void add_format_option(CLI::App& app, std::string& format);

// Its coefficients alone.
ModelCoefficients stored_coefficients(const std::string& db_path, const std::string& device_name,
                                      const std::string& source);
void add_calibration_option(CLI::App& app, std::string& source);
// One line on the log-time correction of a calibration: refitted, or kept and why.
std::string correction_note(const CalibrationResult& r, const CalibrationOptions& options);

// export --bundle: the kernel set of a workload, compiled, with its table.
struct BundleArgs {
  std::string dir, problems, archs;  // archs: comma-separated ("": the --gpu spec's)
  app::KernelSetRequest set;
};
void export_bundle(const BundleArgs& a);

// The arguments the command was started with, after the program's name, joined by spaces.
void set_command_line(int argc, char** argv);
const std::string& command_line();

// Each subcommand registers itself on the app.
void register_predict(CLI::App& app);
void register_space(CLI::App& app);
void register_source(CLI::App& app);
void register_compile(CLI::App& app);
void register_devices(CLI::App& app);
void register_fit_registers(CLI::App& app);
void register_measure(CLI::App& app);
void register_tune(CLI::App& app);
void register_store(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_profile(CLI::App& app);
void register_record(CLI::App& app);
void register_report(CLI::App& app);
void register_kernel_set(CLI::App& app);

}  // namespace gemmtune::cli
