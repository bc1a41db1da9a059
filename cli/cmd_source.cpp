// gemmtune source: the complete CUDA source of one configuration (seed 003's print tools).
#include <cstdio>
#include <memory>

#include "cli/options.hpp"

namespace gemmtune::cli {

void register_source(CLI::App& app) {
  auto args = std::make_shared<app::SourceRequest>();
  auto* cmd = app.add_subcommand("source", "print the CUDA source of one configuration");
  cmd->add_option("--config,-c", args->config, "configuration id")->required();
  add_problem_options(*cmd, args->problem, false);
  add_gpu_option(*cmd, args->gpu);
  cmd->add_flag("!--no-check", args->check,
                "print even if the configuration breaks a hard constraint");
  cmd->add_option("--batch-kind", args->batch_kind,
                  "the source's batch mode: strided, pointer (arrays of pointers) or variable")
      ->capture_default_str();
  cmd->callback([args] { std::fputs(app::source(*args).c_str(), stdout); });
}

void register_devices(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "list the built-in GPU specs (as JSON with --json)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print each spec as JSON");
  cmd->callback([json] {
    for (const auto& d : builtin_devices()) {
      if (*json) {
        std::printf("%s\n", device_to_json(d).c_str());
      } else {
        std::printf(
            "%-16s sm_%d%d %4d SMs %5.0f MHz %6.0f GB/s L2 %3lld MiB  FP32 %7.0f GFLOP/s  FP64 "
            "%7.0f GFLOP/s  FP16 mma %7.0f GFLOP/s  TF32 mma %7.0f GFLOP/s\n",
            d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_mhz,
            d.dram_bandwidth_gbs, static_cast<long long>(d.l2_bytes >> 20),
            d.peak_gflops(Precision::S), d.peak_gflops(Precision::D), d.peak_gflops(Precision::H),
            d.peak_gflops(Precision::T));
      }
    }
  });
}

}  // namespace gemmtune::cli
