// NVRTC compilation with ptxas resource reporting; runs without a GPU.
#include <nvrtc.h>

#include <chrono>
#include <regex>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

// Owns one nvrtcProgram.
class NvrtcProgram {
 public:
  explicit NvrtcProgram(const std::string& source) {
    check(nvrtcCreateProgram(&prog_, source.c_str(), "gemmtune_kernel.cu", 0, nullptr, nullptr),
          "nvrtcCreateProgram");
  }
  ~NvrtcProgram() {
    if (prog_) nvrtcDestroyProgram(&prog_);
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  nvrtcProgram get() const { return prog_; }

  static void check(nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS)
      throw std::runtime_error(std::string(what) + " failed: " + nvrtcGetErrorString(r));
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

int arch_number(const std::string& arch) {
  static const std::regex pattern("sm_([0-9]{2,3})a?");
  std::smatch m;
  if (!std::regex_match(arch, m, pattern))
    throw InputError("architecture '" + arch + "' is not of the form sm_XY (e.g. sm_80, sm_90)");
  return std::stoi(m[1]);
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

void parse_ptxas_info(const std::string& log, CompileResult& r) {
  std::smatch m;
  static const std::regex regs("Used ([0-9]+) registers");
  static const std::regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  static const std::regex stack("([0-9]+) bytes stack frame");
  static const std::regex smem("([0-9]+) bytes smem");
  if (std::regex_search(log, m, regs)) r.registers = std::stoi(m[1]);
  if (std::regex_search(log, m, spills)) {
    r.spill_store_bytes = std::stoi(m[1]);
    r.spill_load_bytes = std::stoi(m[2]);
  }
  if (std::regex_search(log, m, stack)) r.stack_bytes = std::stoi(m[1]);
  if (std::regex_search(log, m, smem)) r.static_smem_bytes = std::stoi(m[1]);
}

CompileResult compile_source(const std::string& source, const std::string& arch,
                             const CompileCache* cache) {
  const int number = arch_number(arch);
  if (number < 60)
    throw InputError("architecture " + arch + " is older than sm_60, the oldest gemmtune supports");
  const std::string key = compile_key(source, arch);
  CompileResult result;
  if (cache && cache->lookup(key, result)) return result;

  const auto start = std::chrono::steady_clock::now();
  NvrtcProgram prog(source);
  const std::string arch_flag = "--gpu-architecture=" + arch;
  const char* options[] = {arch_flag.c_str(), "--ptxas-options=-v", "--std=c++17",
                           "--device-as-default-execution-space"};
  const nvrtcResult status = nvrtcCompileProgram(prog.get(), 4, options);
  size_t log_size = 0;
  NvrtcProgram::check(nvrtcGetProgramLogSize(prog.get(), &log_size), "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  NvrtcProgram::check(nvrtcGetProgramLog(prog.get(), log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && log.back() == '\0') log.pop_back();
  result.log = log;
  if (status == NVRTC_SUCCESS) {
    size_t size = 0;
    NvrtcProgram::check(nvrtcGetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize");
    result.cubin.resize(size);
    NvrtcProgram::check(nvrtcGetCUBIN(prog.get(), result.cubin.data()), "nvrtcGetCUBIN");
    parse_ptxas_info(log, result);
    if (result.registers == 0 && read_cubin_resources(result.cubin, result)) {
      // No ptxas log (NVRTC answered from the CUDA compute cache). The template declares no
      // local arrays, so a stack frame is spill space: count it as spilled.
      result.spill_store_bytes = result.spill_load_bytes = result.stack_bytes;
    }
    result.ok = true;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (cache && result.ok) cache->store(key, result);
  return result;
}

}  // namespace gemmtune
