// The measuring side of process isolation: a fault that poisons the CUDA context kills only
// this process; the tuner starts another and goes on.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

using nlohmann::json;

std::string problem_to_json(const Problem& p) {
  return json{{"precision", std::string(1, to_char(p.precision))},
              {"op_a", std::string(1, to_char(p.op_a))},
              {"op_b", std::string(1, to_char(p.op_b))},
              {"m", p.m},
              {"n", p.n},
              {"k", p.k},
              {"lda", p.lda},
              {"ldb", p.ldb},
              {"ldc", p.ldc},
              {"batch", p.batch},
              {"alpha", {p.alpha.re, p.alpha.im}},
              {"beta", {p.beta.re, p.beta.im}}}
      .dump();
}

Problem problem_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    Problem p;
    p.precision = parse_precision(j.at("precision").get<std::string>());
    p.op_a = parse_op(j.at("op_a").get<std::string>());
    p.op_b = parse_op(j.at("op_b").get<std::string>());
    p.m = j.at("m");
    p.n = j.at("n");
    p.k = j.at("k");
    p.lda = j.at("lda");
    p.ldb = j.at("ldb");
    p.ldc = j.at("ldc");
    p.batch = j.at("batch");
    p.alpha = {j.at("alpha")[0], j.at("alpha")[1]};
    p.beta = {j.at("beta")[0], j.at("beta")[1]};
    p.validate();
    return p;
  } catch (const json::exception& e) {
    throw InputError(std::string("malformed problem JSON: ") + e.what());
  }
}

namespace {

// One configuration compiled (cached), verified and timed, with the extras asked for.
json measure_reply(GpuSession& session, const Problem& p, const json& req,
                   const TimingOptions& timing, const std::string& arch,
                   const CompileCache& cache) {
  const KernelConfig c = KernelConfig::parse(req.at("config").get<std::string>());
  const CompileResult compiled =
      compile_source(render_source(c, p.precision, p.op_a, p.op_b), arch, &cache);
  const Measurement m = session.measure(p, c, compiled, timing);
  json reply = {{"status", to_string(m.status)},
                {"error", m.error},
                {"median_s", m.median_s},
                {"min_s", m.min_s},
                {"max_s", m.max_s},
                {"repetitions", m.repetitions},
                {"rel_error", m.rel_error},
                {"registers", compiled.registers},
                {"spill_bytes", compiled.spill_store_bytes + compiled.spill_load_bytes}};
  // Counters and energy are extras: their failure (not permitted, NVML missing) is
  // reported beside an ok measurement, never instead of it.
  if (m.status == Status::Ok && req.value("counters", false)) {
    try {
      json counters = json::object();
      for (const auto& [name, value] :
           session.profile(p, c, compiled, default_counter_metrics(p.precision)))
        counters[name] = value;
      reply["counters"] = counters;
    } catch (const std::exception& e) {
      reply["counters_error"] = e.what();
    }
  }
  if (m.status == Status::Ok && req.value("energy", false)) {
    try {
      reply["energy_j"] = session.energy(p, c, compiled, m.median_s).joules_per_run;
    } catch (const std::exception& e) {
      reply["energy_error"] = e.what();
    }
  }
  return reply;
}

// The vendor library timed on the same buffers and timing as the configurations.
json reference_reply(GpuSession& session, const Problem& p, const std::string& library,
                     const TimingOptions& timing) {
  if (library != "cublas") throw InputError("reference library '" + library + "' is not cublas");
  const Measurement m = session.measure_cublas(p, timing);
  return {{"status", to_string(m.status)},
          {"error", m.error},
          {"median_s", m.median_s},
          {"min_s", m.min_s},
          {"max_s", m.max_s},
          {"repetitions", m.repetitions}};
}

}  // namespace

int run_worker(std::FILE* in, std::FILE* out) {
  GpuSession session(0);
  const std::string arch = session.device().arch();
  const CompileCache cache(CompileCache::default_directory());
  char* line = nullptr;
  size_t cap = 0;
  while (getline(&line, &cap, in) > 0) {
    json reply;
    try {
      const json req = json::parse(line);
      const Problem p = problem_from_json(req.at("problem").dump());
      TimingOptions timing;
      timing.repetitions = req.value("repetitions", 20);
      timing.warmup = req.value("warmup", 3);
      if (req.contains("reference")) {
        reply = reference_reply(session, p, req.at("reference").get<std::string>(), timing);
      } else {
        reply = measure_reply(session, p, req, timing, arch, cache);
      }
    } catch (const std::exception& e) {
      reply = {{"status", "launch_error"}, {"error", e.what()}};
    }
    std::fprintf(out, "%s\n", reply.dump().c_str());
    std::fflush(out);
    if (session.poisoned()) {
      std::free(line);
      return 3;
    }
  }
  std::free(line);
  return 0;
}

}  // namespace gemmtune
