// export --bundle: a workload's kernel set as cubins per architecture and a table for gemm().
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/options.hpp"
#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"

namespace gemmtune::cli {

void export_bundle(const BundleArgs& a) {
  namespace fs = std::filesystem;
  if (a.problems.empty()) throw InputError("export --bundle needs the workload (--problems FILE)");
  app::KernelSetRequest request = a.set;
  request.workload = read_workload_file(a.problems);
  const app::KernelSetResult set = app::kernel_set(request);
  std::vector<std::string> archs;
  std::stringstream list(a.archs.empty() ? set.device.arch() : a.archs);
  for (std::string arch; std::getline(list, arch, ',');)
    if (!arch.empty()) archs.push_back(arch);
  fs::create_directories(a.dir);
  Bundle bundle{set.device.name, kModelVersion, archs, {}, {}};
  std::map<std::string, std::size_t> index;  // precision, ops and configuration -> kernel
  const CompileCache cache(CompileCache::default_directory());
  int uncovered = 0;
  for (const app::KernelSetRow& row : set.rows) {
    if (!row.kernel) {
      ++uncovered;
      continue;
    }
    const Problem& p = row.entry.problem;
    const std::string key =
        std::string{to_char(p.precision), to_char(p.op_a), to_char(p.op_b), ' '} + row.kernel->id();
    auto it = index.find(key);
    if (it == index.end()) {
      BundleKernel k{*row.kernel, p.precision, p.op_a, p.op_b, {}};
      const std::string source = render_source(k.config, p.precision, p.op_a, p.op_b);
      for (const std::string& arch : archs) {
        const CompileResult r = compile_source(source, arch, &cache);
        if (!r.ok)
          throw InputError("kernel " + k.config.id() + " does not compile for " + arch + ": " +
                           r.log.substr(0, 300));
        const std::string file =
            "k" + std::to_string(bundle.kernels.size()) + "_" + arch + ".cubin";
        std::ofstream out(fs::path(a.dir) / file, std::ios::binary);
        out.write(r.cubin.data(), std::streamsize(r.cubin.size()));
        if (!out) throw InputError("cannot write " + (fs::path(a.dir) / file).string());
        k.cubins.emplace_back(arch, file);
      }
      it = index.emplace(key, bundle.kernels.size()).first;
      bundle.kernels.push_back(std::move(k));
    }
    bundle.problems.push_back(
        {p, row.entry.weight, it->second, row.time.seconds, row.time.predicted});
  }
  write_bundle_table(a.dir, bundle);
  std::printf(
      "bundle %s: %zu configurations as %zu kernels (precision and ops) for %s, %zu "
      "problems%s; weighted total %.2f us, %.4f of the per-problem best\n",
      a.dir.c_str(), set.members.size(), bundle.kernels.size(), join(archs, ", ").c_str(),
      bundle.problems.size(),
      uncovered ? (", " + std::to_string(uncovered) + " left out (no member runs them)").c_str()
                : "",
      set.total_s * 1e6, set.best_total_s > 0 ? set.total_s / set.best_total_s : 0.0);
}

}  // namespace gemmtune::cli
