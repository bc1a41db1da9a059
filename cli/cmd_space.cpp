// gemmtune space: the funnel of the kernel space, stage by stage (seed 001's 388,567 -> 528).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "search/search.hpp"

namespace gemmtune::cli {
namespace {

struct SpaceArgs {
  ProblemOptions problem;
  GpuOption gpu;
  std::vector<std::string> disable;
  std::string format = "table", domain = "full";
  bool list = false;
};

void run(const SpaceArgs& a) {
  const Problem problem = a.problem.problem();
  const DeviceSpec device = a.gpu.device();
  const Format format = parse_format(a.format);
  ConstraintOptions options;
  for (const auto& name : a.disable) options.enabled[size_t(parse_stage(name))] = false;
  std::vector<KernelConfig> kept;
  const Funnel f = enumerate_space(problem, device, SpaceDomain::named(a.domain), options,
                                   [&](const KernelConfig& c) {
                                     if (a.list) kept.push_back(c);
                                   });
  if (format == Format::Json) {
    nlohmann::json out = {{"problem", problem.shape_id()}, {"device", device.name}, {"raw", f.raw}};
    for (const auto& row : f.rows)
      out["stages"].push_back({{"stage", stage_name(row.stage)},
                               {"kind", stage_kind(row.stage) == StageKind::Hard ? "hard" : "soft"},
                               {"remaining", row.remaining}});
    for (const auto& c : kept) out["configs"].push_back(c.id());
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  if (format == Format::Csv) {
    std::printf("stage,kind,remaining\nraw,,%.0f\n", f.raw);
    for (const auto& row : f.rows)
      std::printf("%s,%s,%.0f\n", stage_name(row.stage),
                  stage_kind(row.stage) == StageKind::Hard ? "hard" : "soft", row.remaining);
    for (const auto& c : kept) std::printf("config,,%s\n", c.id().c_str());
    return;
  }
  std::printf("kernel space of %s on %s\n%s", problem.shape_id().c_str(), device.name.c_str(),
              f.to_table().c_str());
  for (const auto& c : kept) std::printf("%s\n", c.id().c_str());
}

}  // namespace

void register_space(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  auto* cmd = app.add_subcommand("space", "print the pruning funnel of the kernel space");
  add_problem_options(*cmd, args->problem);
  add_gpu_option(*cmd, args->gpu);
  cmd->add_option("--disable", args->disable, "constraint stages to switch off (by name)");
  cmd->add_flag("--list", args->list, "also print every surviving configuration id");
  add_format_option(*cmd, args->format);
  add_domain_option(*cmd, args->domain);
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
