// gemmtune compile: NVRTC-compile configurations (no GPU needed) and print the compiler's
// resource figures beside the model's estimate.
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/options.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"

namespace gemmtune::cli {
namespace {

struct CompileArgs {
  std::vector<std::string> configs;
  int top = 0;
  ProblemOptions problem;
  GpuOption gpu;
  std::string arch;
  std::string output;
  std::string cache = CompileCache::default_directory();
  int threads = 0;
  std::string batch_kind = "strided";
};

void run(const CompileArgs& a) {
  ProblemOptions po = a.problem;
  if (po.m == 0) po.m = 1024;
  if (po.n == 0) po.n = 1024;
  if (po.k == 0) po.k = 1024;
  const Problem p = po.problem();
  const DeviceSpec device = a.gpu.device();
  const std::string arch = a.arch.empty() ? device.arch() : a.arch;
  const BatchKind kind = parse_batch_kind(a.batch_kind);
  std::vector<CompileJob> jobs;
  for (const auto& id : a.configs)
    jobs.push_back({KernelConfig::parse(id), p.precision, p.op_a, p.op_b, kind});
  if (a.top > 0)
    for (const auto& r : rank_space(p, device, a.top).top)
      jobs.push_back({r.config, p.precision, p.op_a, p.op_b, kind});
  if (jobs.empty()) throw InputError("nothing to compile: give --config ID or --top K");
  for (const auto& j : jobs)
    if (auto v = check_hard(p, device, j.config))
      throw InputError("configuration " + j.config.id() + " breaks " + v->message);
  CompileCache cache(a.cache);
  const auto results = compile_many(jobs, arch, &cache, a.threads);
  std::printf("%-86s %6s %6s %6s %7s %8s %s\n", "config", "regs", "est", "spill", "stack",
              "seconds", "status");
  int failures = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& r = results[i];
    const int est =
        estimate_registers(jobs[i].config, p.precision, default_register_model(p.precision));
    if (!r.ok) ++failures;
    std::printf("%-86s %6d %6d %6d %7d %8.2f %s\n", jobs[i].config.id().c_str(), r.registers, est,
                r.spill_store_bytes + r.spill_load_bytes, r.stack_bytes, r.seconds,
                r.ok ? (r.cache_hit ? "ok (cached)" : "ok") : "compile_error");
    if (!r.ok) std::fprintf(stderr, "%s\n", r.log.c_str());
  }
  if (!a.output.empty()) {
    if (jobs.size() != 1 || !results[0].ok)
      throw InputError("--output needs exactly one configuration that compiles");
    std::ofstream out(a.output, std::ios::binary);
    out.write(results[0].cubin.data(), std::streamsize(results[0].cubin.size()));
    if (!out) throw InputError("cannot write cubin to '" + a.output + "'");
  }
  if (failures)
    throw std::runtime_error(std::to_string(failures) + " configuration(s) failed to compile");
}

}  // namespace

void register_compile(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  auto* cmd = app.add_subcommand("compile", "compile configurations with NVRTC (no GPU needed)");
  cmd->add_option("--config,-c", args->configs, "configuration ids");
  cmd->add_option("--top,-t", args->top, "also compile the model's top K for the problem");
  add_problem_options(*cmd, args->problem, false);
  add_gpu_option(*cmd, args->gpu);
  cmd->add_option("--batch-kind", args->batch_kind,
                  "the source's batch mode: strided, pointer (arrays of pointers) or variable")
      ->capture_default_str();
  cmd->add_option("--arch", args->arch, "target such as sm_80 or sm_90 (default: the GPU's)");
  cmd->add_option("--output,-o", args->output, "write the cubin of a single configuration here");
  cmd->add_option("--cache", args->cache, "cubin cache directory ('' disables)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "compile threads (0: all cores)");
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
