// CUPTI profiler host side: metric names -> configuration image for a chip, pass count, metric
// validation with suggestions, and counter-data image -> values. Needs no GPU (libnvperf_host
// knows every supported chip by name).
#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "profiler/counters_internal.hpp"

namespace gemmtune {
namespace cupti {

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  std::string text = s ? s : "CUPTI error " + std::to_string(int(r));
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    text +=
        " (profiling is not permitted for this user: the driver's RmProfilingAdminOnly is set;"
        " run as root or ask for NVreg_RestrictProfilingToAdminUsers=0)";
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
      r == CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED)
    text += " (another profiler, such as Nsight Compute, is attached to this process)";
  return text;
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw CounterError(std::string(what) + ": " + result_text(r), r);
}

HostObject::HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
  auto p = cupti::params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  const CUptiResult r = cuptiProfilerHostInitialize(&p);
  if (r == CUPTI_ERROR_INVALID_CHIP_NAME || r == CUPTI_ERROR_NOT_SUPPORTED) {
    throw InputError("chip '" + chip + "' is not one CUPTI knows (" + result_text(r) +
                     "); known chips: " + join(supported_chips(), ", "));
  }
  check(r, "cuptiProfilerHostInitialize");
  host_ = p.pHostObject;
}

HostObject::~HostObject() {
  if (!host_) return;
  auto p = cupti::params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  cuptiProfilerHostDeinitialize(&p);
}

std::vector<std::string> HostObject::base_metrics() const {
  std::vector<std::string> out;
  for (CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto p = cupti::params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
    p.pHostObject = host_;
    p.metricType = type;
    check(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics");
    for (size_t i = 0; i < p.numMetrics; ++i) out.emplace_back(p.ppMetricNames[i]);
  }
  return out;
}

std::optional<CUpti_MetricType> HostObject::metric_type(const std::string& base) const {
  auto p = cupti::params<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = base.c_str();
  if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) return std::nullopt;
  return p.metricType;
}

std::vector<std::string> HostObject::submetrics(const std::string& base,
                                                CUpti_MetricType type) const {
  auto p = cupti::params<CUpti_Profiler_Host_GetSubMetrics_Params>(
      CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = base.c_str();
  p.metricType = type;
  std::vector<std::string> out;
  if (cuptiProfilerHostGetSubMetrics(&p) != CUPTI_SUCCESS) return out;
  for (size_t i = 0; i < p.numOfSubmetrics; ++i) out.emplace_back(p.ppSubMetrics[i]);
  return out;
}

std::vector<std::uint8_t> HostObject::config_image(const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto add = cupti::params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
  auto size = cupti::params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = cupti::params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host_;
  get.pConfigImage = image.data();
  get.configImageSize = image.size();
  check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
  return image;
}

std::vector<double> HostObject::evaluate(const std::vector<std::uint8_t>& counter_data,
                                         size_t range, const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  std::vector<double> values(metrics.size());
  auto p = cupti::params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  check(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

int passes(std::vector<std::uint8_t>& config_image) {
  auto p = cupti::params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.pConfigImage = config_image.data();
  p.configImageSize = config_image.size();
  check(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses");
  return int(p.numOfPasses);
}

}  // namespace cupti

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest(const std::string& name, const std::vector<std::string>& pool,
                                 size_t count) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& p : pool) scored.emplace_back(edit_distance(name, p), p);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min(count, scored.size()); ++i) out.push_back(scored[i].second);
  return out;
}

// Names the first metric CUPTI would refuse, with the nearest valid names: the base metric
// (before the first '.') must exist, and the rest must be one of its submetrics.
void validate_metrics(const cupti::HostObject& host, const std::string& chip,
                      const std::vector<std::string>& metrics) {
  std::vector<std::string> bases;
  for (const auto& m : metrics) {
    const std::string base = m.substr(0, m.find('.'));
    const auto type = host.metric_type(base);
    if (!type) {
      if (bases.empty()) bases = host.base_metrics();
      throw InputError("unknown metric '" + m + "' on " + chip +
                       "; closest: " + join(closest(base, bases, 5), ", "));
    }
    if (m.size() == base.size())
      throw InputError("metric '" + m + "' needs a submetric such as " +
                       join(closest(".sum", host.submetrics(base, *type), 4), ", "));
    const std::string sub = m.substr(base.size());
    const auto subs = host.submetrics(base, *type);
    if (!subs.empty() && std::find(subs.begin(), subs.end(), sub) == subs.end())
      throw InputError("metric '" + m + "' has no submetric '" + sub + "' on " + chip +
                       "; closest: " + join(closest(sub, subs, 5), ", "));
  }
}

}  // namespace

std::vector<std::string> supported_chips() {
  auto p = cupti::params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  cupti::check(cuptiProfilerHostGetSupportedChips(&p), "cuptiProfilerHostGetSupportedChips");
  std::vector<std::string> out;
  for (size_t i = 0; i < p.numChips; ++i) out.emplace_back(p.ppChipNames[i]);
  return out;
}

std::vector<std::string> metric_names(const std::string& chip) {
  cupti::HostObject host(chip, {});
  return host.base_metrics();
}

CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics,
                          const std::vector<std::uint8_t>& availability) {
  if (metrics.empty()) throw InputError("no metric to collect");
  cupti::HostObject host(chip, availability);
  validate_metrics(host, chip, metrics);
  CounterPlan plan;
  plan.chip = chip;
  plan.metrics = metrics;
  plan.config_image = host.config_image(metrics);
  plan.passes = cupti::passes(plan.config_image);
  return plan;
}

const std::vector<std::string>& default_counter_metrics(Precision p) {
  // Nsight Compute's names (GH100). The FMA count and pipe follow the precision.
  static const std::vector<std::string> common = {
      "gpu__time_duration.sum",
      "sm__cycles_elapsed.avg",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_bytes.sum",
      "lts__t_sector_hit_rate.pct",
      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
      "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
      "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
      "smsp__issue_active.avg.pct_of_peak_sustained_active",
      "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
      "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
      "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
      "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
      "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
      "smsp__warp_issue_stalled_wait_per_warp_active.pct",
      "smsp__warp_issue_stalled_not_selected_per_warp_active.pct",
      "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
  };
  static const std::vector<std::string> single = [] {
    auto v = common;
    v.push_back("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    v.push_back("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active");
    return v;
  }();
  static const std::vector<std::string> dbl = [] {
    auto v = common;
    v.push_back("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum");
    v.push_back("sm__inst_executed_pipe_tensor_op_dmma.sum");
    v.push_back("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active");
    return v;
  }();
  // H, B, T: their work is all on the tensor pipe (HMMA, one warp instruction per mma.sync).
  static const std::vector<std::string> reduced = [] {
    auto v = common;
    v.push_back("sm__inst_executed_pipe_tensor_op_hmma.sum");
    return v;
  }();
  return is_reduced(p) ? reduced : is_double(p) ? dbl : single;
}

}  // namespace gemmtune
