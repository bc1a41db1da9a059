// Kernel families without a GPU: which family and main loop run a configuration, which files its
// source is made of, and the tuning parameters each family declares.
#include <algorithm>
#include <set>
#include <string>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

struct Case {
  const char* id;
  Precision precision;
  const char* family;
  const char* main_loop;
};

// One configuration of each family and each of its main loops.
const Case kCases[] = {
    {"BM32_BN32_BK8_DX8_DY8_DXA32_DXB8", Precision::S, "register-staged SIMT", "register-staged"},
    {"BM64_BN64_BK8_DX16_DY16_DXA64_DXB8_VA1_VB1_LA1_LB0_ST3_AC1", Precision::S, "cp.async SIMT",
     "cp.async multistage"},
    {"BM32_BN32_BK8_DX8_DY16_DXA32_DXB8_ST2_MM1", Precision::D, "FP64 mma", "register-staged"},
    {"BM32_BN64_BK8_DX8_DY16_DXA32_DXB8_ST3_MM2_AC1", Precision::D, "FP64 mma",
     "cp.async multistage"},
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("families: each configuration has exactly one family and one of its main loops",
          "[families]") {
  for (const Case& c : kCases) {
    INFO(c.id);
    const KernelConfig config = KernelConfig::parse(c.id);
    CHECK(std::string(family_of(config).name) == c.family);
    CHECK(std::string(main_loop_of(config).name) == c.main_loop);
  }
  KernelConfig config;
  for (int mma = 0; mma <= 4; ++mma)
    for (int async_copy = 0; async_copy <= 1; ++async_copy) {
      config.mma = mma;
      config.async_copy = async_copy;
      INFO(config.id());
      const auto selecting = std::count_if(kernel_families().begin(), kernel_families().end(),
                                           [&](const Family& f) { return f.selects(config); });
      CHECK(selecting == 1);
      const Family& f = family_of(config);
      CHECK(f.bit == (mma ? kFp64Mma : async_copy ? kCpAsyncSimt : kRegisterStagedSimt));
      CHECK(main_loop_of(config).async_copy == async_copy);
    }
}

TEST_CASE("families: a rendered source holds its family's files and no other's", "[families]") {
  std::set<std::string> used;
  for (const Case& c : kCases) {
    INFO(c.id);
    const KernelConfig config = KernelConfig::parse(c.id);
    const std::string source = render_source(config, c.precision, Op::N, Op::N);
    const std::vector<std::string> files = kernel_files(config);
    used.insert(files.begin(), files.end());
    CHECK(contains(source, kernel_template(config)));
    CHECK(contains(source, kernel_file(family_of(config).warp_tile)));
    CHECK(contains(source, kernel_file(main_loop_of(config).source)));
    CHECK(contains(source, kernel_file(main_loop_of(config).load_tiles)));
    for (const MainLoop& loop : main_loops())
      if (&loop != &main_loop_of(config)) {
        CHECK_FALSE(contains(source, kernel_file(loop.source)));
        CHECK_FALSE(contains(source, kernel_file(loop.load_tiles)));
      }
    for (const Family& f : kernel_families())
      if (std::string(f.warp_tile) != family_of(config).warp_tile)
        CHECK_FALSE(contains(source, kernel_file(f.warp_tile)));
    // The instructions of the other families are absent, not merely disabled.
    CHECK(contains(source, "asm(\"mma.sync.aligned") == (config.mma != 0));
    CHECK(contains(source, "asm volatile(\"cp.async.commit_group") == (config.async_copy != 0));
    CHECK(contains(source, "// family " + std::string(c.family) + ", main loop " + c.main_loop));
    // Every family's source compiles on its own.
    const CompileResult compiled = compile_source(source, "sm_90");
    INFO(compiled.log);
    CHECK(compiled.ok);
  }
  // Every embedded file is some family's.
  for (const char* file :
       {"common.cuh", "cp_async.cuh", "mma_sync.cuh", "prologue.cuh", "load_tiles_registers.cuh",
        "load_tiles_cp_async.cuh", "warp_simt.cuh", "warp_mma.cuh", "k_step.cuh",
        "main_loop_registers.cuh", "main_loop_multistage.cuh", "epilogue.cuh"}) {
    INFO(file);
    CHECK(!kernel_file(file).empty());
    CHECK(used.count(file) == 1);
  }
  CHECK_THROWS_AS(kernel_file("gemm_simt.cuh"), std::out_of_range);
}

TEST_CASE("families: a family's parameters are the parameter table's", "[families]") {
  std::set<std::string> declared;
  for (const Family& f : kernel_families()) {
    INFO(f.name);
    const std::vector<std::string> tokens = family_parameters(f);
    CHECK(!tokens.empty());
    for (const std::string& token : tokens) {
      CHECK_NOTHROW(tuning_parameter(token));
      CHECK((tuning_parameter(token).families & f.bit) != 0);
      declared.insert(token);
    }
    auto uses = [&](const char* token) {
      return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
    };
    CHECK(uses("BM"));
    CHECK(uses("MM") == (f.bit == kFp64Mma));
    CHECK(uses("AC") == (f.bit != kRegisterStagedSimt));
    // The cp.async pipeline has no register prefetch; only SIMT kernels store C by vectors.
    CHECK(uses("PF") == (f.bit != kCpAsyncSimt));
    CHECK(uses("VC") == (f.bit != kFp64Mma));
    CHECK(uses("SL") == (f.bit != kFp64Mma));
  }
  // Every parameter shapes some family.
  for (const TuningParameter& p : tuning_parameters()) CHECK(declared.count(p.token) == 1);
}
