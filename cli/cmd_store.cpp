// gemmtune show / export / import: the store from the command line.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/options.hpp"
#include "store/store.hpp"

namespace gemmtune::cli {
namespace {

struct StoreArgs {
  std::string db = Database::default_path();
  std::string device;
  std::string format = "csv";
  std::string output, input;
  bool all = false;
  bool references = false;  // export the reference (cuBLAS) timings instead of the attempts
  ProblemOptions problem;
  BundleArgs bundle;
};

void run_show(const StoreArgs& a) {
  Database db(a.db);
  const bool one = a.problem.m > 0;
  std::vector<Problem> problems;
  if (one)
    problems.push_back(a.problem.problem());
  else
    problems = db.problems(a.device);
  if (problems.empty()) {
    std::printf("the store %s has no attempts%s\n", a.db.c_str(),
                a.device.empty() ? "" : (" on " + a.device).c_str());
    return;
  }
  for (const auto& p : problems) {
    const auto attempts = db.attempts(a.device, p);
    int ok = 0;
    for (const auto& at : attempts) ok += at.status == "ok";
    const auto best = db.best(a.device, p);
    std::printf("%-32s %5zu attempts, %5d ok", p.shape_id().c_str(), attempts.size(), ok);
    if (best)
      std::printf("  best %9.2f us %8.0f GFLOP/s  %s", best->median_s * 1e6, best->gflops,
                  best->config.id().c_str());
    const auto references = db.references(a.device, p);
    if (!references.empty()) std::printf("  (cuBLAS %.2f us)", references.back().time_s * 1e6);
    std::printf("\n");
    if (a.all)
      for (const auto& at : attempts)
        std::printf("    %-14s %10.2f us %8.0f GFLOP/s  %s %s\n", at.status.c_str(),
                    at.median_s * 1e6, at.gflops, at.config.id().c_str(),
                    at.error.substr(0, 80).c_str());
  }
}

void run_export(StoreArgs& a) {
  if (!a.bundle.dir.empty()) {
    a.bundle.set.db = a.db;
    return export_bundle(a.bundle);
  }
  Database db(a.db);
  if (a.format == "store") {
    if (a.output.empty()) throw InputError("--format store needs --output FILE");
    db.backup_to(a.output);
    return;
  }
  if (a.references && a.format != "json")
    throw InputError("--references is written as JSON (--format json), not as " + a.format);
  const std::string text = a.references         ? db.export_references_json(a.device)
                           : a.format == "json" ? db.export_json(a.device)
                           : a.format == "csv"
                               ? db.export_csv(a.device)
                               : throw InputError("format '" + a.format + "' is not csv or json");
  if (a.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return;
  }
  std::ofstream out(a.output);
  out << text;
  if (!out) throw InputError("cannot write '" + a.output + "'");
}

void run_import(const StoreArgs& a) {
  const CsvImportReport r = app::import_attempts(a.db, a.input);
  std::printf("imported %d attempts, rejected %zu rows\n", r.imported, r.rejected.size());
  if (!r.unknown_columns.empty())
    std::fprintf(stderr, "ignored unknown columns: %s\n", join(r.unknown_columns, ", ").c_str());
  const std::size_t shown = std::min<std::size_t>(r.rejected.size(), 20);
  for (std::size_t j = 0; j < shown; ++j)
    std::fprintf(stderr, "rejected %s\n", r.rejected[j].c_str());
  if (shown < r.rejected.size())
    std::fprintf(stderr, "... and %zu more rejected rows\n", r.rejected.size() - shown);
}

}  // namespace

void register_store(CLI::App& app) {
  auto s = std::make_shared<StoreArgs>();
  auto* show =
      app.add_subcommand("show", "the store: best per problem, or every attempt with --all");
  show->add_option("--db", s->db, "the store")->capture_default_str();
  show->add_option("--device", s->device, "only this device");
  show->add_flag("--all", s->all, "every attempt");
  add_problem_options(*show, s->problem, false);
  show->callback([s] { run_show(*s); });

  auto e = std::make_shared<StoreArgs>();
  auto* exp = app.add_subcommand(
      "export",
      "every attempt as CSV (the seeds' format) or JSON, or a consistent copy of the "
      "store itself (--format store, safe while another process writes it)");
  exp->add_option("--db", e->db, "the store")->capture_default_str();
  exp->add_option("--device", e->device, "only this device");
  exp->add_option("--format,-f", e->format, "csv, json or store")->capture_default_str();
  exp->add_option("--output,-o", e->output, "file (default: standard output)");
  exp->add_flag("--references", e->references,
                "the reference timings (cuBLAS, from tune, sweep, record and measure) instead of "
                "the attempts; with --format json");
  exp->add_option("--bundle", e->bundle.dir,
                  "instead: write the kernel set of a workload (--problems, --size) to this "
                  "directory as cubins and bundle.json, for gemm() without the store or NVRTC");
  exp->add_option("--problems", e->bundle.problems, "with --bundle: the workload");
  exp->add_option("--size,-K", e->bundle.set.size, "with --bundle: kernels in the set")
      ->capture_default_str();
  exp->add_option("--arch", e->bundle.archs,
                  "with --bundle: architectures, comma-separated (default: the --gpu spec's)");
  exp->add_option("--gpu,-g", e->bundle.set.gpu, "with --bundle: the spec the set is chosen on")
      ->capture_default_str();
  add_domain_option(*exp, e->bundle.set.domain);
  exp->callback([e] { run_export(*e); });

  auto i = std::make_shared<StoreArgs>();
  auto* imp = app.add_subcommand(
      "import", "attempts from a CSV or export's JSON; bad rows are reported, good rows kept");
  imp->add_option("--db", i->db, "the store")->capture_default_str();
  imp->add_option("file", i->input, "CSV or JSON file")->required();
  imp->callback([i] { run_import(*i); });
}

}  // namespace gemmtune::cli
