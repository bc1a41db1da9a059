// gemmtune report: the HTML report of a store, made by the Python package (matplotlib):
// `python -m gemmtune.report` with the same options, run in place of this process.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli/options.hpp"

namespace gemmtune::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string db = Database::default_path(), output = "report.html", gpu = "H100-SXM", device;
  std::string calibration = "auto";
};

// The package beside this command: build/python in the build tree, the directory above when
// the command is installed inside the package (pip install .).
std::string package_root(const fs::path& exe_dir) {
  for (const fs::path& root : {exe_dir / "python", exe_dir.parent_path()})
    if (fs::exists(root / "gemmtune" / "report.py")) return root.string();
  return "";
}

// $GEMMTUNE_PYTHON, else the repository's .venv (scripts/setup) for a build tree, else the
// environment the package is installed in (ENV/lib/pythonX.Y/site-packages/gemmtune), else
// python3.
std::string python_for(const fs::path& exe_dir) {
  if (const char* p = std::getenv("GEMMTUNE_PYTHON"); p && *p) return p;
  for (const fs::path& python :
       {exe_dir.parent_path() / ".venv" / "bin" / "python",
        exe_dir.parent_path().parent_path().parent_path().parent_path() / "bin" / "python"})
    if (fs::exists(python)) return python.string();
  return "python3";
}

[[noreturn]] void run(const ReportArgs& a) {
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe").parent_path();
  if (const std::string root = package_root(exe_dir); !root.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = root + (old && *old ? ":" + std::string(old) : "");
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  const std::string python = python_for(exe_dir);
  std::vector<std::string> args = {
      python,  "-m",  "gemmtune.report", "--db",       a.db, "-o", a.output,
      "--gpu", a.gpu, "--calibration",   a.calibration};
  if (!a.device.empty()) args.insert(args.end(), {"--device", a.device});
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  throw InputError("cannot run '" + python + "' for the report (set GEMMTUNE_PYTHON to a Python " +
                   "with the gemmtune package and matplotlib)");
}

}  // namespace

void register_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report", "one self-contained HTML page of plots of a store (python -m gemmtune.report)");
  cmd->add_option("--db", a->db, "the store")->capture_default_str();
  cmd->add_option("--output,-o", a->output, "the HTML file")->capture_default_str();
  cmd->add_option("--gpu,-g", a->gpu, "built-in spec of the roofline and the model")
      ->capture_default_str();
  cmd->add_option("--device", a->device, "only this store device's attempts");
  add_calibration_option(*cmd, a->calibration);
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
