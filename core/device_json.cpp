// DeviceSpec to and from JSON, so users can describe a GPU the built-in table lacks.
#include <nlohmann/json.hpp>

#include "core/core.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

// One list of (key, member) pairs drives both directions, so they cannot drift apart.
template <typename Visit>
void visit_fields(DeviceSpec& d, Visit&& v) {
  v("name", d.name);
  v("cc_major", d.cc_major);
  v("cc_minor", d.cc_minor);
  v("sm_count", d.sm_count);
  v("sm_clock_mhz", d.sm_clock_mhz);
  v("dram_bandwidth_gbs", d.dram_bandwidth_gbs);
  v("l2_bytes", d.l2_bytes);
  v("fp32_lanes_per_sm", d.fp32_lanes_per_sm);
  v("fp64_lanes_per_sm", d.fp64_lanes_per_sm);
  v("fp64_mma_per_sm", d.fp64_mma_per_sm);
  v("fp16_mma_per_sm", d.fp16_mma_per_sm);
  v("tf32_mma_per_sm", d.tf32_mma_per_sm);
  v("regs_per_sm", d.regs_per_sm);
  v("regs_per_block", d.regs_per_block);
  v("max_regs_per_thread", d.max_regs_per_thread);
  v("smem_per_sm", d.smem_per_sm);
  v("smem_per_block", d.smem_per_block);
  v("smem_per_block_optin", d.smem_per_block_optin);
  v("smem_reserved_per_block", d.smem_reserved_per_block);
  v("max_threads_per_sm", d.max_threads_per_sm);
  v("max_threads_per_block", d.max_threads_per_block);
  v("max_blocks_per_sm", d.max_blocks_per_sm);
  v("warp_size", d.warp_size);
  v("smem_banks", d.smem_banks);
  v("smem_bytes_per_clock", d.smem_bytes_per_clock);
}

const std::vector<std::string>& required_keys() {
  static const std::vector<std::string> keys = {"name",
                                                "cc_major",
                                                "cc_minor",
                                                "sm_count",
                                                "sm_clock_mhz",
                                                "dram_bandwidth_gbs",
                                                "l2_bytes",
                                                "fp32_lanes_per_sm",
                                                "fp64_lanes_per_sm",
                                                "smem_per_sm",
                                                "smem_per_block_optin"};
  return keys;
}

}  // namespace

std::string device_to_json(const DeviceSpec& spec) {
  DeviceSpec d = spec;
  json j = json::object();
  visit_fields(d, [&](const char* key, auto& value) { j[key] = value; });
  return j.dump(2);
}

DeviceSpec device_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(std::string("device spec is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("device spec must be a JSON object");
  for (const auto& key : required_keys())
    if (!j.contains(key)) throw InputError("device spec lacks the required key '" + key + "'");
  DeviceSpec d;
  visit_fields(d, [&](const char* key, auto& value) {
    if (!j.contains(key)) return;
    try {
      j.at(key).get_to(value);
    } catch (const json::exception&) {
      throw InputError(std::string("device spec key '") + key +
                       "' has the wrong type: " + j.at(key).dump());
    }
  });
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    visit_fields(d, [&](const char* key, auto&) { known = known || it.key() == key; });
    if (!known) throw InputError("device spec has an unknown key '" + it.key() + "'");
  }
  d.validate();
  return d;
}

DeviceSpec load_device_file(const std::string& path) {
  const std::string text = read_text_file(path, "device spec file");
  try {
    return device_from_json(text);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

}  // namespace gemmtune
