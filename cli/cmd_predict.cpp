// gemmtune predict: rank the pruned space with the model, print the top k and why.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct PredictArgs {
  ProblemOptions problem;
  GpuOption gpu;
  int top = 10;
  std::string format = "table", domain = "full";
  std::string db = Database::default_path(), calibration = "auto";
  bool shortlist = false;
};

// The first `top` of the order tune measures in: one configuration per tile family first.
Ranking as_shortlist(Ranking r, int top) {
  std::vector<const KernelConfig*> configs;
  for (const auto& x : r.top) configs.push_back(&x.config);
  std::vector<Ranked> ordered;
  for (size_t i : shortlist_order(configs)) {
    if (int(ordered.size()) == top) break;
    ordered.push_back(r.top[i]);
  }
  r.top = std::move(ordered);
  return r;
}

nlohmann::json to_json(const Ranked& r, int rank) {
  const Prediction& p = r.prediction;
  return {{"rank", rank},
          {"config", r.config.id()},
          {"time_us", p.time_s * 1e6},
          {"gflops", p.gflops},
          {"occupancy", p.occ.fraction},
          {"blocks_per_sm", p.occ.blocks_per_sm},
          {"occupancy_limit", to_string(p.occ.limit)},
          {"registers", p.registers},
          {"smem_bytes", p.smem_bytes},
          {"limit", to_string(p.limit)},
          {"terms_us",
           {{"compute", p.t_compute * 1e6},
            {"shared", p.t_smem * 1e6},
            {"issue", p.t_issue * 1e6},
            {"latency", p.t_latency * 1e6},
            {"l2", p.t_l2 * 1e6},
            {"dram", p.t_dram * 1e6},
            {"launch", p.t_launch * 1e6}}},
          {"wave_efficiency", p.wave_efficiency},
          {"dram_bytes", p.dram_bytes},
          {"why", p.why()}};
}

void run(const PredictArgs& a) {
  const Problem problem = a.problem.problem();
  const DeviceSpec device = a.gpu.device();
  const Format format = parse_format(a.format);
  const ChosenCalibration calibration = calibration_for(a.db, device.name, a.calibration);
  const ModelCoefficients& coefficients = calibration.coefficients;
  const bool calibrated = !(coefficients == ModelCoefficients{});
  // The shortlist draws from as deep a ranking as tune's does.
  const int depth = a.shortlist ? std::max(2048, a.top * 32) : a.top;
  const Ranking ranked =
      rank_space(problem, device, depth, coefficients, SpaceDomain::named(a.domain));
  const Ranking r = a.shortlist ? as_shortlist(ranked, a.top) : ranked;
  if (r.top.empty())
    throw InputError("no configuration of the space survives the constraints for " +
                     problem.shape_id() + " on " + device.name);
  if (format == Format::Json) {
    nlohmann::json out = {{"problem", problem.shape_id()}, {"device", device.name},
                          {"evaluated", r.evaluated},      {"seconds", r.seconds},
                          {"calibrated", calibrated},      {"calibration", calibration.description},
                          {"top", nlohmann::json::array()}};
    for (size_t i = 0; i < r.top.size(); ++i) out["top"].push_back(to_json(r.top[i], int(i) + 1));
    std::printf("%s\n", out.dump(2).c_str());
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
              device.peak_gflops(problem.precision), calibrated ? "calibrated" : "uncalibrated");
  std::printf("calibration: %s\n", calibration.description.c_str());
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
  add_problem_options(*cmd, args->problem);
  add_gpu_option(*cmd, args->gpu);
  cmd->add_option("--top,-t", args->top, "how many configurations to print")->capture_default_str();
  add_format_option(*cmd, args->format);
  add_domain_option(*cmd, args->domain);
  add_calibration_option(*cmd, args->calibration);
  cmd->add_option("--db", args->db, "the store holding calibrations (read only if it exists)")
      ->capture_default_str();
  cmd->add_flag("--shortlist", args->shortlist,
                "list in the order tune measures: the best of each tile family (BM, BN, BK, DX, "
                "DY) first");
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
