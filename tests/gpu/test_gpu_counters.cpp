// On the GPU: CUPTI counters against exact counts and the model's bounds, and NVML energy.
#include <chrono>
#include <cmath>
#include <filesystem>

#include "kernels/kernels.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

GpuSession& counter_session() {
  static GpuSession s(0);
  return s;
}

double value(const CounterValues& c, const std::string& name) {
  for (const auto& [n, v] : c)
    if (n == name) return v;
  FAIL("counter " << name << " was not collected");
  return 0;
}

// A configuration whose tiles divide the problem exactly, so every FMA is a useful one.
KernelConfig full_tile_config(const Problem& p, const DeviceSpec& d, int mma = 0) {
  SpaceDomain domain;
  domain.mma = {mma};
  for (const auto& r : rank_space(p, d, 200, {}, domain).top) {
    const KernelConfig& c = r.config;
    if (p.m % c.blk_m == 0 && p.n % c.blk_n == 0 && p.k % c.blk_k == 0) return c;
  }
  FAIL("no full-tile configuration in the model's top 200");
  return {};
}

}  // namespace

TEST_CASE("gpu: counters of full-tile S and D GEMMs against exact counts and the model", "[gpu]") {
  GpuSession& gpu = counter_session();
  const DeviceSpec& d = gpu.device();
  // S, D on the SIMT pipes, and D on the FP64 tensor cores where the GPU has them.
  std::vector<std::pair<Precision, int>> kinds = {{Precision::S, 0}, {Precision::D, 0}};
  if (d.fp64_mma_per_sm > 0) kinds.emplace_back(Precision::D, 1);
  if (d.fp64_mma_per_sm > 0 && d.cc_major >= 9) kinds.emplace_back(Precision::D, 2);
  for (auto [pr, mma] : kinds) {
    const Problem p = make_problem(pr, Op::N, Op::N, 2048, 2048, 2048);
    const KernelConfig c = full_tile_config(p, d, mma);
    INFO(to_char(pr) << " " << c.id());
    const CompileResult compiled =
        compile_source(render_source(c, p.precision, p.op_a, p.op_b), d.arch());
    REQUIRE(compiled.ok);
    const Measurement before = gpu.measure(p, c, compiled);
    REQUIRE(before.status == Status::Ok);

    const auto t0 = std::chrono::steady_clock::now();
    const CounterValues counters = gpu.profile(p, c, compiled, default_counter_metrics(pr));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    WARN(to_char(pr) << ": default counter set (" << counters.size() << " metrics) in " << seconds
                     << " s");
    CHECK(seconds < 2.0);

    // Every FMA of a full-tile GEMM is executed once per (m, n, k); a DMMA is 8x8x4 or 16x8x4.
    const double mnk = double(p.m) * double(p.n) * double(p.k);
    double fma =
        value(counters, pr == Precision::S ? "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
                                           : "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum");
    if (pr == Precision::D) {
      const double dmma = value(counters, "sm__inst_executed_pipe_tensor_op_dmma.sum");
      CHECK((mma ? fma : dmma) == 0);
      fma += (mma == 2 ? 512 : 256) * dmma;
    }
    CHECK(fma == mnk);
    const Prediction pred = predict(p, d, c, {}, compiled.registers);
    CHECK(pred.fmas_per_tensor_instr == (mma == 2 ? 512 : mma == 1 ? 256 : 0));
    CHECK(pred.fma_count == fma);

    // Achieved occupancy cannot exceed what the registers and shared memory allow.
    const double achieved =
        value(counters, "sm__warps_active.avg.pct_of_peak_sustained_active") / 100;
    CHECK(achieved > 0.02);
    CHECK(achieved <= pred.occ.fraction + 1e-6);

    // DRAM reads: at least A and B once (the L2 was flushed), at most every tile's panels.
    const double e = element_bytes(pr);
    const double compulsory = double(p.m * p.k + p.k * p.n) * e;
    const double no_reuse =
        double((p.m / c.blk_m) * (p.n / c.blk_n)) * double(p.k) * double(c.blk_m + c.blk_n) * e;
    const double read = value(counters, "dram__bytes_read.sum");
    WARN(to_char(pr) << ": DRAM read " << read << " B, compulsory " << compulsory
                     << ", no-reuse bound " << no_reuse << ", model " << pred.dram_bytes);
    CHECK(read >= 0.99 * compulsory);
    CHECK(read <= no_reuse);
    for (const auto& row : compare_with_model(counters, pred)) {
      INFO(row.quantity << ": counter " << row.counter << ", model " << row.model);
      CHECK(std::isfinite(row.counter));
    }
    CHECK(top_stall_reasons(counters).size() == 3);

    // The profiler is off again: timings match those taken before it ran.
    const Measurement after = gpu.measure(p, c, compiled);
    REQUIRE(after.status == Status::Ok);
    CHECK(after.median_s == Approx(before.median_s).epsilon(0.1));
  }
}

TEST_CASE("gpu: energy per run is positive and the total scales with repetitions", "[gpu]") {
  GpuSession& gpu = counter_session();
  const DeviceSpec& d = gpu.device();
  const Problem p = make_problem(Precision::S, Op::N, Op::N, 4096, 4096, 4096);
  const KernelConfig c = full_tile_config(p, d);
  const CompileResult compiled =
      compile_source(render_source(c, p.precision, p.op_a, p.op_b), d.arch());
  REQUIRE(compiled.ok);
  const Measurement m = gpu.measure(p, c, compiled);
  REQUIRE(m.status == Status::Ok);
  const EnergyMeasurement shorter = gpu.energy(p, c, compiled, m.median_s, 0.5);
  const EnergyMeasurement longer = gpu.energy(p, c, compiled, m.median_s, 1.0);
  WARN("energy: " << shorter.joules_per_run << " J/run over " << shorter.runs << " runs, "
                  << longer.joules_per_run << " J/run over " << longer.runs << " runs; "
                  << p.flops() / shorter.joules_per_run * 1e-9 << " GFLOP/J");
  CHECK(shorter.joules_per_run > 0);
  CHECK(longer.runs >= 2 * shorter.runs - 1);
  const double ratio =
      (longer.joules_per_run * longer.runs) / (shorter.joules_per_run * shorter.runs);
  CHECK(ratio > 1.5);
  CHECK(ratio < 2.6);
  // A few hundred watts at most: joules per run / seconds per run.
  CHECK(shorter.joules_per_run / m.median_s < 1000);
}

TEST_CASE("gpu: tune's evaluator stores counters and energy with the attempt", "[gpu]") {
  const Problem p = make_problem(Precision::S, Op::N, Op::N, 1024, 1024, 1024);
  TimingOptions timing;
  timing.repetitions = 5;
  timing.counters = true;
  timing.energy = true;
  // The command sits beside this test binary wherever the build folder was copied to.
  GpuEvaluator evaluator(std::filesystem::read_symlink("/proc/self/exe").parent_path() / "gemmtune",
                         timing, 60);
  const KernelConfig c = full_tile_config(p, evaluator.device());
  evaluator.compile(p, {c});
  const Evaluation e = evaluator.measure(p, {c}).at(0);
  REQUIRE(e.ok());
  CHECK(e.energy_j > 0);
  CHECK(e.counters_json.find("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") !=
        std::string::npos);
  CHECK(score(e, Objective::Edp) == Approx(e.energy_j * e.time_s));
}
