// gemmtune fit-registers: compile a random sample of the pruned spaces of every precision and
// op shape (or read compiled samples), fit the register estimator (least squares) and report its
// error, and the shipped estimator's on other compiled samples.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "cli/options.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

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
  std::vector<std::string> from, check;
};

constexpr const char* kSampleHeader = "precision,op_a,op_b,config,registers,spill_bytes";

// The pruned space of every op shape of the precisions at 4096^3, `samples` of it at random,
// compiled.
std::vector<RegisterSample> compile_samples(const FitArgs& a, const DeviceSpec& device,
                                            const std::string& arch) {
  std::mt19937 rng(a.seed);
  std::vector<CompileJob> jobs;
  const std::vector<Precision> precisions = parse_precision_letters(a.precisions);
  if (precisions.empty()) throw InputError("--precisions is empty: give sdcz, hbt or some of them");
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
        // The pruned space as tuning sees it.
        auto space = pruned_space(p, device);
        std::shuffle(space.begin(), space.end(), rng);
        for (int i = 0; i < per_shape && i < int(space.size()); ++i)
          jobs.push_back({space[size_t(i)], pr, oa, ob});
      }
  CompileCache cache(a.cache);
  const auto results = compile_many(jobs, arch, &cache);
  std::vector<RegisterSample> samples;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (results[i].ok)
      samples.push_back({jobs[i].config, jobs[i].precision, jobs[i].op_a, jobs[i].op_b,
                         results[i].registers, results[i].spill_store_bytes > 0});
  if (!a.csv.empty()) {
    FILE* f = std::fopen(a.csv.c_str(), "w");
    if (!f) throw InputError("cannot write '" + a.csv + "'");
    std::fprintf(f, "%s\n", kSampleHeader);
    for (size_t i = 0; i < jobs.size(); ++i)
      if (results[i].ok)
        std::fprintf(f, "%c,%c,%c,%s,%d,%d\n", to_char(jobs[i].precision), to_char(jobs[i].op_a),
                     to_char(jobs[i].op_b), jobs[i].config.id().c_str(), results[i].registers,
                     results[i].spill_store_bytes);
    std::fclose(f);
  }
  return samples;
}

// A non-negative integer field of a samples CSV; throws InputError naming the field and value.
int count_field(const std::string& text, const char* name) {
  const std::int64_t v = parse_int(text, name);
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw InputError(std::string(name) + " '" + text + "' is not a count >= 0");
  return int(v);
}

// Compiled samples from a file: this command's --csv, or a recording (the attempts whose kernel
// compiled, each kernel once).
std::vector<RegisterSample> read_samples(const std::string& path) {
  const std::string text = read_text_file(path, "register samples");
  std::vector<RegisterSample> out;
  if (text.rfind(kSampleHeader, 0) == 0) {
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    int number = 1;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) continue;
      std::vector<std::string> f;
      std::istringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
      if (f.size() != 6)
        throw InputError(path + ":" + std::to_string(number) + ": " + std::to_string(f.size()) +
                         " fields, not 6 (" + kSampleHeader + ")");
      const std::string where = path + ":" + std::to_string(number) + ": ";
      try {
        out.push_back({KernelConfig::parse(f[3]), parse_precision(f[0]), parse_op(f[1]),
                       parse_op(f[2]), count_field(f[4], "registers"),
                       count_field(f[5], "spill_bytes") > 0});
      } catch (const InputError& e) {
        throw InputError(where + e.what());
      }
    }
    if (out.empty()) throw InputError(path + " holds the header of compiled samples and no row");
    return out;
  }
  CsvImportReport report;
  std::vector<Attempt> attempts;
  try {
    attempts = read_attempts_csv(text, report);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  if (!report.rejected.empty())
    std::fprintf(stderr, "%s: %zu unreadable rows left out (first: %s)\n", path.c_str(),
                 report.rejected.size(), report.rejected.front().c_str());
  for (const Attempt& a : attempts)
    if (a.registers > 0)
      out.push_back({a.config, a.problem.precision, a.problem.op_a, a.problem.op_b, a.registers,
                     a.spill_bytes > 0});
  if (out.empty())
    throw InputError(path + " holds no compiled kernel: neither " + kSampleHeader +
                     " rows nor recorded attempts with registers");
  return out;
}

std::vector<RegisterSample> distinct(std::vector<RegisterSample> samples) {
  std::set<std::string> seen;
  std::vector<RegisterSample> out;
  for (auto& s : samples) {
    const std::string key =
        std::string{to_char(s.precision), to_char(s.op_a), to_char(s.op_b)} + s.config.id();
    if (seen.insert(key).second) out.push_back(std::move(s));
  }
  return out;
}

