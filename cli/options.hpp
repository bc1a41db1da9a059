// Options shared by the subcommands: the problem, the GPU, the output format.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/core.hpp"
#include "model/model.hpp"

namespace gemmtune::cli {

struct ProblemOptions {
  std::string precision = "s", op_a = "n", op_b = "n";
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, batch = 1;
  double alpha = 1.0, beta = 0.0;
  Problem problem() const;  // validated; throws InputError
};
void add_problem_options(CLI::App& app, ProblemOptions& o, bool sizes_required = true);

struct GpuOption {
  std::string gpu = "H100-SXM";
  DeviceSpec device() const;  // built-in name, "local", or a path to a JSON spec
};
void add_gpu_option(CLI::App& app, GpuOption& o);

// --domain: which value set the space is enumerated over (SpaceDomain::named).
void add_domain_option(CLI::App& app, std::string& domain);

enum class Format { Table, Json, Csv };
Format parse_format(const std::string& text);
void add_format_option(CLI::App& app, std::string& format);

// The model coefficients to rank with. source: "auto" (the store's latest calibration for
// device_name when the store exists, else the defaults), "none" (the defaults), or a JSON file.
// A store that cannot be read is reported on stderr and the defaults used.
ModelCoefficients stored_coefficients(const std::string& db_path, const std::string& device_name,
                                      const std::string& source);
void add_calibration_option(CLI::App& app, std::string& source);
// One line on the log-time correction of a calibration: refitted, or kept and why.
std::string correction_note(const CalibrationResult& r, const CalibrationOptions& options);

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

}  // namespace gemmtune::cli
