#include "app/app.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune::app {
namespace {

// The first `top` of the order tune measures in: one configuration per tile family first.
Ranking as_shortlist(Ranking r, int top) {
  std::vector<const KernelConfig*> configs;
  for (const auto& x : r.top) configs.push_back(&x.config);
  std::vector<Ranked> ordered;
  for (size_t i : shortlist_order(configs)) {
    if (int(ordered.size()) == top) break;
    ordered.push_back(r.top[i]);
  }
  r.top = std::move(ordered);
  return r;
}

// export --format json's row with the problem's fields spelled out, for DataFrames.
// The problem's own fields beside its shape id, for rows pandas can filter on.
nlohmann::json with_problem(nlohmann::json row, const Problem& p) {
  row["precision"] = std::string(1, to_char(p.precision));
  row["op_a"] = std::string(1, to_char(p.op_a));
  row["op_b"] = std::string(1, to_char(p.op_b));
  row["m"] = p.m;
  row["n"] = p.n;
  row["k"] = p.k;
  row["batch"] = p.batch;
  row["alpha"] = p.alpha.re;
  row["beta"] = p.beta.re;
  return row;
}

nlohmann::json row_of(const Attempt& a) {
  nlohmann::json row = with_problem(attempt_json(a), a.problem);
  row["repetitions"] = a.repetitions;
  if (!row.contains("counters")) row["counters"] = nullptr;
  return row;
}

// "s_nn_4096x4096x4096_b1" (Problem::shape_id) and the leading dimensions back into a problem.
Problem problem_of_shape(const std::string& id, std::int64_t lda, std::int64_t ldb,
                         std::int64_t ldc) {
  ProblemOptions o;
  char precision = 0, op_a = 0, op_b = 0;
  long long m = 0, n = 0, k = 0, batch = 0;
  if (std::sscanf(id.c_str(), "%c_%c%c_%lldx%lldx%lld_b%lld", &precision, &op_a, &op_b, &m, &n, &k,
                  &batch) != 7)
    throw InputError("problem '" + id + "' is not a shape id like s_nn_4096x4096x4096_b1");
  o.precision = std::string(1, precision);
  o.op_a = std::string(1, op_a);
  o.op_b = std::string(1, op_b);
  o.m = m;
  o.n = n;
  o.k = k;
  o.batch = batch;
  o.lda = lda;
  o.ldb = ldb;
  o.ldc = ldc;
  return o.problem();
}

// export --format json's rows (the columns of row_of; problem fields may be the shape id alone).
std::vector<Attempt> read_attempts_json(const std::string& text, CsvImportReport& report) {
  nlohmann::json rows;
  try {
    rows = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("not JSON: ") + e.what());
  }
  if (!rows.is_array()) throw InputError("expected a JSON array of attempts");
  std::vector<Attempt> good;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    try {
      Attempt a;
      a.device = r.at("device").get<std::string>();
      a.problem = problem_of_shape(r.at("problem").get<std::string>(), r.value("lda", 0),
                                   r.value("ldb", 0), r.value("ldc", 0));
      a.config = KernelConfig::parse(r.at("config").get<std::string>());
      a.status = r.value("status", std::string("ok"));
      a.error = r.value("error", std::string());
      a.median_s = r.value("time_s", 0.0);
      a.min_s = r.value("min_s", 0.0);
      a.max_s = r.value("max_s", 0.0);
      a.repetitions = r.value("repetitions", 0);
      a.gflops = r.value("gflops", 0.0);
      a.rel_error = r.value("rel_error", 0.0);
      a.registers = r.value("registers", 0);
      a.spill_bytes = r.value("spill_bytes", 0);
      a.smem_bytes = r.value("smem_bytes", std::int64_t(0));
      a.energy_j = r.value("energy_j", 0.0);
      a.predicted_s = r.value("predicted_s", 0.0);
      // The tuning run's fields are null (or absent) for attempts made before runs were kept.
      if (r.contains("strategy") && r["strategy"].is_string()) a.strategy = r["strategy"];
      if (r.contains("run") && r["run"].is_string()) a.run = r["run"];
      if (r.contains("elapsed_s") && r["elapsed_s"].is_number())
        a.elapsed_s = r["elapsed_s"].get<double>();
      if (r.contains("counters") && r["counters"].is_object())
        a.counters_json = r["counters"].dump();
      if (a.status == "ok" && !(a.median_s > 0)) throw InputError("an ok attempt needs time_s > 0");
      good.push_back(std::move(a));
    } catch (const std::exception& e) {
      report.rejected.push_back("row " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return good;
}

}  // namespace

Problem ProblemOptions::problem() const {
  Problem p;
  p.precision = parse_precision(precision);
  p.op_a = parse_op(op_a);
  p.op_b = parse_op(op_b);
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.batch = batch;
  p.alpha = {alpha, 0.0};
  p.beta = {beta, 0.0};
  if (lda < 0 || ldb < 0 || ldc < 0)
    throw InputError("leading dimensions must be >= 0 (0 means packed)");
  return p.normalized();
}

DeviceSpec device_named(const std::string& gpu) {
  if (gpu == "local") return query_local_device();
  if (gpu.find(".json") != std::string::npos || std::filesystem::exists(gpu))
    return load_device_file(gpu);
  return find_builtin_device(gpu);
}

ChosenCalibration calibration_for(const std::string& db_path, const std::string& device_name,
                                  const std::string& source) {
  std::unique_ptr<Database> store;
  if (source == "auto" && std::filesystem::exists(db_path)) {
    try {
      store = std::make_unique<Database>(db_path);
    } catch (const InputError& e) {
      std::fprintf(stderr, "gemmtune: warning: the store's calibration is not used (%s)\n",
                   e.what());
    }
  }
  ChosenCalibration chosen = choose_calibration(source, device_name, store.get());
  if (!chosen.warning.empty())
    std::fprintf(stderr, "gemmtune: warning: %s\n", chosen.warning.c_str());
  return chosen;
}

std::unique_ptr<Evaluator> make_evaluator(const EvaluatorOptions& o, const Problem& p) {
  if (!o.replay.empty()) {
    // A workload replays many problems from one file: it is read once.
    static std::map<std::string, std::vector<Attempt>> read;
    if (!read.count(o.replay)) {
      CsvImportReport report;
      read[o.replay] = read_attempts_csv(read_text_file(o.replay, "replay file"), report);
      if (!report.rejected.empty())
        std::fprintf(stderr, "replay: %zu unreadable rows left out (first: %s)\n",
                     report.rejected.size(), report.rejected.front().c_str());
    }
    std::vector<Evaluation> recorded;
    for (const Attempt& at : read[o.replay])
      if (at.problem == p) recorded.push_back(evaluation_from(at));
    if (recorded.empty()) throw InputError("the replay file has no attempt of " + p.shape_id());
    return std::make_unique<ReplayEvaluator>(find_builtin_device(o.gpu), recorded, o.replay_delay);
  }
  if (cuda_device_count() == 0)
    throw InputError(
        "no CUDA GPU on this machine: tune and sweep measure on one (or replay a recording with "
        "--replay FILE); `gemmtune predict` ranks without a GPU");
  TimingOptions timing;
  timing.repetitions = o.repetitions;
  timing.counters = o.counters;
  timing.energy = o.energy;
  return std::make_unique<GpuEvaluator>("/proc/self/exe", timing, o.timeout);
}

namespace {

// predict --compiled-shortlist: the ranking's first N and the calibration's proven kernels
// (with_proven) compiled and ordered again, predicted with the compiler's registers; those ruled
// out leave the list, and the uncompiled rest (ranked deeper by N, so that the list stays full)
// follows with estimated registers.
void compile_shortlist(const PredictRequest& a, PredictResult& r) {
  const size_t n = std::min(r.ranking.top.size(), size_t(a.compiled_shortlist));
  std::vector<KernelConfig> first;
  for (size_t i = 0; i < n; ++i) first.push_back(r.ranking.top[i].config);
  first = with_proven(r.problem, r.device, r.calibration.coefficients, std::move(first));
  r.proven = int(first.size() - n);
  std::vector<Ranked> top;
  for (const auto& c : rank_with_compiler(r.problem, r.device, first, r.calibration.coefficients,
                                          BatchKind::Strided, CompileCache(a.cache))) {
    if (c.ruled_out) {
      ++r.ruled_out;
      continue;
    }
    top.push_back(
        {c.config, gemmtune::predict(r.problem, r.device, c.config, r.calibration.coefficients,
                                     c.info.registers > 0 ? c.info.registers : -1)});
  }
  if (top.empty())
    throw InputError("none of the model's first " + std::to_string(first.size()) +
                     " configurations for " + r.problem.shape_id() + " compiled for " +
                     r.device.arch() +
                     " without failing or spilling heavily (is NVRTC there, and does it know " +
                     r.device.arch() + "?)");
  top.insert(top.end(), r.ranking.top.begin() + long(n), r.ranking.top.end());
  if (top.size() > size_t(a.top)) top.resize(size_t(a.top));
  r.compiled = int(n);
  r.ranking.top = std::move(top);
}

}  // namespace

PredictResult predict(const PredictRequest& a) {
  PredictResult r;
  r.problem = a.problem.problem();
  r.device = device_named(a.gpu);
  r.calibration = calibration_for(a.db, r.device.name, a.calibration);
  r.calibrated = !(r.calibration.coefficients == ModelCoefficients{});
  if (a.compiled_shortlist < 0 || a.compiled_shortlist > 4096)
    throw InputError("--compiled-shortlist = " + std::to_string(a.compiled_shortlist) +
                     " must be 0 (none) to 4096");
  if (!a.configs.empty()) {
    if (a.shortlist) throw InputError("--config and --shortlist do not go together");
    if (a.compiled_shortlist > 0)
      throw InputError("--config and --compiled-shortlist do not go together");
    const auto start = std::chrono::steady_clock::now();
    for (const auto& id : a.configs) {
      const KernelConfig c = KernelConfig::parse(id);
      if (auto v = check_hard(r.problem, r.device, c))
        throw InputError("configuration " + c.id() + " breaks " + v->message);
      r.ranking.top.push_back(
          {c, gemmtune::predict(r.problem, r.device, c, r.calibration.coefficients)});
    }
    r.ranking.evaluated = std::int64_t(r.ranking.top.size());
    r.ranking.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  if (a.top < 1) throw InputError("--top = " + std::to_string(a.top) + " must be at least 1");
  if (a.shortlist && a.compiled_shortlist > 0)
    throw InputError("--shortlist and --compiled-shortlist do not go together");
  // The shortlist draws from as deep a ranking as tune's does.
  const int depth = a.shortlist ? std::max(2048, a.top * 32) : a.top + a.compiled_shortlist;
  r.ranking = rank_space(r.problem, r.device, depth, r.calibration.coefficients,
                         SpaceDomain::named(a.domain));
  if (a.shortlist) r.ranking = as_shortlist(std::move(r.ranking), a.top);
  if (r.ranking.top.empty())
    throw InputError("no configuration of the space survives the constraints for " +
                     r.problem.shape_id() + " on " + r.device.name);
  if (a.compiled_shortlist > 0) compile_shortlist(a, r);
  return r;
}

std::vector<CompiledCandidate> rank_with_compiler(const Problem& p, const DeviceSpec& d,
                                                  const std::vector<KernelConfig>& ranked,
                                                  const ModelCoefficients& k, BatchKind kind,
                                                  const CompileCache& cache) {
  std::vector<CompileJob> jobs;
  for (const auto& c : ranked) jobs.push_back({c, p.precision, p.op_a, p.op_b, kind});
  std::vector<CompiledInfo> info;
  for (const auto& result : compile_many(jobs, d.arch(), &cache)) info.push_back(result.info());
  std::vector<CompiledCandidate> out;
  std::vector<bool> kept(ranked.size(), false);
  for (const size_t i : compiled_order(p, d, ranked, info, k)) {
    kept[i] = true;
    out.push_back({ranked[i], info[i], false});
  }
  for (size_t i = 0; i < ranked.size(); ++i)
    if (!kept[i]) out.push_back({ranked[i], info[i], true});
  return out;
}

nlohmann::json to_json(const Ranked& r, int rank) {
  const Prediction& p = r.prediction;
  return {{"rank", rank},
          {"config", r.config.id()},
          {"time_us", p.time_s * 1e6},
          {"gflops", p.gflops},
          {"occupancy", p.occ.fraction},
          {"blocks_per_sm", p.occ.blocks_per_sm},
          {"occupancy_limit", to_string(p.occ.limit)},
          {"registers", p.registers},
          {"smem_bytes", p.smem_bytes},
          {"limit", to_string(p.limit)},
          {"terms_us",
           {{"compute", p.t_compute * 1e6},
            {"shared", p.t_smem * 1e6},
            {"issue", p.t_issue * 1e6},
            {"latency", p.t_latency * 1e6},
            {"l2", p.t_l2 * 1e6},
            {"dram", p.t_dram * 1e6},
            {"launch", p.t_launch * 1e6}}},
          {"wave_efficiency", p.wave_efficiency},
          {"dram_bytes", p.dram_bytes},
          {"why", p.why()}};
}

nlohmann::json to_json(const PredictResult& r) {
  nlohmann::json out = {
      {"problem", r.problem.shape_id()},  {"device", r.device.name},
      {"evaluated", r.ranking.evaluated}, {"seconds", r.ranking.seconds},
      {"calibrated", r.calibrated},       {"calibration", r.calibration.description},
      {"compiled", r.compiled},           {"proven", r.proven},
      {"ruled_out", r.ruled_out},         {"top", nlohmann::json::array()}};
  for (size_t i = 0; i < r.ranking.top.size(); ++i)
    out["top"].push_back(to_json(r.ranking.top[i], int(i) + 1));
  return out;
}

namespace {
// The first parameter whose value the domain does not enumerate for the problem's precision.
std::optional<std::string> outside_domain(const SpaceDomain& domain, const std::string& name,
                                          Precision p, const KernelConfig& c) {
  for (const TuningParameter& t : tuning_parameters()) {
    if (!t.domain) continue;  // follows from others
    const std::vector<int> values = t.values_for(domain.*t.domain, p);
    const int v = t.get(c);
    if (std::find(values.begin(), values.end(), v) != values.end()) continue;
    std::string list;
    for (int x : values) list += (list.empty() ? "" : ", ") + std::to_string(x);
    return std::string(t.token) + std::to_string(v) + " is not among the " + name + " domain's " +
           t.token + " values (" + list + ")";
  }
  return std::nullopt;
}

SpacePlace place_in_space(const Problem& problem, const DeviceSpec& device,
                          const SpaceDomain& domain, const std::string& domain_name,
                          const ConstraintOptions& options, const KernelConfig& c) {
  SpacePlace place{c, "", false, ""};
  if (auto why = outside_domain(domain, domain_name, problem.precision, c)) {
    place.stage = "domain";
    place.reason = *why;
    return place;
  }
  const Stage s = first_failing_stage(problem, device, domain, options, c);
  if (s == Stage::Count) return place;
  place.stage = stage_name(s);
  place.hard = stage_kind(s) == StageKind::Hard;
  if (const auto v = check_hard(problem, device, c); place.hard && v && v->stage == s)
    place.reason = v->message;
  return place;
}
}  // namespace

SpaceResult space(const SpaceRequest& a) {
  SpaceResult r;
  r.problem = a.problem.problem();
  r.device = device_named(a.gpu);
  ConstraintOptions options;
  for (const auto& name : a.disable) options.enabled[size_t(parse_stage(name))] = false;
  const SpaceDomain domain = SpaceDomain::named(a.domain);
  std::vector<KernelConfig> why;  // parsed first: a bad id fails before the walk
  for (const auto& id : a.why) why.push_back(KernelConfig::parse(id));
  r.funnel = enumerate_space(r.problem, r.device, domain, options, [&](const KernelConfig& c) {
    if (a.list) r.configs.push_back(c);
  });
  for (const KernelConfig& c : why)
    r.places.push_back(place_in_space(r.problem, r.device, domain, a.domain, options, c));
  return r;
}

nlohmann::json to_json(const SpaceResult& r) {
  nlohmann::json out = {{"problem", r.problem.shape_id()},
                        {"device", r.device.name},
                        {"raw", r.funnel.raw},
                        {"stages", nlohmann::json::array()}};
  for (const auto& row : r.funnel.rows)
    out["stages"].push_back({{"stage", stage_name(row.stage)},
                             {"kind", stage_kind(row.stage) == StageKind::Hard ? "hard" : "soft"},
                             {"remaining", row.remaining}});
  for (const auto& c : r.configs) out["configs"].push_back(c.id());
  for (const auto& w : r.places)
    out["why"].push_back({{"config", w.config.id()},
                          {"kept", w.stage.empty()},
                          {"stage", w.stage},
                          {"kind", w.stage.empty() || w.stage == "domain" ? ""
                                   : w.hard                               ? "hard"
                                                                          : "soft"},
                          {"reason", w.reason}});
  return out;
}

std::string source(const SourceRequest& a) {
  const KernelConfig c = KernelConfig::parse(a.config);
  ProblemOptions po = a.problem;
  // Divisibility and alignment depend on the problem; without sizes check a square 1024 one.
  if (po.m == 0) po.m = 1024;
  if (po.n == 0) po.n = 1024;
  if (po.k == 0) po.k = 1024;
  const Problem p = po.problem();
  if (a.check) {
    if (auto v = check_hard(p, device_named(a.gpu), c))
      throw InputError("configuration " + c.id() + " breaks " + v->message);
  }
  return render_source(c, p.precision, p.op_a, p.op_b, parse_batch_kind(a.batch_kind));
}

nlohmann::json devices() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : builtin_devices()) {
    nlohmann::json spec = nlohmann::json::parse(device_to_json(d));
    for (Precision p : {Precision::S, Precision::D, Precision::C, Precision::Z})
      spec["peak_gflops"][std::string(1, char(std::tolower(to_char(p))))] = d.peak_gflops(p);
    out.push_back(std::move(spec));
  }
  return out;
}

