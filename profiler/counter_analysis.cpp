// The hardware's answer beside the model's: counters mapped onto the model's quantities.
#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

// The sum of the named counters; NaN if any is missing.
double sum_of(const CounterValues& counters, std::initializer_list<const char*> names) {
  double total = 0;
  for (const char* name : names) {
    const auto it = std::find_if(counters.begin(), counters.end(),
                                 [&](const auto& c) { return c.first == name; });
    if (it == counters.end()) return std::numeric_limits<double>::quiet_NaN();
    total += it->second;
  }
  return total;
}

}  // namespace

std::vector<CounterComparison> compare_with_model(const CounterValues& c, const Prediction& p) {
  double fma = std::isnan(sum_of(c, {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"}))
                   ? sum_of(c, {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"})
                   : sum_of(c, {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"});
  // A DMMA warp instruction is 8 x 8 x 4 or 16 x 8 x 4 FMAs, an HMMA one 16 x 8 x k (FP16, BF16,
  // TF32 kernels, which issue no FFMA).
  const double dmma = sum_of(c, {"sm__inst_executed_pipe_tensor_op_dmma.sum"});
  if (!std::isnan(dmma)) fma += double(p.fmas_per_tensor_instr) * dmma;
  const double hmma = sum_of(c, {"sm__inst_executed_pipe_tensor_op_hmma.sum"});
  if (!std::isnan(hmma)) fma = double(p.fmas_per_tensor_instr) * hmma;
  return {
      {"time (us)", "gpu__time_duration.sum", sum_of(c, {"gpu__time_duration.sum"}) * 1e-3,
       p.time_s * 1e6},
      {"occupancy (achieved vs theoretical)", "sm__warps_active.avg.pct_of_peak_sustained_active",
       sum_of(c, {"sm__warps_active.avg.pct_of_peak_sustained_active"}) / 100, p.occ.fraction},
      {"DRAM bytes", "dram__bytes_read.sum + dram__bytes_write.sum",
       sum_of(c, {"dram__bytes_read.sum", "dram__bytes_write.sum"}), p.dram_bytes},
      {"L2 bytes", "lts__t_bytes.sum", sum_of(c, {"lts__t_bytes.sum"}), p.l2_bytes},
      {"shared-memory wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum",
       sum_of(c, {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"}),
       p.smem_wavefronts},
      {"FMAs (per thread; 256 or 512 per DMMA, 16 x 8 x k per HMMA)",
       "smsp__sass_thread_inst_executed_op_{f,d}fma_pred_on.sum + FMAs per mma x "
       "sm__inst_executed_pipe_tensor_op_{d,h}mma.sum",
       fma, p.fma_count},
  };
}

std::vector<std::pair<std::string, double>> top_stall_reasons(const CounterValues& counters,
                                                              size_t count) {
  std::vector<std::pair<std::string, double>> stalls;
  const std::string prefix = "smsp__warp_issue_stalled_", suffix = "_per_warp_active.pct";
  for (const auto& [name, value] : counters)
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      stalls.emplace_back(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()),
                          value);
  std::sort(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (stalls.size() > count) stalls.resize(count);
  return stalls;
}

}  // namespace gemmtune
