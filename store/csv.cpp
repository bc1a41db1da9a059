// The seeds' CSV: one row per attempt (inputs, then status, error, time, GFLOP/s, then the rest).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "store/store.hpp"

namespace gemmtune {
namespace {

const char* const kLeading[] = {"device", "precision", "op_a", "op_b",  "m",     "n",   "k",
                                "lda",    "ldb",       "ldc",  "batch", "alpha", "beta"};
const char* const kTrailing[] = {
    "status",    "error",     "time_s",      "gflops",     "min_s",    "max_s",      "repetitions",
    "rel_error", "registers", "spill_bytes", "smem_bytes", "energy_j", "predicted_s"};
// The tuning run's columns, which files written before runs were kept lack.
const char* const kRun[] = {"strategy", "run", "elapsed_s"};

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += "\"\"";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError("unterminated quote");
  return fields;
}

double parse_double(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw InputError(what + " '" + text + "' is not a number");
  }
}

}  // namespace

std::string csv_header() {
  std::vector<std::string> cols(std::begin(kLeading), std::end(kLeading));
  for (const auto& c : config_csv_header()) cols.push_back(c);
  cols.insert(cols.end(), std::begin(kTrailing), std::end(kTrailing));
  cols.insert(cols.end(), std::begin(kRun), std::end(kRun));
  return join(cols, ",");
}

std::string to_csv_row(const Attempt& a) {
  std::ostringstream s;
  s.precision(9);
  const Problem& p = a.problem;
  s << quote(a.device) << ',' << to_char(p.precision) << ',' << to_char(p.op_a) << ','
    << to_char(p.op_b) << ',' << p.m << ',' << p.n << ',' << p.k << ',' << p.lda << ',' << p.ldb
    << ',' << p.ldc << ',' << p.batch << ',' << p.alpha.re << ',' << p.beta.re;
  for (int v : config_csv_values(a.config)) s << ',' << v;
  s << ',' << a.status << ',' << quote(a.error) << ',' << a.median_s << ',' << a.gflops << ','
    << a.min_s << ',' << a.max_s << ',' << a.repetitions << ',' << a.rel_error << ',' << a.registers
    << ',' << a.spill_bytes << ',' << a.smem_bytes << ',' << a.energy_j << ',' << a.predicted_s
    << ',' << quote(a.strategy) << ',' << quote(a.run) << ',';
  if (a.elapsed_s) s << *a.elapsed_s;
  return s.str();
}

Attempt parse_csv_row(const std::string& line, const std::vector<std::string>& header) {
  const auto fields = split_csv(line);
  if (fields.size() != header.size())
    throw InputError("has " + std::to_string(fields.size()) + " fields, the header has " +
                     std::to_string(header.size()));
  auto get = [&](const std::string& name) -> const std::string& {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return fields[i];
    throw InputError("the header lacks the column '" + name + "'");
  };
  auto num = [&](const std::string& name) { return parse_double(get(name), name); };
  auto integer = [&](const std::string& name) { return parse_int(get(name), name); };
  Attempt a;
  a.device = get("device");
  if (a.device.empty()) throw InputError("device is empty");
  Problem& p = a.problem;
  p.precision = parse_precision(get("precision"));
  p.op_a = parse_op(get("op_a"));
  p.op_b = parse_op(get("op_b"));
  p.m = integer("m");
  p.n = integer("n");
  p.k = integer("k");
  p.lda = integer("lda");
  p.ldb = integer("ldb");
  p.ldc = integer("ldc");
  p.batch = integer("batch");
  p.alpha = {num("alpha"), 0.0};
  p.beta = {num("beta"), 0.0};
  p.validate();
  std::string id;
  for (const auto& key : config_csv_header()) {
    // Files written before the tensor-core, cp.async, split-K and vector-C kernels lack their
    // keys: all were 0.
    if (config_key_optional(key) && std::find(header.begin(), header.end(), key) == header.end())
      continue;
    id += (id.empty() ? "" : "_") + key + get(key);
  }
  a.config = KernelConfig::parse(id);
  a.status = get("status");
  static const char* const statuses[] = {"ok",    "compile_error", "launch_error", "execute_error",
                                         "wrong", "timeout"};
  bool known = false;
  for (const char* s : statuses) known = known || a.status == s;
  if (!known)
    throw InputError("status '" + a.status +
                     "' is not one of ok, compile_error, launch_error, "
                     "execute_error, wrong, timeout");
  a.error = get("error");
  a.median_s = num("time_s");
  a.gflops = num("gflops");
  if (a.status == "ok" && !(a.median_s > 0)) throw InputError("an ok attempt needs time_s > 0");
  a.min_s = num("min_s");
  a.max_s = num("max_s");
  a.repetitions = int(integer("repetitions"));
  a.rel_error = num("rel_error");
  a.registers = int(integer("registers"));
  a.spill_bytes = int(integer("spill_bytes"));
  a.smem_bytes = integer("smem_bytes");
  a.energy_j = num("energy_j");
  a.predicted_s = num("predicted_s");
  auto has = [&](const char* name) {
    return std::find(header.begin(), header.end(), name) != header.end();
  };
  if (has("strategy")) a.strategy = get("strategy");
  if (has("run")) a.run = get("run");
  if (has("elapsed_s") && !get("elapsed_s").empty()) a.elapsed_s = num("elapsed_s");
  return a;
}

std::vector<Attempt> read_attempts_csv(const std::string& text, CsvImportReport& report) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError("CSV is empty: expected a header line");
  const std::vector<std::string> header = split_csv(line);
  std::vector<std::string> known = split_csv(csv_header());
  known.push_back("counters");
  for (const auto& column : header)
    if (std::find(known.begin(), known.end(), column) == known.end())
      report.unknown_columns.push_back(column);
  std::vector<Attempt> good;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    try {
      good.push_back(parse_csv_row(line, header));
    } catch (const InputError& e) {
      report.rejected.push_back("line " + std::to_string(number) + ": " + e.what());
    }
  }
  return good;
}

std::vector<CalibrationSample> recorded_samples(const std::vector<std::string>& paths) {
  std::vector<Attempt> attempts;
  for (const auto& path : paths) {
    CsvImportReport report;
    auto part = read_attempts_csv(read_text_file(path, "recording"), report);
    if (!report.rejected.empty())
      std::fprintf(stderr, "%s: %zu unreadable rows left out (first: %s)\n", path.c_str(),
                   report.rejected.size(), report.rejected.front().c_str());
    attempts.insert(attempts.end(), std::make_move_iterator(part.begin()),
                    std::make_move_iterator(part.end()));
  }
  return calibration_samples(attempts);
}

}  // namespace gemmtune
