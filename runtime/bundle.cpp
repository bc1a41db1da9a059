// Bundles: the kernel set's table as JSON beside its cubins, read back without the store.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/model.hpp"
#include "profiler/profiler.hpp"
#include "runtime/runtime.hpp"
#include "runtime/shape_distance.hpp"
#include "search/search.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;
constexpr const char* kTable = "bundle.json";
constexpr const char* kFormat = "gemmtune kernel bundle";

std::string letter(char c) {
  return std::string(1, char(std::tolower(c)));
}

}  // namespace

void write_bundle_table(const std::string& dir, const Bundle& b) {
  nlohmann::json kernels = nlohmann::json::array(), problems = nlohmann::json::array();
  for (const BundleKernel& k : b.kernels) {
    nlohmann::json cubins = nlohmann::json::object();
    for (const auto& [arch, file] : k.cubins) cubins[arch] = file;
    kernels.push_back({{"config", k.config.id()},
                       {"precision", letter(to_char(k.precision))},
                       {"op_a", letter(to_char(k.op_a))},
                       {"op_b", letter(to_char(k.op_b))},
                       {"cubins", cubins}});
  }
  for (const BundleProblem& p : b.problems) {
    nlohmann::json row = {{"shape", p.problem.shape_id()},
                          {"problem", nlohmann::json::parse(problem_to_json(p.problem))}};
    row["weight"] = p.weight;
    row["kernel"] = p.kernel;
    row["time_us"] = p.time_s * 1e6;
    row["predicted"] = p.predicted;
    problems.push_back(std::move(row));
  }
  const nlohmann::json table = {{"format", kFormat},
                                {"model_version", b.model_version},
                                {"device", b.device},
                                {"archs", b.archs},
                                {"kernels", kernels},
                                {"problems", problems},
                                {"nearest_shape_rule",
                                 "the kernel of the exact shape, else of the nearest shape of the "
                                 "same precision and ops (sum of |log| size ratios) valid here"}};
  std::ofstream out(fs::path(dir) / kTable);
  out << table.dump(2) << "\n";
  if (!out) throw InputError("cannot write " + (fs::path(dir) / kTable).string());
}

Bundle read_bundle(const std::string& dir, const std::string& arch) {
  const fs::path path = fs::path(dir) / kTable;
  std::ifstream in(path);
  if (!in) throw InputError("no kernel bundle at '" + dir + "' (" + path.string() + " is missing)");
  nlohmann::json j;
  Bundle b;
  try {
    j = nlohmann::json::parse(in);
    if (j.at("format") != kFormat) throw InputError("it is not a gemmtune kernel bundle");
    b.device = j.at("device");
    b.model_version = j.at("model_version");
    b.archs = j.at("archs").get<std::vector<std::string>>();
    for (const auto& k : j.at("kernels")) {
      BundleKernel kernel{KernelConfig::parse(k.at("config").get<std::string>()),
                          parse_precision(k.at("precision").get<std::string>()),
                          parse_op(k.at("op_a").get<std::string>()),
                          parse_op(k.at("op_b").get<std::string>()),
                          {}};
      for (const auto& [a, file] : k.at("cubins").items())
        kernel.cubins.emplace_back(a, file.get<std::string>());
      b.kernels.push_back(std::move(kernel));
    }
    for (const auto& p : j.at("problems"))
      b.problems.push_back({problem_from_json(p.at("problem").dump()), p.at("weight"),
                            p.at("kernel"), p.at("time_us").get<double>() * 1e-6,
                            p.at("predicted")});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + " is not a readable bundle table: " + e.what());
  }
  if (b.model_version != kModelVersion)
    throw InputError("the bundle at '" + dir + "' was made with model version " +
                     std::to_string(b.model_version) + "; this gemmtune has model version " +
                     std::to_string(kModelVersion) + " (export it again)");
  if (std::find(b.archs.begin(), b.archs.end(), arch) == b.archs.end())
    throw InputError("the bundle at '" + dir + "' holds cubins for " + join(b.archs, ", ") +
                     ", not for this GPU's " + arch);
  for (const BundleProblem& p : b.problems)
    if (p.kernel >= b.kernels.size())
      throw InputError(path.string() + ": problem " + p.problem.shape_id() + " names kernel " +
                       std::to_string(p.kernel) + " of " + std::to_string(b.kernels.size()));
  for (const BundleKernel& k : b.kernels) {
    const auto it = std::find_if(k.cubins.begin(), k.cubins.end(),
                                 [&](const auto& c) { return c.first == arch; });
    if (it == k.cubins.end() || !fs::exists(fs::path(dir) / it->second))
      throw InputError("the bundle at '" + dir + "' lacks the " + arch + " cubin of " +
                       k.config.id());
  }
  return b;
}

DispatchChoice choose_from_bundle(const Bundle& b, const Problem& p, const DeviceSpec& d) {
  const BundleProblem* chosen = nullptr;
  double nearest = std::numeric_limits<double>::infinity();
  for (const BundleProblem& x : b.problems) {
    const BundleKernel& k = b.kernels[x.kernel];
    if (k.precision != p.precision || k.op_a != p.op_a || k.op_b != p.op_b) continue;
    if (x.problem == p) return {k.config, DispatchSource::Stored, x.problem.shape_id(), "", "", {}};
    const double distance = detail::shape_distance(x.problem, p);
    if (distance < nearest && !check_hard(p, d, k.config)) {
      nearest = distance;
      chosen = &x;
    }
  }
  if (!chosen)
    throw InputError("no kernel of the bundle can run " + p.shape_id() + " (no valid kernel of " +
                     "its precision and op shape)");
  return {b.kernels[chosen->kernel].config, DispatchSource::NearestShape,
          chosen->problem.shape_id(),       "",
          "the bundle's nearest shape",     {}};
}

}  // namespace gemmtune
