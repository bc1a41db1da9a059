// Benchmark: hybrid-tune each shape on the local GPU (every attempt stored), then time the
// winner and cuBLAS (FP32 pedantic, no TF32) in the same run. Prints GFLOP/s and the ratio.
//   vs_cublas [--precision s|d|both] [--seconds per-shape budget] [--db path] [--only NAME,...]
//             [--domain full|compact] [--set targets|wins|all] [--calibration FILE.json]
// --calibration: the model's coefficients as `gemmtune calibrate` exports them (default: none,
// the uncalibrated model).
// targets: the shapes with ratio targets in bench/RESULTS.md (squares, the seeds' LU updates, K =
// 32, odd sizes); wins: where the seeds expect a tuned kernel to beat a library's general
// heuristics (thin problems with a long K that need split-K, and seed 004's batches of small
// matrices).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {
struct Shape {
  const char* name;
  std::int64_t m, n, k, batch;
  bool target;  // one of the shapes with a ratio target
};
const Shape kShapes[] = {
    {"square 1024", 1024, 1024, 1024, 1, true},
    {"square 2048", 2048, 2048, 2048, 1, true},
    {"square 4096", 4096, 4096, 4096, 1, true},
    {"square 8192", 8192, 8192, 8192, 1, true},
    {"LU N x N-BS x BS=64", 6144, 6080, 64, 1, true},
    {"LU N x BS x BS=64", 6144, 64, 64, 1, true},
    {"LU N x N-BS x BS=128", 6144, 6016, 128, 1, true},
    {"LU N x BS x BS=128", 6144, 128, 128, 1, true},
    {"K=32", 8192, 8192, 32, 1, true},
    {"odd 1000", 1000, 1000, 1000, 1, true},
    {"odd 4097", 4097, 4097, 4097, 1, true},
    {"thin long K", 256, 256, 65536, 1, false},
    {"thin long K 128", 128, 128, 131072, 1, false},
    {"batch 1000 of 64^3", 64, 64, 64, 1000, false},
    {"batch 1000 of K=16", 128, 128, 16, 1000, false},
    {"batch 500 of 256x256x32", 256, 256, 32, 500, false},
};
}  // namespace

int main(int argc, char** argv) {
  std::string precisions = "sd", db_path = "vs_cublas.db", only, domain = "full", set = "targets",
              calibration;
  double seconds = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--precision"))
      precisions = std::strcmp(argv[i + 1], "both") ? argv[i + 1] : "sd";
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--db"))
      db_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--only"))
      only = argv[i + 1];
    else if (!std::strcmp(argv[i], "--domain"))
      domain = argv[i + 1];
    else if (!std::strcmp(argv[i], "--set"))
      set = argv[i + 1];
    else if (!std::strcmp(argv[i], "--calibration"))
      calibration = argv[i + 1];
  }
  ModelCoefficients coefficients;
  try {
    if (!calibration.empty()) coefficients = coefficients_from_file(calibration);
  } catch (const InputError& e) {
    std::fprintf(stderr, "vs_cublas: %s\n", e.what());
    return 2;
  }
  if (set != "targets" && set != "wins" && set != "all") {
    std::fprintf(stderr, "vs_cublas: --set '%s' is not one of targets, wins, all\n", set.c_str());
    return 2;
  }
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "vs_cublas needs a CUDA GPU\n");
    return 77;
  }
  const std::string exe =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "gemmtune").string();
  TimingOptions timing;  // 3 warm-up, 20 repetitions, median, L2 flushed
  GpuEvaluator evaluator(exe, timing, 120);
  GpuSession session(0);
  const DeviceSpec& d = session.device();
  Database db(db_path);
  db.save_device(d);
  std::printf("%-4s %-22s %-18s %10s %10s %7s %7s %6s %6s %9s %9s  %s\n", "prec", "shape", "MxNxK",
              "cuBLAS", "tuned", "ratio", "tune_s", "evals", "model1", "err_cublas", "err_tuned",
              "best config");
  for (char pc : precisions) {
    for (const Shape& s : kShapes) {
      if (!only.empty() &&
          ("," + only + ",").find("," + std::string(s.name) + ",") == std::string::npos)
        continue;
      if ((set == "targets" && !s.target) || (set == "wins" && s.target)) continue;
      Problem p;
      p.precision = parse_precision(std::string(1, pc));
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.batch = s.batch;
      p = p.normalized();
      HybridOptions o;
      o.budget.seconds = seconds;
      o.coefficients = coefficients;
      o.domain = SpaceDomain::named(domain);
      const auto start = std::chrono::steady_clock::now();
      const TuningRun run("hybrid");
      const TuneResult r =
          hybrid_tune(p, evaluator, o, [&](const Evaluation& e) { db.add(run.attempt(e, p, d)); });
      const double tune_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!r.best) {
        std::printf("%-4c %-22s no kernel ran correctly (%d measured, %d compiled, %.1f s, %s)\n",
                    pc, s.name, r.evaluations, r.compiled, tune_s, r.stopped_by.c_str());
        continue;
      }
      // Same run, same buffers, alternating: the winner, cuBLAS, the winner, cuBLAS; each side's
      // better median, so that neither gains from the order (clocks ramp, L2 state).
      const CompileCache cache(CompileCache::default_directory());
      const CompileResult compiled =
          compile_many({{r.best->config, p.precision, p.op_a, p.op_b}}, d.arch(), &cache).at(0);
      const Measurement tuned1 = session.measure(p, r.best->config, compiled, timing);
      Measurement ref = session.measure_cublas(p, timing);
      const Measurement tuned2 = session.measure(p, r.best->config, compiled, timing);
      const Measurement ref2 = session.measure_cublas(p, timing);
      if (ref2.median_s < ref.median_s) ref = ref2;
      if (ref.status == Status::Ok)
        db.add_reference({d.name, p, "cublas", ref.median_s, ref.gflops, ""});
      const double tuned_s = std::min(tuned1.median_s, tuned2.median_s);
      // The model's top-1 with no measurement: the first entry of the history.
      const double model1 =
          r.history.empty() || !r.history[0].ok() ? 0 : r.best->time_s / r.history[0].time_s;
      std::printf("%-4c %-22s %-18s %10.0f %10.0f %7.3f %7.1f %6d %6.3f %9.2e %9.2e  %s %s\n", pc,
                  s.name,
                  (std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                   (s.batch > 1 ? "x" + std::to_string(s.batch) : ""))
                      .c_str(),
                  ref.gflops, p.flops() / tuned_s * 1e-9, ref.median_s / tuned_s, tune_s,
                  r.evaluations, model1, ref.rel_error, tuned1.rel_error,
                  r.best->config.id().c_str(), tuned1.status == Status::Ok ? "" : "(NOT VERIFIED)");
      std::fflush(stdout);
    }
  }
  return 0;
}
