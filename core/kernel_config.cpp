// KernelConfig text ids: one token per parameter (tuning_parameters()), KEY then value, joined by
// '_'.
#include <cctype>
#include <map>

#include "core/core.hpp"

namespace gemmtune {

std::string KernelConfig::id() const {
  std::string out;
  for (const TuningParameter& p : tuning_parameters()) {
    const int value = p.get(*this);
    // Tokens added later appear only when set, so the ids recorded before them stay valid.
    if (p.optional && value == 0) continue;
    if (!out.empty()) out += '_';
    out += p.token;
    out += std::to_string(value);
  }
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
    const TuningParameter& p = tuning_parameter(key);
    if (!p.valid(value))
      throw InputError(key + std::to_string(value) + ": " + key + " must be " + p.meaning);
    p.set(c, value);
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
  for (const TuningParameter& p : tuning_parameters())
    if (key == p.token) return p.optional;
  return false;
}

std::vector<std::string> config_csv_header() {
  std::vector<std::string> names;
  for (const TuningParameter& p : tuning_parameters()) names.emplace_back(p.token);
  return names;
}

void config_csv_values(const KernelConfig& c, std::vector<int>& values) {
  values.clear();
  for (const TuningParameter& p : tuning_parameters()) values.push_back(p.get(c));
}

std::vector<int> config_csv_values(const KernelConfig& c) {
  std::vector<int> values;
  config_csv_values(c, values);
  return values;
}

}  // namespace gemmtune
