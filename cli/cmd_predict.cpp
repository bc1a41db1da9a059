// gemmtune predict: rank the pruned space with the model, print the top k and why.
#include <cstdio>
#include <memory>

#include "cli/options.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct PredictArgs {
  app::PredictRequest request;
  std::string format = "table";
};

void run(const PredictArgs& a) {
  const Format format = parse_format(a.format);
  const app::PredictResult result = app::predict(a.request);
  const Problem& problem = result.problem;
  const DeviceSpec& device = result.device;
  const Ranking& r = result.ranking;
  if (format == Format::Json) {
    std::printf("%s\n", app::to_json(result).dump(2).c_str());
    return;
  }
  if (format == Format::Csv) {
    std::printf(
        "rank,config,time_us,gflops,occupancy,blocks_per_sm,registers,smem_bytes,limit,"
        "compute_us,shared_us,latency_us,l2_us,dram_us,launch_us,wave_efficiency\n");
    for (size_t i = 0; i < r.top.size(); ++i) {
      const Prediction& p = r.top[i].prediction;
      std::printf("%zu,%s,%.3f,%.1f,%.3f,%d,%d,%lld,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", i + 1,
                  r.top[i].config.id().c_str(), p.time_s * 1e6, p.gflops, p.occ.fraction,
                  p.occ.blocks_per_sm, p.registers, static_cast<long long>(p.smem_bytes),
                  to_string(p.limit), p.t_compute * 1e6, p.t_smem * 1e6, p.t_latency * 1e6,
                  p.t_l2 * 1e6, p.t_dram * 1e6, p.t_launch * 1e6, p.wave_efficiency);
    }
    return;
  }
  std::printf("%s on %s: %.0f configurations predicted in %.3f s (peak %.0f GFLOP/s, %s model)\n",
              problem.shape_id().c_str(), device.name.c_str(), double(r.evaluated), r.seconds,
              device.peak_gflops(problem.precision),
              result.calibrated ? "calibrated" : "uncalibrated");
  std::printf("calibration: %s\n", result.calibration.description.c_str());
  if (result.compiled > 0)
    std::printf(
        "registers: the model's first %d and %d proven kernels of the calibration compiled for "
        "%s and ranked again (%d failed or spilled, left out)\n",
        result.compiled, result.proven, device.arch().c_str(), result.ruled_out);
  std::printf("%4s  %-86s %10s %9s %5s %4s %5s %7s  %s\n", "rank", "config", "time_us", "GFLOP/s",
              "occ%", "blk", "regs", "smem", "limit");
  for (size_t i = 0; i < r.top.size(); ++i) {
    const Prediction& p = r.top[i].prediction;
    std::printf("%4zu  %-86s %10.2f %9.0f %5.1f %4d %5d %7lld  %s\n", i + 1,
                r.top[i].config.id().c_str(), p.time_s * 1e6, p.gflops, p.occ.fraction * 100,
                p.occ.blocks_per_sm, p.registers, static_cast<long long>(p.smem_bytes),
                to_string(p.limit));
    std::printf("      why: %s\n", p.why().c_str());
  }
}

}  // namespace

void register_predict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand("predict", "rank the kernel space with the model (no GPU needed)");
  app::PredictRequest& q = args->request;
  add_problem_options(*cmd, q.problem);
  add_gpu_option(*cmd, q.gpu);
  cmd->add_option("--top,-t", q.top, "how many configurations to print")->capture_default_str();
  cmd->add_option("--config,-c", q.configs,
                  "predict these configuration ids (in this order) instead of ranking the space");
  add_format_option(*cmd, args->format);
  add_domain_option(*cmd, q.domain);
  add_calibration_option(*cmd, q.calibration);
  cmd->add_option("--db", q.db, "the store holding calibrations (read only if it exists)")
      ->capture_default_str();
  cmd->add_flag("--shortlist", q.shortlist,
                "list in the order tune measures: the best of each tile family (BM, BN, BK, DX, "
                "DY) first");
  cmd->add_option("--compiled-shortlist", q.compiled_shortlist,
                  "compile the model's first N with NVRTC (no GPU needed) and rank them again "
                  "with the compiler's registers; 0: estimated registers")
      ->capture_default_str();
  cmd->add_option("--cache", q.cache, "cubin cache directory")->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
