// gemmtune fit-registers: compile a random sample of the pruned spaces of every precision and
// op shape, fit the register estimator (least squares) and report its error.
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "cli/options.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"

namespace gemmtune::cli {
namespace {

struct FitArgs {
  GpuOption gpu;
  std::string arch;
  int samples = 200;
  unsigned seed = 1;
  std::string cache = CompileCache::default_directory();
  std::string csv;
  std::string precisions = "sdcz";
};

void run(const FitArgs& a) {
  const DeviceSpec device = a.gpu.device();
  const std::string arch = a.arch.empty() ? device.arch() : a.arch;
  std::mt19937 rng(a.seed);
  std::vector<CompileJob> jobs;
  // One estimator per kind of kernel (default_register_model): S, D, C, Z or H, B, T, not both.
  std::vector<Precision> precisions;
  for (char letter : a.precisions) precisions.push_back(parse_precision(std::string(1, letter)));
  if (precisions.empty()) throw InputError("--precisions is empty: give sdcz, hbt or some of them");
  for (Precision pr : precisions)
    if (is_reduced(pr) != is_reduced(precisions.front()))
      throw InputError("--precisions '" + a.precisions +
                       "' mixes s, d, c, z with h, b, t: each kind has its own estimator");
  const Op ops[] = {Op::N, Op::T};
  const int per_shape = std::max(1, a.samples / int(4 * precisions.size()));
  for (Precision pr : precisions)
    for (Op oa : ops)
      for (Op ob : ops) {
        Problem p;
        p.precision = pr;
        p.op_a = oa;
        p.op_b = ob;
        p.m = p.n = p.k = 4096;
        p = p.normalized();
        // The pruned space as tuning sees it: samples that spill show the cap, not the demand.
        auto space = pruned_space(p, device);
        std::shuffle(space.begin(), space.end(), rng);
        for (int i = 0; i < per_shape && i < int(space.size()); ++i)
          jobs.push_back({space[size_t(i)], pr, oa, ob});
      }
  CompileCache cache(a.cache);
  const auto results = compile_many(jobs, arch, &cache);
  std::vector<RegisterSample> samples;
  int spilled = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!results[i].ok) continue;
    // Capped kernels (spills) show the cap, not the demand; they would bias the fit.
    if (results[i].spill_store_bytes > 0) {
      ++spilled;
      continue;
    }
    samples.push_back({jobs[i].config, jobs[i].precision, results[i].registers});
  }
  if (!a.csv.empty()) {
    FILE* f = std::fopen(a.csv.c_str(), "w");
    if (!f) throw InputError("cannot write '" + a.csv + "'");
    std::fprintf(f, "precision,config,registers,spill_bytes\n");
    for (size_t i = 0; i < jobs.size(); ++i)
      if (results[i].ok)
        std::fprintf(f, "%c,%s,%d,%d\n", to_char(jobs[i].precision), jobs[i].config.id().c_str(),
                     results[i].registers, results[i].spill_store_bytes);
    std::fclose(f);
  }
  const RegisterModel m = fit_register_model(samples);
  double sum_abs = 0;
  for (const auto& s : samples)
    sum_abs += std::abs(estimate_registers(s.config, s.precision, m) - s.registers);
  std::printf(
      "arch %s, %zu samples fitted (%d spilled, left out), mean |error| %.1f, max %.0f registers\n",
      arch.c_str(), samples.size(), spilled, sum_abs / double(samples.size()), m.stated_error);
  std::printf("coefficients {%.3f, %.3f, %.3f, %.3f, %.3f, %.3f}\n", m.coef[0], m.coef[1],
              m.coef[2], m.coef[3], m.coef[4], m.coef[5]);
}

}  // namespace

void register_fit_registers(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand("fit-registers", "fit the register estimator on compiled samples");
  add_gpu_option(*cmd, args->gpu);
  cmd->add_option("--arch", args->arch, "target (default: the GPU's)");
  cmd->add_option("--samples", args->samples, "how many configurations to compile")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "random seed")->capture_default_str();
  cmd->add_option("--cache", args->cache, "cubin cache directory")->capture_default_str();
  cmd->add_option("--csv", args->csv, "write every compiled sample here");
  cmd->add_option("--precisions", args->precisions,
                  "the precisions to sample, as letters: some of sdcz, or of hbt")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
