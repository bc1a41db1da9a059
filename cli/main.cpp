// The gemmtune command: one subcommand per job, one-line errors, non-zero exit on failure.
#include <cstdio>
#include <exception>

#include "cli/options.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gemmtune: find fast GEMM kernels for NVIDIA GPUs by model and measurement"};
  app.require_subcommand(1);
  gemmtune::cli::register_predict(app);
  gemmtune::cli::register_space(app);
  gemmtune::cli::register_source(app);
  gemmtune::cli::register_compile(app);
  gemmtune::cli::register_devices(app);
  gemmtune::cli::register_fit_registers(app);
  gemmtune::cli::register_measure(app);
  gemmtune::cli::register_tune(app);
  gemmtune::cli::register_store(app);
  gemmtune::cli::register_calibrate(app);
  gemmtune::cli::register_profile(app);
  gemmtune::cli::register_record(app);
  gemmtune::cli::set_command_line(argc, argv);
  gemmtune::cli::register_report(app);
  gemmtune::cli::register_kernel_set(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const gemmtune::InputError& e) {
    std::fprintf(stderr, "gemmtune: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmtune: failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