// Mean and 90th percentile of |estimate - compiled| and the mean signed error, over the samples
// that did not spill, by kind of kernel.
void report_error(const char* what, const std::vector<RegisterSample>& samples,
                  const std::function<int(const RegisterSample&)>& estimate) {
  for (int tensor = 0; tensor < 2; ++tensor) {
    std::vector<double> abs_err;
    double bias = 0;
    for (const auto& s : samples)
      if (!s.spilled && (s.config.mma > 0) == bool(tensor)) {
        const double e = estimate(s) - s.registers;
        abs_err.push_back(std::abs(e));
        bias += e;
      }
    if (abs_err.empty()) continue;
    std::sort(abs_err.begin(), abs_err.end());
    double mean = 0;
    for (double e : abs_err) mean += e;
    mean /= double(abs_err.size());
    std::printf("  %-22s %-11s %5zu kernels: mean |error| %5.1f, p90 %3.0f, mean error %+5.1f\n",
                what, tensor ? "tensor-core" : "SIMT", abs_err.size(), mean,
                abs_err[(abs_err.size() * 9 + 9) / 10 - 1], bias / double(abs_err.size()));
  }
}

void run(const FitArgs& a) {
  const DeviceSpec device = a.gpu.device();
  const std::string arch = a.arch.empty() ? device.arch() : a.arch;
  std::vector<RegisterSample> all;
  if (a.samples > 0) all = compile_samples(a, device, arch);
  for (const auto& path : a.from) {
    auto part = read_samples(path);
    all.insert(all.end(), part.begin(), part.end());
  }
  all = distinct(std::move(all));
  if (all.empty() && a.check.empty())
    throw InputError("nothing to fit or check: --samples 0 without --from or --check");
  std::vector<RegisterSample> unspilled;
  for (const auto& s : all)
    if (!s.spilled) unspilled.push_back(s);
  // The linear model, one kind at a time: spilled kernels show the cap, not the demand.
  for (int reduced = 0; reduced < 2; ++reduced) {
    std::vector<RegisterSample> kind;
    for (const auto& s : unspilled)
      if (is_reduced(s.precision) == bool(reduced)) kind.push_back(s);
    if (kind.empty()) continue;
    if (kind.size() < 8) {
      std::printf("%s: %zu kernels that did not spill, too few to fit (8)\n",
                  reduced ? "H, B, T" : "S, D, C, Z", kind.size());
      continue;
    }
    const RegisterModel m = fit_register_model(kind);
    double sum_abs = 0;
    for (const auto& s : kind)
      sum_abs += std::abs(estimate_registers(s.config, s.precision, m) - s.registers);
    std::printf(
        "%s linear model, arch %s: %zu kernels fitted (%zu spilled, left out), mean |error| %.1f, "
        "max %.0f\n",
        reduced ? "H, B, T" : "S, D, C, Z", arch.c_str(), kind.size(),
        size_t(std::count_if(all.begin(), all.end(),
                             [&](const RegisterSample& s) {
                               return s.spilled && is_reduced(s.precision) == bool(reduced);
                             })),
        sum_abs / double(kind.size()), m.stated_error);
    std::printf("coefficients {%.3f, %.3f, %.3f, %.3f, %.3f, %.3f}\n", m.coef[0], m.coef[1],
                m.coef[2], m.coef[3], m.coef[4], m.coef[5]);
  }
  // The shipped estimator on samples it was not fitted on (say, kernels changed since).
  for (const auto& path : a.check) {
    const auto samples = distinct(read_samples(path));
    std::printf("%s:\n", path.c_str());
    report_error("shipped linear model", samples, [](const RegisterSample& s) {
      return estimate_registers(s.config, s.precision, default_register_model(s.precision));
    });
  }
}

}  // namespace

void register_fit_registers(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand("fit-registers", "fit the register estimator on compiled samples");
  add_gpu_option(*cmd, args->gpu);
  cmd->add_option("--arch", args->arch, "target (default: the GPU's)");
  cmd->add_option("--samples", args->samples, "how many configurations to compile (0: none)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "random seed")->capture_default_str();
  cmd->add_option("--cache", args->cache, "cubin cache directory")->capture_default_str();
  cmd->add_option("--csv", args->csv, "write every compiled sample here");
  cmd->add_option("--from", args->from,
                  "compiled samples to fit on besides those compiled: a --csv of this command or "
                  "a recording (repeatable)");
  cmd->add_option("--check", args->check,
                  "report the shipped estimator's error on these compiled samples (repeatable)");
  cmd->add_option("--precisions", args->precisions,
                  "the precisions to compile, as letters (any of sdczhbt; each kind, S/D/C/Z and "
                  "H/B/T, is fitted apart)")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace gemmtune::cli
