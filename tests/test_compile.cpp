// NVRTC on a machine without a GPU: every precision and op shape, sm_80 and sm_90.
#include <chrono>
#include <cmath>
#include <filesystem>

#include "kernels/kernels.hpp"
#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

static std::vector<std::pair<Op, Op>> op_shapes(Precision p) {
  std::vector<Op> ops = {Op::N, Op::T};
  if (is_complex(p)) ops.push_back(Op::C);
  std::vector<std::pair<Op, Op>> out;
  for (Op a : ops)
    for (Op b : ops) out.emplace_back(a, b);
  return out;
}

TEST_CASE("compile: a sample of every precision and op shape for sm_80 and sm_90", "[compile]") {
  // Each architecture's own space: sm_90 adds the m16n8k4 tensor-core kernels.
  for (const char* gpu : {"A100", "H100-SXM"}) {
    const DeviceSpec device = find_builtin_device(gpu);
    const std::string arch = device.arch();
    std::vector<CompileJob> jobs;
    int salt = 0;
    for (Precision pr : {Precision::S, Precision::D, Precision::C, Precision::Z, Precision::H,
                         Precision::B, Precision::T})
      for (auto [a, b] : op_shapes(pr)) {
        Problem p;
        p.precision = pr;
        p.op_a = a;
        p.op_b = b;
        p.m = p.n = p.k = 1000;
        const auto space = pruned_space(p.normalized(), device);
        REQUIRE(space.size() > 10);
        // A deterministic spread over the space, different for each shape.
        jobs.push_back(
            {space[(space.size() * size_t(7 + 13 * salt++)) / 211 % space.size()], pr, a, b});
      }
    const auto results = compile_many(jobs, arch, nullptr);
    REQUIRE(results.size() == jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      INFO(arch << " " << to_char(jobs[i].precision) << to_char(jobs[i].op_a)
                << to_char(jobs[i].op_b) << " " << jobs[i].config.id() << "\n"
                << results[i].log);
      REQUIRE(results[i].ok);
      CHECK(results[i].cubin.size() > 1000);
      CHECK(results[i].registers > 0);
      CHECK(results[i].static_smem_bytes == 0);  // the template uses dynamic shared memory
      const RegisterModel& model = default_register_model(jobs[i].precision);
      const int estimate = estimate_registers(jobs[i].config, jobs[i].precision, model);
      CHECK(std::abs(estimate - results[i].registers) <= model.stated_error);
    }
  }
}

