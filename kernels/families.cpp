// The kernel families and the embedded files they are made of.
#include "kernels/kernels.hpp"

#include <map>
#include <stdexcept>

namespace gemmtune {

extern const char* const kEmbeddedKernelFiles[][2];  // generated from kernels/*.cuh by CMake
extern const int kEmbeddedKernelFilesCount;

const std::vector<MainLoop>& main_loops() {
  static const std::vector<MainLoop> table{
      {.rules = &main_loop_rules()[0],
       .helpers = "",
       .load_tiles = "load_tiles_registers.cuh",
       .source = "main_loop_registers.cuh"},
      {.rules = &main_loop_rules()[1],
       .helpers = "cp_async.cuh",
       .load_tiles = "load_tiles_cp_async.cuh",
       .source = "main_loop_multistage.cuh"},
  };
  return table;
}

const std::vector<Family>& kernel_families() {
  static const std::vector<Family> table{
      {.rules = &family_rules()[0], .warp_tile = "warp_simt.cuh", .main_loops = {&main_loops()[0]}},
      {.rules = &family_rules()[1], .warp_tile = "warp_simt.cuh", .main_loops = {&main_loops()[1]}},
      {.rules = &family_rules()[2],
       .helpers = "mma_sync.cuh",
       .warp_tile = "warp_mma.cuh",
       .main_loops = {&main_loops()[0], &main_loops()[1]}},
  };
  return table;
}

const Family& family_of(const KernelConfig& c) {
  const FamilyRules& rules = family_rules_of(c);
  for (const Family& f : kernel_families())
    if (f.rules == &rules) return f;
  throw std::logic_error(std::string("the ") + rules.name + " family has no kernel files");
}

const MainLoop& main_loop_of(const KernelConfig& c) {
  for (const MainLoop* loop : family_of(c).main_loops)
    if (loop->rules->async_copy == c.async_copy) return *loop;
  throw std::logic_error("the " + std::string(family_of(c).rules->name) +
                         " family has no main loop for " + c.id());
}

std::vector<std::string> family_parameters(const Family& f) {
  std::vector<std::string> tokens;
  for (const TuningParameter& p : tuning_parameters())
    if (p.families & f.rules->bit) tokens.emplace_back(p.token);
  return tokens;
}

std::vector<std::string> kernel_files(const KernelConfig& c) {
  const Family& family = family_of(c);
  const MainLoop& loop = main_loop_of(c);
  // The loop's helpers precede the warp tile's, where kernels have always had them.
  std::vector<std::string> files{"common.cuh"};
  for (const char* helpers : {loop.helpers, family.helpers})
    if (*helpers) files.emplace_back(helpers);
  for (const char* body : {"prologue.cuh", loop.load_tiles, family.warp_tile, "k_step.cuh",
                           loop.source, "epilogue.cuh"})
    files.emplace_back(body);
  return files;
}

const std::string& kernel_file(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> files = [] {
    std::map<std::string, std::string, std::less<>> m;
    for (int i = 0; i < kEmbeddedKernelFilesCount; ++i)
      m.emplace(kEmbeddedKernelFiles[i][0], kEmbeddedKernelFiles[i][1]);
    return m;
  }();
  const auto it = files.find(name);
  if (it == files.end())
    throw std::out_of_range("no kernel file " + std::string(name) + " is embedded");
  return it->second;
}

}  // namespace gemmtune
