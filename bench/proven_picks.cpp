// bench/proven_picks: the zero-run picks of problems held out of a calibration, for the GPU to time
// beside each problem's recorded best (scripts/device-picks, then bench/pick_check.py): the
// space's (its first `compile` by the estimate, compiled and ranked again: `measure --top` before
// proven kernels), the proven kernels' alone (the calibration's proven kernels of the problem's
// precision, their first 32 compiled and ranked again), and both together (`measure --top` now).
//   proven_picks --judge FILE.csv... --out DIR [--gpu H100-SXM] [--calibration FILE.json|auto]
//     [--proven-from FILE.csv...] [--top 5] [--compile 128]
// --proven-from: the proven kernels of these recordings (proven_kernels) instead of the
// calibration's. DIR/picks.tsv lists per problem its fastest recorded configuration and each
// ranking's first `top` (space.pick1.., proven.pick1.., both.pick1..); DIR/predicted.tsv their
// predicted times with the compiler's registers.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {

using Timed = std::vector<std::pair<double, KernelConfig>>;

// The first `top` of configs compiled and ranked by the time predicted with their registers.
Timed compiled_top(const Problem& p, const DeviceSpec& d, const std::vector<KernelConfig>& configs,
                   const ModelCoefficients& k, size_t top) {
  Timed out;
  for (const auto& c : app::rank_with_compiler(p, d, configs, k, BatchKind::Strided,
                                               CompileCache(CompileCache::default_directory())))
    if (!c.ruled_out)
      out.emplace_back(
          predict(p, d, c.config, k, c.info.registers > 0 ? c.info.registers : -1).time_s,
          c.config);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (out.empty()) throw InputError("nothing of " + p.shape_id() + "'s ranking compiled");
  out.resize(std::min(top, out.size()), out.back());
  while (out.size() < top) out.push_back(out.back());
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> judge_files, proven_files;
  std::string out_dir, gpu = "H100-SXM", calibration = "auto";
  size_t top = 5, compile = 128;
  std::vector<std::string>* list = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(a + " needs a value");
      list = nullptr;
      return argv[++i];
    };
    if (a == "--judge") {
      list = &judge_files;
    } else if (a == "--proven-from") {
      list = &proven_files;
    } else if (a == "--out") {
      out_dir = value();
    } else if (a == "--gpu") {
      gpu = value();
    } else if (a == "--calibration") {
      calibration = value();
    } else if (a == "--top") {
      top = std::stoul(value());
    } else if (a == "--compile") {
      compile = std::stoul(value());
    } else if (list && a.rfind("--", 0) != 0) {
      list->push_back(a);
    } else {
      throw InputError("unknown argument '" + a + "'");
    }
  }
  if (judge_files.empty() || out_dir.empty()) throw InputError("--judge and --out are needed");
  const DeviceSpec device = app::device_named(gpu);
  ModelCoefficients k = app::calibration_for("", device.name, calibration).coefficients;
  if (!proven_files.empty()) k.proven = proven_kernels(recorded_samples(proven_files));
  ModelCoefficients without = k;
  without.proven.clear();

  std::map<std::string, std::vector<const CalibrationSample*>> judged;
  const auto samples = recorded_samples(judge_files);
  for (const auto& s : samples) judged[sample_key(s)].push_back(&s);
  std::ofstream picks(out_dir + "/picks.tsv"), predicted(out_dir + "/predicted.tsv");
  if (!picks || !predicted) throw InputError("cannot write into " + out_dir);
  picks << "fold\tproblem\tbest\tbest_s";
  for (const char* s : {"space", "proven", "both"})
    for (size_t i = 1; i <= top; ++i) picks << "\t" << s << ".pick" << i;
  picks << "\n";
  for (auto& [key, v] : judged) {
    const auto fastest = *std::min_element(v.begin(), v.end(),
                                           [](auto* a, auto* b) { return a->time_s < b->time_s; });
    const Problem& p = fastest->problem;
    std::vector<KernelConfig> space;
    for (const auto& r : rank_space(p, device, int(compile), k).top) space.push_back(r.config);
    const auto proven = with_proven(p, device, k, {});
    const Timed lists[] = {compiled_top(p, device, space, without, top),
                           compiled_top(p, device, proven, k, top),
                           compiled_top(p, device, with_proven(p, device, k, space), k, top)};
    picks << 0 << "\t" << problem_options(p) << "\t" << fastest->config.id() << "\t"
          << fastest->time_s;
    predicted << problem_options(p);
    for (const auto& l : lists)
      for (const auto& [t, c] : l) {
        picks << "\t" << c.id();
        predicted << "\t" << t;
      }
    picks << "\n" << std::flush;
    predicted << "\n" << std::flush;
    std::printf("%s: %zu proven kernels can run it\n", key.c_str(), proven.size());
    std::fflush(stdout);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "proven_picks: %s\n", e.what());
  return 2;
}
