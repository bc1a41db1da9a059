// CUPTI range profiler, target side: counters of one kernel launch in the current context,
// with user replay (the caller re-runs the launch, re-poisoned, once per pass).
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "profiler/counters_internal.hpp"
#include "profiler/cuda_handles.hpp"

namespace gemmtune {
namespace {

using cupti::check;

// cuptiProfilerInitialize / DeInitialize for the lifetime of one collection.
class ProfilerInit {
 public:
  ProfilerInit() {
    auto p = cupti::params<CUpti_Profiler_Initialize_Params>(
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
  }
  ~ProfilerInit() {
    auto p = cupti::params<CUpti_Profiler_DeInitialize_Params>(
        CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&p);
  }
  ProfilerInit(const ProfilerInit&) = delete;
  ProfilerInit& operator=(const ProfilerInit&) = delete;
};

// The range profiler enabled on a context.
class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext ctx) {
    auto p = cupti::params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    check(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    obj_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    auto p = cupti::params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = obj_;
    cuptiRangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return obj_; }

 private:
  CUpti_RangeProfiler_Object* obj_ = nullptr;
};

std::string chip_name(int device) {
  auto p =
      cupti::params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = size_t(device);
  check(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
  return p.pChipName;
}

std::vector<std::uint8_t> counter_availability(CUcontext ctx) {
  auto p = cupti::params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  return image;
}

std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* rp,
                                             const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto size = cupti::params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = rp;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = cupti::params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = rp;
  init.pCounterData = image.data();
  init.counterDataSize = image.size();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init),
        "cuptiRangeProfilerCounterDataImageInitialize");
  return image;
}

}  // namespace

CounterValues collect_counters(int device, const std::vector<std::string>& metrics,
                               const std::function<void()>& before_pass,
                               const std::function<void()>& launch) {
  gpu::check(cudaSetDevice(device), "cudaSetDevice");
  gpu::check(cudaFree(nullptr), "CUDA context");
  CUcontext ctx = nullptr;
  gpu::check(gpu::DriverApi::get().ctx_get_current(&ctx), "cuCtxGetCurrent");
  const ProfilerInit init;
  const std::string chip = chip_name(device);
  CounterPlan plan = plan_counters(chip, metrics, counter_availability(ctx));
  const RangeProfiler rp(ctx);
  std::vector<std::uint8_t> data = counter_data_image(rp.get(), metrics);

  auto config = cupti::params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = rp.get();
  config.configSize = plan.config_image.size();
  config.pConfig = plan.config_image.data();
  config.counterDataImageSize = data.size();
  config.pCounterDataImage = data.data();
  config.range = CUPTI_AutoRange;  // one range: the one kernel run_once launches
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");

  // A bound on passes guards against a profiler that never reports completion.
  for (int pass = 0;; ++pass) {
    if (pass > plan.passes + 2)
      throw CounterError(
          "the range profiler asked for more than " + std::to_string(plan.passes) + " passes", 0);
    before_pass();
    auto start = cupti::params<CUpti_RangeProfiler_Start_Params>(
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = rp.get();
    check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    launch();
    auto stop =
        cupti::params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = rp.get();
    check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    if (stop.isAllPassSubmitted) break;
  }
  auto decode = cupti::params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = rp.get();
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped > 0)
    throw CounterError("the range profiler dropped the kernel's range", 0);

  auto info = cupti::params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges < 1) throw CounterError("no kernel ran inside the profiled range", 0);
  cupti::HostObject host(chip, {});
  const std::vector<double> values = host.evaluate(data, 0, metrics);
  CounterValues out;
  for (size_t i = 0; i < metrics.size(); ++i) out.emplace_back(metrics[i], values[i]);
  return out;
}

}  // namespace gemmtune
