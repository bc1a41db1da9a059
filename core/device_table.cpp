// Built-in device specs. Figures are the vendors' published numbers; H100-SXM's limits were
// read off the lent H100 (../shared/reference/h100_cublas_baseline.txt).
#include <algorithm>
#include <cctype>
#include <utility>

#include "core/core.hpp"

namespace gemmtune {
namespace {

DeviceSpec make(std::string name, int major, int minor, int sms, double mhz, double gbs,
                std::int64_t l2, int fp32, int fp64, std::int64_t smem_sm, std::int64_t optin,
                std::int64_t reserved, int threads_sm, int blocks_sm) {
  DeviceSpec d;
  d.name = std::move(name);
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sms;
  d.sm_clock_mhz = mhz;
  d.dram_bandwidth_gbs = gbs;
  d.l2_bytes = l2;
  d.fp32_lanes_per_sm = fp32;
  d.fp64_lanes_per_sm = fp64;
  d.smem_per_sm = smem_sm;
  d.smem_per_block_optin = optin;
  d.smem_reserved_per_block = reserved;
  d.max_threads_per_sm = threads_sm;
  d.max_blocks_per_sm = blocks_sm;
  return d;
}

// Tensor-core rates, FMAs per clock per SM: FP64 (H100: 67 TFLOP/s over 132 SMs at 1.98 GHz),
// and FP16/BF16 through mma.sync, TF32 at half that. The A100's are its tensor cores' full rate
// (312 TFLOP/s FP16 over 108 SMs at 1.41 GHz); Hopper's mma.sync issues at half the rate its
// wgmma quotes (989 TFLOP/s dense FP16 at 1.83 GHz).
DeviceSpec with_mma(DeviceSpec d, int fp64_fmas_per_clock, int fp16_fmas_per_clock) {
  d.fp64_mma_per_sm = fp64_fmas_per_clock;
  d.fp16_mma_per_sm = fp16_fmas_per_clock;
  d.tf32_mma_per_sm = fp16_fmas_per_clock / 2;
  return d;
}

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * 1024;

// Names as the CUDA driver reports them (cudaDeviceProp::name, which query_local_device keeps)
// for the parts a built-in spec describes; other variants (H100 NVL, A100 40GB) are not these
// specs.
constexpr std::pair<const char*, const char*> kDriverNames[] = {
    {"NVIDIA H100 80GB HBM3", "H100-SXM"},
    {"NVIDIA H100 PCIe", "H100-PCIe"},
    {"NVIDIA H200", "H200"},
    {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
    {"Tesla V100-SXM2-16GB", "V100-SXM2"},
    {"Tesla V100-SXM2-32GB", "V100-SXM2"},
    {"NVIDIA GeForce RTX 4090", "RTX4090"},
    {"NVIDIA GeForce GTX 1060 6GB", "GTX1060"},
};

// Case, spaces, '-' and '_' do not tell names apart.
std::string squash(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const std::vector<DeviceSpec>& builtin_devices() {
  static const std::vector<DeviceSpec> table = {
      // name, cc, SMs, boost MHz, DRAM GB/s, L2, FP32/FP64 lanes, smem/SM, opt-in, reserved,
      // threads/SM, blocks/SM
      with_mma(make("H100-SXM", 9, 0, 132, 1980, 3352, 50 * MiB, 128, 64, 228 * KiB, 227 * KiB,
                    1 * KiB, 2048, 32),
               128, 1024),
      with_mma(make("H100-PCIe", 9, 0, 114, 1755, 2039, 50 * MiB, 128, 64, 228 * KiB, 227 * KiB,
                    1 * KiB, 2048, 32),
               128, 1024),
      with_mma(make("H200", 9, 0, 132, 1980, 4800, 60 * MiB, 128, 64, 228 * KiB, 227 * KiB, 1 * KiB,
                    2048, 32),
               128, 1024),
      with_mma(make("A100-SXM4-80GB", 8, 0, 108, 1410, 2039, 40 * MiB, 64, 32, 164 * KiB, 163 * KiB,
                    1 * KiB, 2048, 32),
               64, 1024),
      make("V100-SXM2", 7, 0, 80, 1530, 900, 6 * MiB, 64, 32, 96 * KiB, 96 * KiB, 0, 2048, 32),
      make("RTX4090", 8, 9, 128, 2520, 1008, 72 * MiB, 128, 2, 100 * KiB, 99 * KiB, 1 * KiB, 1536,
           24),
      // Seed 001's card: 1280 cores, 3855 GFLOP/s peak (which implies 1506 MHz), 192 GB/s.
      make("GTX1060", 6, 1, 10, 1506, 192, 1536 * KiB, 128, 4, 96 * KiB, 48 * KiB, 0, 2048, 32),
  };
  return table;
}

std::vector<std::string> builtin_device_names() {
  std::vector<std::string> names;
  for (const auto& d : builtin_devices()) names.push_back(d.name);
  return names;
}

DeviceSpec find_builtin_device(std::string_view name) {
  const std::string wanted = squash(name);
  for (const auto& d : builtin_devices()) {
    if (squash(d.name) == wanted) return d;
  }
  // Common aliases: "A100" and "H100" mean the SXM parts.
  if (wanted == "a100" || wanted == "a100sxm") return find_builtin_device("A100-SXM4-80GB");
  if (wanted == "h100") return find_builtin_device("H100-SXM");
  if (wanted == "v100") return find_builtin_device("V100-SXM2");
  throw InputError("unknown GPU '" + std::string(name) + "'; known: " +
                   join(builtin_device_names(), ", ") + " (or 'local', or a JSON spec file)");
}

std::string spec_name_of(std::string_view device_name) {
  const std::string wanted = squash(device_name);
  for (const auto& [driver, spec] : kDriverNames)
    if (squash(driver) == wanted) return spec;
  try {
    return find_builtin_device(device_name).name;
  } catch (const InputError&) {
    return "";
  }
}

double DeviceSpec::peak_gflops(Precision p) const {
  // D and Z GEMMs may run on the FP64 tensor cores (Z as four real products per complex one).
  const int lanes = is_reduced(p)  ? mma_fmas_per_sm(p)
                    : is_double(p) ? std::max(fp64_lanes_per_sm, mma_fmas_per_sm(p))
                                   : fp32_lanes_per_sm;
  return 2.0 * lanes * sm_count * sm_clock_mhz * 1e-3;
}

int DeviceSpec::mma_fmas_per_sm(Precision p) const {
  if (is_double(p)) return fp64_mma_per_sm;
  if (p == Precision::T) return tf32_mma_per_sm;
  return is_reduced(p) ? fp16_mma_per_sm : 0;
}

void DeviceSpec::validate() const {
  auto positive = [&](double v, const char* field) {
    if (!(v > 0))
      throw InputError("device '" + name + "': " + field + " = " + std::to_string(v) +
                       " must be positive");
  };
  if (name.empty()) throw InputError("device spec has no name");
  if (cc_major < 6 || cc_major > 12)
    throw InputError("device '" + name + "': compute capability " + std::to_string(cc_major) + "." +
                     std::to_string(cc_minor) + " is outside the supported 6.0 .. 12.x");
  positive(sm_count, "sm_count");
  positive(sm_clock_mhz, "sm_clock_mhz");
  positive(dram_bandwidth_gbs, "dram_bandwidth_gbs");
  positive(double(l2_bytes), "l2_bytes");
  positive(fp32_lanes_per_sm, "fp32_lanes_per_sm");
  positive(fp64_lanes_per_sm, "fp64_lanes_per_sm");
  if (fp64_mma_per_sm < 0 || (fp64_mma_per_sm > 0 && cc_major < 8))
    throw InputError("device '" + name + "': fp64_mma_per_sm = " + std::to_string(fp64_mma_per_sm) +
                     " must be 0, or positive on compute capability 8.0 and later");
  for (const auto& [rate, field] : {std::pair{fp16_mma_per_sm, "fp16_mma_per_sm"},
                                    std::pair{tf32_mma_per_sm, "tf32_mma_per_sm"}})
    if (rate < 0 || (rate > 0 && cc_major < 8))
      throw InputError("device '" + name + "': " + field + " = " + std::to_string(rate) +
                       " must be 0, or positive on compute capability 8.0 and later");
  positive(regs_per_sm, "regs_per_sm");
  positive(regs_per_block, "regs_per_block");
  positive(double(smem_per_sm), "smem_per_sm");
  positive(double(smem_per_block), "smem_per_block");
  positive(max_threads_per_sm, "max_threads_per_sm");
  positive(max_threads_per_block, "max_threads_per_block");
  positive(max_blocks_per_sm, "max_blocks_per_sm");
  if (warp_size != 32)
    throw InputError("device '" + name + "': warp_size = " + std::to_string(warp_size) +
                     ", only 32 is supported");
  if (smem_per_block_optin < smem_per_block)
    throw InputError("device '" + name + "': smem_per_block_optin (" +
                     std::to_string(smem_per_block_optin) + ") is below smem_per_block (" +
                     std::to_string(smem_per_block) + ")");
  if (smem_per_block_optin > smem_per_sm)
    throw InputError("device '" + name + "': smem_per_block_optin (" +
                     std::to_string(smem_per_block_optin) + ") exceeds smem_per_sm (" +
                     std::to_string(smem_per_sm) + ")");
}

}  // namespace gemmtune
