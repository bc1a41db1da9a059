// gemmtune source: the complete CUDA source of one configuration (seed 003's print tools).
#include <cstdio>
#include <memory>

#include "cli/options.hpp"
#include "kernels/kernels.hpp"
#include "search/search.hpp"

namespace gemmtune::cli {
namespace {

struct SourceArgs {
  std::string config;
  ProblemOptions problem;
  GpuOption gpu;
  bool check = true;
};

void run(const SourceArgs& a) {
  const KernelConfig c = KernelConfig::parse(a.config);
  ProblemOptions po = a.problem;
  // Divisibility and alignment depend on the problem; without sizes check a square 1024 one.
  if (po.m == 0) po.m = 1024;
  if (po.n == 0) po.n = 1024;
  if (po.k == 0) po.k = 1024;
  const Problem p = po.problem();
  if (a.check) {
    if (auto v = check_hard(p, a.gpu.device(), c))
      throw InputError("configuration " + c.id() + " breaks " + v->message);
  }
  std::fputs(render_source(c, p.precision, p.op_a, p.op_b).c_str(), stdout);
}

}  // namespace

void register_source(CLI::App& app) {
  auto args = std::make_shared<SourceArgs>();
  auto* cmd = app.add_subcommand("source", "print the CUDA source of one configuration");
  cmd->add_option("--config,-c", args->config, "configuration id")->required();
  add_problem_options(*cmd, args->problem, false);
  add_gpu_option(*cmd, args->gpu);
  cmd->add_flag("!--no-check", args->check,
                "print even if the configuration breaks a hard constraint");
  cmd->callback([args] { run(*args); });
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
            "%7.0f GFLOP/s\n",
            d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_mhz,
            d.dram_bandwidth_gbs, static_cast<long long>(d.l2_bytes >> 20),
            d.peak_gflops(Precision::S), d.peak_gflops(Precision::D));
      }
    }
  });
}

}  // namespace gemmtune::cli
