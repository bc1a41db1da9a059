// gemmtune space: the funnel of the kernel space, stage by stage (seed 001's 388,567 -> 528).
#include <cstdio>
#include <memory>

#include "cli/options.hpp"
#include "search/search.hpp"

namespace gemmtune::cli {
namespace {

struct SpaceArgs {
  app::SpaceRequest request;
  std::string format = "table";
};

void run(const SpaceArgs& a) {
  const Format format = parse_format(a.format);
  const app::SpaceResult r = app::space(a.request);
  const Funnel& f = r.funnel;
  const std::vector<KernelConfig>& kept = r.configs;
  if (format == Format::Json) {
    std::printf("%s\n", app::to_json(r).dump(2).c_str());
    return;
  }
  if (format == Format::Csv) {
    std::printf("stage,kind,remaining\nraw,,%.0f\n", f.raw);
    for (const auto& row : f.rows)
      std::printf("%s,%s,%.0f\n", stage_name(row.stage),
                  stage_kind(row.stage) == StageKind::Hard ? "hard" : "soft", row.remaining);
    for (const auto& c : kept) std::printf("config,,%s\n", c.id().c_str());
    for (const auto& w : r.places)
      std::printf("why,%s,%s\n", w.stage.empty() ? "kept" : w.stage.c_str(), w.config.id().c_str());
    return;
  }
  std::printf("kernel space of %s on %s\n%s", r.problem.shape_id().c_str(), r.device.name.c_str(),
              f.to_table().c_str());
  for (const auto& c : kept) std::printf("%s\n", c.id().c_str());
  for (const auto& w : r.places) {
    std::printf("%s: ", w.config.id().c_str());
    if (w.stage.empty())
      std::printf("in the space\n");
    else if (w.stage == "domain")
      std::printf("outside the domain: %s\n", w.reason.c_str());
    else if (w.reason.empty())
      std::printf("pruned by the soft stage %s\n", w.stage.c_str());
    else  // a hard stage's message begins with its name
      std::printf("pruned by the hard stage %s\n", w.reason.c_str());
  }
}

}  // namespace

void register_space(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  auto* cmd = app.add_subcommand("space", "print the pruning funnel of the kernel space");
  app::SpaceRequest& q = args->request;
  add_problem_options(*cmd, q.problem);
  add_gpu_option(*cmd, q.gpu);
  cmd->add_option("--disable", q.disable, "constraint stages to switch off (by name)");
  cmd->add_flag("--list", q.list, "also print every surviving configuration id");
  cmd->add_option("--why", q.why,
                  "configuration ids: say where each leaves the space (outside the domain, or "
                  "the first stage that prunes it), or that it is kept");
  add_format_option(*cmd, args->format);
  add_domain_option(*cmd, q.domain);
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
