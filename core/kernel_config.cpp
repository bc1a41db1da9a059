// KernelConfig text ids: one token per parameter, KEY then value, joined by '_'.
#include <cctype>
#include <map>

#include "core/core.hpp"

namespace gemmtune {
namespace {

struct Field {
  const char* key;
  int KernelConfig::*member;
};

// The order here is the canonical order of ids and CSV columns.
constexpr Field kFields[] = {
    {"BM", &KernelConfig::blk_m},         {"BN", &KernelConfig::blk_n},
    {"BK", &KernelConfig::blk_k},         {"DX", &KernelConfig::dim_x},
    {"DY", &KernelConfig::dim_y},         {"DXA", &KernelConfig::dim_xa},
    {"DYA", &KernelConfig::dim_ya},       {"DXB", &KernelConfig::dim_xb},
    {"DYB", &KernelConfig::dim_yb},       {"VA", &KernelConfig::vec_a},
    {"VB", &KernelConfig::vec_b},         {"LA", &KernelConfig::smem_a_kmajor},
    {"LB", &KernelConfig::smem_b_kmajor}, {"PD", &KernelConfig::pad},
    {"PF", &KernelConfig::prefetch},      {"ST", &KernelConfig::stages},
    {"UR", &KernelConfig::unroll},        {"RS", &KernelConfig::raster},
    {"VS", &KernelConfig::vec_s},
};
constexpr const char* kEdgeKey = "ED";
// Appended after ED, and only when not 0, so the ids recorded before they existed stay valid.
struct OptionalField {
  const char* key;
  int KernelConfig::*member;
  int max;
  const char* meaning;
};
constexpr OptionalField kOptionalFields[] = {
    {"MM", &KernelConfig::mma, 4,
     "0 (SIMT), 1 (FP64 tensor cores, m8n8k4), 2 (m16n8k4), 3 (m16n8k8) or 4 (m16n8k16)"},
    {"AC", &KernelConfig::async_copy, 1, "0 (register staging) or 1 (cp.async pipeline)"},
    {"SK", &KernelConfig::split_k, 64, "0 (no split-K) or 2..64 (blocks per tile of C along K)"},
    {"VC", &KernelConfig::vec_c, 1, "0 (C stored an element at a time) or 1 (VS rows at a time)"},
    {"SL", &KernelConfig::shared32, 1,
     "0 (fragment loads on 64-bit shared addresses) or 1 (on 32-bit ones, VS > 1 SIMT only)"},
};

}  // namespace

std::string KernelConfig::id() const {
  std::string out;
  for (const Field& f : kFields) {
    if (!out.empty()) out += '_';
    out += f.key;
    out += std::to_string(this->*f.member);
  }
  out += std::string("_") + kEdgeKey + std::to_string(static_cast<int>(edge));
  for (const OptionalField& f : kOptionalFields)
    if (this->*f.member != 0) out += std::string("_") + f.key + std::to_string(this->*f.member);
  return out;
}

KernelConfig KernelConfig::parse(std::string_view id) {
  KernelConfig c;
  std::map<std::string, bool> seen;
  size_t pos = 0;
  if (id.empty()) throw InputError("empty configuration id");
  while (pos <= id.size()) {
    size_t end = id.find('_', pos);
    if (end == std::string_view::npos) end = id.size();
    std::string_view token = id.substr(pos, end - pos);
    size_t digits = 0;
    while (digits < token.size() && std::isalpha(static_cast<unsigned char>(token[digits])))
      ++digits;
    std::string key(token.substr(0, digits));
    std::string_view value_text = token.substr(digits);
    if (key.empty() || value_text.empty())
      throw InputError("configuration id token '" + std::string(token) +
                       "' is not KEY followed by a number (in '" + std::string(id) + "')");
    if (seen[key]) throw InputError("configuration id repeats key '" + key + "'");
    seen[key] = true;
    const int value = static_cast<int>(parse_int(value_text, "configuration id value of " + key));
    bool matched = false;
    for (const Field& f : kFields) {
      if (key == f.key) {
        c.*f.member = value;
        matched = true;
      }
    }
    if (key == kEdgeKey) {
      if (value != 0 && value != 1)
        throw InputError("ED" + std::to_string(value) +
                         ": edge mode must be 0 (predicate) or 1 (redirect)");
      c.edge = static_cast<EdgeMode>(value);
      matched = true;
    }
    for (const OptionalField& f : kOptionalFields) {
      if (key != f.key) continue;
      if (value < 0 || value > f.max)
        throw InputError(key + std::to_string(value) + ": " + key + " must be " + f.meaning);
      c.*f.member = value;
      matched = true;
    }
    if (!matched) {
      std::vector<std::string> keys;
      for (const Field& f : kFields) keys.emplace_back(f.key);
      keys.emplace_back(kEdgeKey);
      for (const OptionalField& f : kOptionalFields) keys.emplace_back(f.key);
      throw InputError("unknown configuration id key '" + key + "' (known: " + join(keys, ", ") +
                       ")");
    }
    pos = end + 1;
  }
  // The read layouts use every thread, so DYA and DYB follow from the rest when not given.
  if (!seen["DYA"] && c.dim_xa > 0 && c.threads() % c.dim_xa == 0)
    c.dim_ya = c.threads() / c.dim_xa;
  if (!seen["DYB"] && c.dim_xb > 0 && c.threads() % c.dim_xb == 0)
    c.dim_yb = c.threads() / c.dim_xb;
  return c;
}

bool config_key_optional(std::string_view key) {
  for (const OptionalField& f : kOptionalFields)
    if (key == f.key) return true;
  return false;
}

std::vector<std::string> config_csv_header() {
  std::vector<std::string> names;
  for (const Field& f : kFields) names.emplace_back(f.key);
  names.emplace_back(kEdgeKey);
  for (const OptionalField& f : kOptionalFields) names.emplace_back(f.key);
  return names;
}

void config_csv_values(const KernelConfig& c, std::vector<int>& values) {
  values.clear();
  for (const Field& f : kFields) values.push_back(c.*f.member);
  values.push_back(static_cast<int>(c.edge));
  for (const OptionalField& f : kOptionalFields) values.push_back(c.*f.member);
}

std::vector<int> config_csv_values(const KernelConfig& c) {
  std::vector<int> values;
  config_csv_values(c, values);
  return values;
}

}  // namespace gemmtune