TEST_CASE("compile: the cache returns what was compiled", "[compile]") {
  const auto dir = std::filesystem::temp_directory_path() / "gemmtune_test_cache";
  std::filesystem::remove_all(dir);
  CompileCache cache(dir.string());
  const std::string src = render_source(KernelConfig::parse("BM32_BN32_BK8_DX8_DY8_DXA32_DXB8"),
                                        Precision::S, Op::N, Op::T);
  const CompileResult first = compile_source(src, "sm_90", &cache);
  REQUIRE(first.ok);
  CHECK_FALSE(first.cache_hit);
  const CompileResult second = compile_source(src, "sm_90", &cache);
  CHECK(second.cache_hit);
  CHECK(second.cubin == first.cubin);
  CHECK(second.registers == first.registers);
  // Another architecture is another entry.
  CHECK_FALSE(compile_source(src, "sm_80", &cache).cache_hit);
  CHECK(compile_key(src, "sm_80") != compile_key(src, "sm_90"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("compile: failures keep the compiler's message", "[compile]") {
  const CompileResult r =
      compile_source("extern \"C\" __global__ void k() { undefined_thing(); }", "sm_90");
  CHECK_FALSE(r.ok);
  CHECK(r.cubin.empty());
  CHECK_THAT(r.log, Catch::Contains("undefined_thing"));
  CHECK_THROWS_WITH(compile_source("", "gfx90a"), Catch::Contains("gfx90a"));
  CHECK_THROWS_WITH(compile_source("", "sm_50"), Catch::Contains("sm_60"));
}

TEST_CASE("compile: ptxas resource lines are parsed", "[compile]") {
  CompileResult r;
  parse_ptxas_info(
      "ptxas info    : Function properties for k\n"
      "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem\n",
      r);
  CHECK(r.registers == 255);
  CHECK(r.spill_store_bytes == 8);
  CHECK(r.spill_load_bytes == 12);
  CHECK(r.stack_bytes == 24);
  CHECK(r.static_smem_bytes == 1024);
}

TEST_CASE("compile: registers and stack frame read from the cubin match ptxas' log", "[compile]") {
  // The second kernel is one ptxas spilled heavily (32 registers, a 7,696-byte frame).
  const std::vector<CompileJob> jobs = {
      {KernelConfig::parse("BM64_BN64_BK32_DX8_DY16_DXA8_DYA16_DXB8_DYB16_VA4_VB4_LA1_LB1_PD4_"
                           "PF0_ST1_UR0_RS1_VS4_ED0"),
       Precision::S, Op::N, Op::N},
      {KernelConfig::parse("BM192_BN192_BK16_DX64_DY4_DXA64_DYA4_DXB16_DYB16_VA1_VB1_LA1_LB0_PD0_"
                           "PF3_ST2_UR0_RS8_VS1_ED1"),
       Precision::S, Op::N, Op::N}};
  // A unique comment keeps NVRTC from answering out of the CUDA compute cache, without a log.
  const std::string unique =
      "\n// " + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
  std::vector<CompileResult> results;
  for (const auto& j : jobs)
    results.push_back(
        compile_source(render_source(j.config, j.precision, j.op_a, j.op_b) + unique, "sm_90"));
  for (const auto& compiled : results) {
    REQUIRE(compiled.ok);
    REQUIRE(compiled.log.find("Used") != std::string::npos);
    CompileResult from_cubin;
    REQUIRE(read_cubin_resources(compiled.cubin, from_cubin));
    CHECK(from_cubin.registers == compiled.registers);
    CHECK(from_cubin.stack_bytes == compiled.stack_bytes);
  }
  CHECK(results[1].stack_bytes > 1000);

  CompileResult untouched;
  CHECK_FALSE(read_cubin_resources({}, untouched));
  CHECK_FALSE(read_cubin_resources(std::vector<char>(100, 'x'), untouched));
  std::vector<char> truncated(results[0].cubin.begin(), results[0].cubin.begin() + 200);
  CHECK_FALSE(read_cubin_resources(truncated, untouched));
  CHECK(untouched.registers == 0);
}

TEST_CASE("compile: FP16, BF16 and TF32 kernels reading fragments by ldmatrix", "[compile]") {
  // Each mma shape of each reduced precision, staged through registers and through cp.async,
  // with rows that take ldmatrix (PD8 at BK32 for 16-bit values, PD4 for TF32).
  const DeviceSpec device = find_builtin_device("H100-SXM");
  std::vector<CompileJob> jobs;
  for (Precision pr : {Precision::H, Precision::B, Precision::T})
    for (int mma : pr == Precision::T ? std::vector<int>{2, 3} : std::vector<int>{3, 4})
      for (const char* loop : {"ST2_AC0", "ST3_AC1"}) {
        const std::string pad = pr == Precision::T ? "PD4" : "PD8";
        const std::string vec = pr == Precision::T ? "VA4_VB4" : "VA8_VB8";
        const KernelConfig c =
            KernelConfig::parse("BM64_BN64_BK32_DX8_DY16_DXA4_DXB4_" + vec + "_LA0_LB0_" + pad +
                                "_" + loop + "_MM" + std::to_string(mma));
        REQUIRE(fragments_by_ldmatrix(c, pr));
        REQUIRE(check_hard(make_problem(pr, Op::T, Op::N, 1024, 1024, 1024), device, c) ==
                std::nullopt);
        jobs.push_back({c, pr, Op::T, Op::N});
      }
  const auto results = compile_many(jobs, device.arch(), nullptr);
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO(to_char(jobs[i].precision) << " " << jobs[i].config.id() << "\n" << results[i].log);
    CHECK(render_source(jobs[i].config, jobs[i].precision, Op::T, Op::N, BatchKind::Strided)
              .find("#define LDMATRIX 1") != std::string::npos);
    REQUIRE(results[i].ok);
    CHECK(results[i].registers > 0);
  }
}