nlohmann::json counters_beside_model(const Problem& problem, const std::string& gpu,
                                     const std::string& config, const nlohmann::json& counters,
                                     int registers, const std::string& db,
                                     const std::string& calibration) {
  if (!counters.is_object())
    throw InputError("counters must be an object of metric values, not " + counters.dump());
  CounterValues values;
  for (const auto& [name, value] : counters.items()) {
    if (!value.is_number())
      throw InputError("counter " + name + " is " + value.dump() + ", not a number");
    values.emplace_back(name, value.get<double>());
  }
  const DeviceSpec device = device_named(gpu);
  const ChosenCalibration chosen = calibration_for(db, device.name, calibration);
  const Prediction prediction =
      gemmtune::predict(problem, device, KernelConfig::parse(config), chosen.coefficients,
                        registers > 0 ? registers : -1);
  nlohmann::json rows = nlohmann::json::array();
  for (const CounterComparison& c : compare_with_model(values, prediction))
    rows.push_back(
        {{"quantity", c.quantity},
         {"metrics", c.metrics},
         {"counter", std::isnan(c.counter) ? nlohmann::json(nullptr) : nlohmann::json(c.counter)},
         {"model", c.model}});
  return rows;
}

nlohmann::json attempt_rows(const std::string& db_path, const std::string& device,
                            const std::optional<Problem>& problem) {
  if (!std::filesystem::exists(db_path)) throw InputError("no store at '" + db_path + "'");
  const Database db(db_path);
  nlohmann::json rows = nlohmann::json::array();
  for (const Attempt& a : db.attempts(device, problem)) rows.push_back(row_of(a));
  return rows;
}

