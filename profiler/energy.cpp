// Energy through NVML's total-energy counter (millijoules since the driver loaded), read around
// a loop of launches. NVML is loaded at run time: a machine without it gets a clear error and
// the tuner goes on without energy. The few entry points are declared here because the NVML
// header is not part of every CUDA installation.
#include <dlfcn.h>

#include <chrono>
#include <cmath>

#include "profiler/cuda_handles.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {
namespace {

using nvmlReturn = int;  // nvmlReturn_t: 0 is success
using nvmlDevice = struct nvmlDevice_st*;

class Nvml {
 public:
  static Nvml& get() {
    static Nvml nvml;
    if (!nvml.error_.empty()) throw EnergyError(nvml.error_);
    return nvml;
  }
  nvmlDevice device_for(int cuda_device) {
    char bus[32] = {};
    gpu::check(cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device), "cudaDeviceGetPCIBusId");
    nvmlDevice d = nullptr;
    call(by_pci_(bus, &d), "nvmlDeviceGetHandleByPciBusId");
    return d;
  }
  unsigned long long energy_mj(nvmlDevice d) {
    unsigned long long mj = 0;
    call(energy_(d, &mj), "nvmlDeviceGetTotalEnergyConsumption");
    return mj;
  }

 private:
  Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      error_ = "NVML is not available (libnvidia-ml.so.1: " + std::string(dlerror()) +
               "); energy is not measured";
      return;
    }
    auto sym = [&](const char* name, auto& fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib_, name));
      if (!fn && error_.empty()) error_ = std::string("NVML lacks ") + name;
    };
    sym("nvmlInit_v2", init_);
    sym("nvmlErrorString", error_string_);
    sym("nvmlDeviceGetHandleByPciBusId_v2", by_pci_);
    sym("nvmlDeviceGetTotalEnergyConsumption", energy_);
    if (error_.empty() && init_() != 0) error_ = "nvmlInit failed; energy is not measured";
  }
  void call(nvmlReturn r, const char* what) {
    if (r != 0)
      throw EnergyError(std::string(what) + ": " + (error_string_ ? error_string_(r) : "error") +
                        " (code " + std::to_string(r) + ")");
  }
  void* lib_ = nullptr;
  std::string error_;
  nvmlReturn (*init_)() = nullptr;
  const char* (*error_string_)(nvmlReturn) = nullptr;
  nvmlReturn (*by_pci_)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*energy_)(nvmlDevice, unsigned long long*) = nullptr;
};

}  // namespace

EnergyMeasurement measure_energy(int device, const std::function<void()>& run_once,
                                 double seconds_per_run, double min_seconds) {
  Nvml& nvml = Nvml::get();
  const nvmlDevice d = nvml.device_for(device);
  EnergyMeasurement m;
  m.runs = std::max(1, int(std::ceil(min_seconds / std::max(seconds_per_run, 1e-7))));
  gpu::check(cudaDeviceSynchronize(), "synchronize before the energy loop");
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned long long before = nvml.energy_mj(d);
  for (int i = 0; i < m.runs; ++i) run_once();
  gpu::check(cudaDeviceSynchronize(), "energy loop");
  const unsigned long long after = nvml.energy_mj(d);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (after <= before)
    throw EnergyError("NVML's energy counter did not advance over " + std::to_string(m.seconds) +
                      " s");
  m.joules_per_run = double(after - before) * 1e-3 / m.runs;
  return m;
}

}  // namespace gemmtune
