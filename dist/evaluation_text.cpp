// Evaluations travel between ranks as JSON, every field kept, so rank 0 stores what a serial
// run would.
#include <nlohmann/json.hpp>

#include "dist/dist.hpp"

namespace gemmtune::dist {

std::string evaluation_to_text(const Evaluation& e) {
  nlohmann::json j = {
      {"config", e.config.id()},      {"status", e.status},       {"error", e.error},
      {"time_s", e.time_s},           {"min_s", e.min_s},         {"max_s", e.max_s},
      {"repetitions", e.repetitions}, {"rel_error", e.rel_error}, {"registers", e.registers},
      {"spill_bytes", e.spill_bytes}, {"energy_j", e.energy_j},   {"counters", e.counters_json}};
  return j.dump();
}

Evaluation evaluation_from_text(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  Evaluation e;
  e.config = KernelConfig::parse(j.at("config").get<std::string>());
  e.status = j.at("status");
  e.error = j.at("error");
  e.time_s = j.at("time_s");
  e.min_s = j.at("min_s");
  e.max_s = j.at("max_s");
  e.repetitions = j.at("repetitions");
  e.rel_error = j.at("rel_error");
  e.registers = j.at("registers");
  e.spill_bytes = j.at("spill_bytes");
  e.energy_j = j.at("energy_j");
  e.counters_json = j.at("counters");
  return e;
}

}  // namespace gemmtune::dist