nlohmann::json reference_rows(const std::string& db_path, const std::string& device) {
  if (!std::filesystem::exists(db_path)) throw InputError("no store at '" + db_path + "'");
  const Database db(db_path);
  nlohmann::json rows = nlohmann::json::array();
  for (const Reference& r : db.references(device))
    rows.push_back(with_problem(reference_json(r), r.problem));
  return rows;
}

nlohmann::json best_rows(const std::string& db_path, const std::string& device) {
  if (!std::filesystem::exists(db_path)) throw InputError("no store at '" + db_path + "'");
  const Database db(db_path);
  // One pass over the attempts: the fastest ok one per device and problem, in first-seen order.
  std::vector<Attempt> best;
  std::map<std::string, size_t> index;
  for (Attempt& a : db.attempts(device)) {
    if (a.status != "ok") continue;
    const std::string key = a.device + "/" + a.problem.shape_id() + "/" +
                            std::to_string(a.problem.lda) + "/" + std::to_string(a.problem.ldb) +
                            "/" + std::to_string(a.problem.ldc);
    const auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, best.size());
      best.push_back(std::move(a));
    } else if (a.median_s < best[it->second].median_s) {
      best[it->second] = std::move(a);
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const Attempt& a : best) rows.push_back(row_of(a));
  return rows;
}

CsvImportReport import_attempts(const std::string& db_path, const std::string& path) {
  const std::string text = read_text_file(path, "attempts file");
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && text[first] == '[';
  CsvImportReport report;
  const std::vector<Attempt> good =
      json ? read_attempts_json(text, report) : read_attempts_csv(text, report);
  if (good.empty())
    throw InputError("'" + path + "' holds no valid attempt" +
                     (report.rejected.empty() ? "" : " (first: " + report.rejected.front() + ")") +
                     "; the store is unchanged");
  Database db(db_path);
  db.add_all(good);
  report.imported = int(good.size());
  return report;
}

}  // namespace gemmtune::app
