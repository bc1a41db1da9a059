// bench/model_accuracy: how well the model ranks recorded measurements, before and after
// calibration, on problems held out of the fit: k folds of problems drawn at random (the way a
// user meets unseen problems), or leave-one-class-out.
//   model_accuracy [FILE.csv ...] [--gpu H100-SXM] [--by problem|class] [--folds K|all] [--seed S]
//   model_accuracy [FILE.csv ...] --calibration FILE.json   (a calibration fitted elsewhere)
//   ... [--registers compiled|estimated|shortlist]   (the compiler's counts, as tune re-ranks;
//     predict's estimate; or measure --compiled-shortlist's: the estimate's first
//     kCompiledShortlist, or --shortlist N, re-ranked with the compiler's counts)
//   model_accuracy [FILE.csv ...] --registers compare   (fits on either count, ranked by either
//     and by the estimate with a compiled shortlist re-ranked, on the same folds)
//   model_accuracy [FILE.csv ...] --dump OUT.csv [--calibration FILE.json]   (the model's terms)
//   model_accuracy [FILE.csv ...] --picks DIR [--top 3] [--learned ...]   (each held-out problem's
//     zero-run picks over the whole space, for the GPU to measure beside its recorded best:
//     scripts/device-picks)
//   model_accuracy [FILE.csv ...] --learned depth=6,rounds=150,... [--learned ...]
//     [--held-out OUT.csv]   (every held-out measurement beside each setting's prediction)
//     (the learned correction's settings compared on the same folds, each fold's coefficients
//     and linear correction fitted once; keys: depth rounds eta subsample colsample min_child
//     fast_weight fast_scale rank rank_sigma rank_spread rank_step center pairs forest drop; a
//     setting may begin with bag=N: its trees fitted on a draw of 80% of the fold's training
//     problems)
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "model/model.hpp"
#include "search/search.hpp"
#include "store/store.hpp"

using namespace gemmtune;

namespace {

// Problems in k folds, the FP16/BF16/TF32 ones drawn apart from the rest: adding their recordings
// leaves the other problems' folds as they were without them, so both runs compare fold by fold.
// One draw over all where a family has fewer problems than folds (--folds all among them).
std::map<std::string, int> folds_by_family(const std::vector<CalibrationSample>& samples, int k,
                                           std::uint32_t seed) {
  std::vector<CalibrationSample> reduced, others;
  std::set<std::string> reduced_keys, other_keys;
  for (const auto& s : samples) {
    const bool r = is_reduced(s.problem.precision);
    (r ? reduced : others).push_back(s);
    (r ? reduced_keys : other_keys).insert(problem_key(s.problem));
  }
  if (reduced_keys.size() < std::size_t(k) || other_keys.size() < std::size_t(k))
    return k_fold_problems(samples, k, seed);
  std::map<std::string, int> folds = k_fold_problems(others, k, seed);
  folds.merge(k_fold_problems(reduced, k, seed));
  return folds;
}

void print(const char* title, const QualityReport& before, const QualityReport& after) {
  std::printf("%s\n%-28s %5s  %8s %8s  %8s %8s  %7s %7s  %s\n", title, "problem", "n", "rho0",
              "rho", "tau0", "tau", "regret0", "regret", "top1/5/10 short10 (calibrated)");
  std::map<std::string, RankQuality> b;
  for (const auto& q : before.problems) b[q.problem] = q;
  for (const auto& q : after.problems) {
    const auto& o = b[q.problem];
    std::printf("%-28s %5zu  %8.3f %8.3f  %8.3f %8.3f  %7.3f %7.3f  %d/%d/%d %d\n",
                q.problem.c_str(), q.samples, o.spearman, q.spearman, o.kendall, q.kendall,
                o.regret, q.regret, q.top1, q.top5, q.top10, q.shortlist10);
  }
  std::printf(
      "%-28s %5s  %8.3f %8.3f  %8.3f %8.3f  %7.3f %7.3f  top1 %.2f->%.2f top5 %.2f->%.2f "
      "top10 %.2f->%.2f shortlist10 %.2f->%.2f\n\n",
      "median", "", before.median_spearman, after.median_spearman, before.median_kendall,
      after.median_kendall, before.median_regret, after.median_regret, before.top1_rate,
      after.top1_rate, before.top5_rate, after.top5_rate, before.top10_rate, after.top10_rate,
      before.shortlist10_rate, after.shortlist10_rate);
}

// One report's peak scores and correlations, as a row of the fold tables.
void print_summary_row(const std::string& fold, const char* model, const QualityReport& q) {
  std::printf(
      "%-6s %8zu  %-12s %8.3f %8.3f  %8.3f %8.3f  %8.3f %8.3f  %8.3f %8.3f  %8.3f %8.3f %5zu\n",
      fold.c_str(), q.problems.size(), model, q.median_pick_fraction, q.p10_pick_fraction,
      q.median_top5_fraction, q.p10_top5_fraction, q.median_short5_fraction, q.p10_short5_fraction,
      q.median_spearman, q.median_kendall, q.median_drawn_spearman, q.median_drawn_kendall,
      q.drawn_problems);
}

void print_summary_header() {
  // "drawn": over the configurations drawn from the domain, for the problems that hold them.
  std::printf("%-6s %8s  %-12s %8s %8s  %8s %8s  %8s %8s  %8s %8s  %8s %8s %5s\n", "fold",
              "problems", "model", "pick med", "pick p10", "top5 med", "top5 p10", "short5 m",
              "short5 p", "rho med", "tau med", "rho drwn", "tau drwn", "n");
}

// A fold's problems, each ranked by the uncalibrated (0) and by the fold's calibrated model.
void print_fold(const FoldQuality& f, int k) {
  std::printf("fold %d/%d: %zu problems held out (%zu samples), fitted on %zu samples in %.1f s\n",
              f.fold + 1, k, f.calibrated.problems.size(), f.held_samples, f.train_samples,
              f.fit_seconds);
  std::printf("%-36s %5s  %7s %7s  %7s %7s  %7s %7s  %7s %7s\n", "problem", "n", "pick0", "pick",
              "top5_0", "top5", "rho0", "rho", "tau0", "tau");
  std::map<std::string, RankQuality> before;
  for (const auto& q : f.uncalibrated.problems) before[q.problem] = q;
  for (const auto& q : f.calibrated.problems) {
    const auto& o = before[q.problem];
    std::printf("%-36s %5zu  %7.3f %7.3f  %7.3f %7.3f  %7.3f %7.3f  %7.3f %7.3f\n",
                q.problem.c_str(), q.samples, o.pick_fraction, q.pick_fraction, o.top5_fraction,
                q.top5_fraction, o.spearman, q.spearman, o.kendall, q.kendall);
  }
  print_summary_header();
  print_summary_row(std::to_string(f.fold + 1), "uncalibrated", f.uncalibrated);
  print_summary_row(std::to_string(f.fold + 1), "calibrated", f.calibrated);
  std::printf("\n");
}

// A report's problems by the GPU they were recorded on (keys "SPEC:problem"; "" without a
// spec), each group summarized.
std::map<std::string, QualityReport> by_gpu(const QualityReport& report) {
  std::map<std::string, QualityReport> out;
  for (const auto& q : report.problems) {
    const auto colon = q.problem.find(':');
    out[colon == std::string::npos ? "" : q.problem.substr(0, colon)].problems.push_back(q);
  }
  for (auto& [gpu, part] : out) summarize(part);
  return out;
}

// Where the problems were recorded on several GPUs: the pooled rows of each GPU's problems.
void print_by_gpu(const ProblemCrossValidation& cv) {
  auto uncalibrated = by_gpu(cv.uncalibrated), calibrated = by_gpu(cv.calibrated);
  if (calibrated.size() < 2) return;
  for (const auto& [gpu, report] : calibrated) {
    print_summary_row(gpu, "uncalibrated", uncalibrated[gpu]);
    print_summary_row(gpu, "calibrated", report);
  }
}

// k-fold cross-validation over problems, each fold printed as it is done, then all of them.
void by_problem(const DeviceSpec& device, const std::vector<CalibrationSample>& samples, int k,
                std::uint32_t seed, int shortlist) {
  const std::map<std::string, int> folds = folds_by_family(samples, k, seed);
  std::printf("held out by problem: %zu problems in %d folds (seed %u), %zu samples\n\n",
              folds.size(), k, seed, samples.size());
  std::vector<FoldQuality> done;
  for (int f = 0; f < k; ++f) {
    done.push_back(evaluate_fold(device, samples, folds, f, fit_fold, shortlist));
    print_fold(done.back(), k);
    std::fflush(stdout);
  }
  const ProblemCrossValidation cv = pool_folds(std::move(done));
  std::printf(
      "held out by problem, %d folds (seed %u): pick = best measured / measured of the model's "
      "top-1, top5 = best / fastest of its top 5; median and 10th percentile over problems\n",
      k, seed);
  print_summary_header();
  for (const auto& f : cv.folds) {
    print_summary_row(std::to_string(f.fold + 1), "uncalibrated", f.uncalibrated);
    print_summary_row(std::to_string(f.fold + 1), "calibrated", f.calibrated);
  }
  print_summary_row("all", "uncalibrated", cv.uncalibrated);
  print_summary_row("all", "calibrated", cv.calibrated);
  print_by_gpu(cv);
}

// Every sample with the uncalibrated model's terms (and a calibration's time, if given), as CSV
// for study elsewhere.
void dump(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
          const std::string& calibration, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write '" + path + "'");
  const ModelCoefficients cal =
      calibration.empty() ? ModelCoefficients{} : coefficients_from_file(calibration);
  out << "problem,precision,op_a,op_b,m,n,k,batch,beta";
  for (const auto& h : config_csv_header()) out << "," << h;
  out << ",registers,estimated_registers,measured_s,predicted_s,calibrated_s,t_compute,t_smem,t_"
         "issue,t_l2,t_dram,"
         "t_latency,t_launch,t_store,t_split_pass,tiles,wave_efficiency,occupancy,blocks_per_sm,"
         "fma_count,dram_bytes,l2_bytes,smem_wavefronts,limit\n";
  for (const auto& s : samples) {
    const Prediction r = predict(s.problem, sample_device(s, device), s.config, {}, s.registers);
    const Prediction c = predict(s.problem, sample_device(s, device), s.config, cal, s.registers);
    const Problem& p = s.problem;
    out << sample_key(s) << "," << to_char(p.precision) << "," << to_char(p.op_a) << ","
        << to_char(p.op_b) << "," << p.m << "," << p.n << "," << p.k << "," << p.batch << ","
        << p.beta.re;
    for (int v : config_csv_values(s.config)) out << "," << v;
    out << "," << r.registers << ","
        << estimate_registers(s.config, p.precision, default_register_model(p.precision)) << ","
        << s.time_s << "," << r.time_s << "," << c.time_s << "," << r.t_compute << "," << r.t_smem
        << "," << r.t_issue << "," << r.t_l2 << "," << r.t_dram << "," << r.t_latency << ","
        << r.t_launch << "," << r.t_store << "," << r.t_split_pass << "," << r.tiles << ","
        << r.wave_efficiency << "," << r.occ.fraction << "," << r.occ.blocks_per_sm << ","
        << r.fma_count << "," << r.dram_bytes << "," << r.l2_bytes << "," << r.smem_wavefronts
        << "," << to_string(r.limit) << "\n";
  }
}

// A given calibration (fitted elsewhere, none of these samples in its fit) on every problem.
void with_calibration(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                      const std::string& path, int shortlist) {
  FoldQuality f;
  f.held_samples = samples.size();
  f.uncalibrated = rank_quality(device, samples, {}, shortlist);
  f.calibrated = rank_quality(device, samples, coefficients_from_file(path), shortlist);
  std::printf("every problem ranked by %s, fitted elsewhere\n", path.c_str());
  print_fold(f, 1);
}

// Leave-one-class-out: each class's problems are ranked by coefficients fitted without them,
// after an in-sample fit on everything. The coefficients alone and the correction alone are
// reported too, to show what each stage adds.
void by_class(const DeviceSpec& device, const std::vector<CalibrationSample>& samples) {
  const CalibrationResult all = calibrate(device, samples);
  std::printf(
      "calibration of all %zu samples: loss %.4f -> %.4f (coefficients, %d evaluations) -> %.4f "
      "(with the correction), %.1f s\n%s\n\n",
      all.samples, all.loss_before, all.loss_coefficients, all.evaluations, all.loss_after,
      all.seconds, coefficients_to_json(all.coefficients).c_str());
  print("in-sample (fitted on everything)", rank_quality(device, samples, {}),
        rank_quality(device, samples, all.coefficients));

  std::map<std::string, std::vector<CalibrationSample>> fold_of;
  for (const auto& s : samples) fold_of[problem_class(s.problem)].push_back(s);
  QualityReport before, coefficients_only, correction_only, after;
  for (const auto& [fold, held] : fold_of) {
    std::vector<CalibrationSample> train;
    for (const auto& s : samples)
      if (problem_class(s.problem) != fold) train.push_back(s);
    const CalibrationResult r = calibrate(device, train, {}, fold_fit_options());
    ModelCoefficients full = r.coefficients, corrected_defaults;
    full.correction = fit_log_time_correction(device, train, r.coefficients);
    corrected_defaults.correction = fit_log_time_correction(device, train, {});
    const QualityReport qb = rank_quality(device, held, {});
    const QualityReport qc = rank_quality(device, held, r.coefficients);
    const QualityReport qr = rank_quality(device, held, corrected_defaults);
    const QualityReport qa = rank_quality(device, held, full);
    std::printf(
        "fold %-14s %2zu problems held out: median rho %.3f, coefficients %.3f, correction %.3f, "
        "both %.3f (fit %.1f s)\n",
        fold.c_str(), qa.problems.size(), qb.median_spearman, qc.median_spearman,
        qr.median_spearman, qa.median_spearman, r.seconds);
    std::fflush(stdout);
    for (auto [report, fold_report] : {std::pair{&before, &qb}, std::pair{&coefficients_only, &qc},
                                       std::pair{&correction_only, &qr}, std::pair{&after, &qa}})
      report->problems.insert(report->problems.end(), fold_report->problems.begin(),
                              fold_report->problems.end());
  }
  for (auto* report : {&before, &coefficients_only, &correction_only, &after}) summarize(*report);
  print("\nheld out (cross-validated): coefficients only", before, coefficients_only);
  print("held out (cross-validated): correction on the default coefficients only", before,
        correction_only);
  print("held out (cross-validated): calibrated (coefficients, then correction)", before, after);
}

// A --learned value: comma-separated key=value settings of the learned correction.
LearnedCorrectionOptions parse_learned(const std::string& spec) {
  LearnedCorrectionOptions o;
  const std::map<std::string, double*> reals = {
      {"eta", &o.learning_rate},       {"subsample", &o.subsample},
      {"colsample", &o.colsample},     {"min_child", &o.min_child_weight},
      {"fast_weight", &o.fast_weight}, {"fast_scale", &o.fast_scale},
      {"rank", &o.rank_weight},        {"rank_sigma", &o.rank_sigma},
      {"rank_spread", &o.rank_spread}, {"rank_step", &o.rank_step},
      {"center", &o.center},           {"own", &o.own_device_weight}};
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "drop") {  // drop=NAME+NAME: features the trees may not use
      std::stringstream names(value);
      for (std::string name; std::getline(names, name, '+');) o.excluded_features.push_back(name);
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(v >= 0))
      throw InputError("--learned: '" + item + "' is not key=value with a number >= 0");
    if (key == "depth") {
      o.max_depth = int(v);
    } else if (key == "rounds") {
      o.rounds = int(v);
    } else if (key == "pairs") {
      o.rank_pairs = int(v);
    } else if (key == "forest") {
      o.parallel_trees = int(v);
    } else if (key == "family") {
      o.by_family = v != 0;
    } else if (reals.count(key)) {
      *reals.at(key) = v;
    } else {
      throw InputError(
          "--learned: unknown setting '" + key +
          "' (depth rounds eta subsample colsample min_child fast_weight fast_scale "
          "rank rank_sigma rank_spread rank_step center own pairs forest family drop)");
    }
  }
  return o;
}

// One fold's calibration for each setting of the learned correction: the coefficients and the
// linear correction fitted once on `train`, then each setting's trees on top of them.
std::vector<ModelCoefficients> fit_fold_settings(const DeviceSpec& device,
                                                 const std::vector<CalibrationSample>& train,
                                                 const std::vector<std::string>& specs) {
  ModelCoefficients base = calibrate(device, train, {}, fold_fit_options()).coefficients;
  base.correction = fit_log_time_correction(device, train, base);
  std::vector<ModelCoefficients> fitted(specs.size(), base);
  for (std::size_t v = 0; v < specs.size(); ++v) {
    // bag=N as the first item: the trees fitted on about 80% of the problems, drawn by hashing
    // N with each problem's key (std::hash: another standard library draws other bags).
    std::string spec = specs[v];
    std::vector<CalibrationSample> subset;
    const std::vector<CalibrationSample>* rows = &train;
    if (spec.rfind("bag=", 0) == 0) {
      const auto comma = spec.find(',');
      const std::string draw = spec.substr(4, comma == std::string::npos ? spec.npos : comma - 4);
      if (draw.empty() || draw.find_first_not_of("0123456789") != std::string::npos)
        throw InputError("--learned: bag takes a draw number (0, 1, 2, ...), not '" + draw + "'");
      spec = comma == std::string::npos ? "" : spec.substr(comma + 1);
      for (const auto& s : train)
        if (std::hash<std::string>{}(draw + "/" + sample_key(s)) % 1000 < 800) subset.push_back(s);
      rows = &subset;
    }
    fit_learned_trees(device, *rows, fitted[v], parse_learned(spec));
  }
  return fitted;
}

// The learned correction's settings compared on the same folds: each fold's coefficients and
// linear correction are fitted once, then the trees of every setting on top of them.
void compare_learned(const DeviceSpec& device, const std::vector<CalibrationSample>& samples, int k,
                     std::uint32_t seed, const std::vector<std::string>& specs,
                     const std::string& held_out_path) {
  const std::map<std::string, int> folds = folds_by_family(samples, k, seed);
  std::ofstream held_out;
  if (!held_out_path.empty()) {
    held_out.open(held_out_path);
    if (!held_out) throw InputError("cannot write '" + held_out_path + "'");
    held_out << "fold,setting,problem,config,measured_s,predicted_s\n";
  }
  std::vector<QualityReport> pooled(specs.size());
  for (int f = 0; f < k; ++f) {
    std::vector<CalibrationSample> train, held;
    for (const auto& s : samples) (folds.at(sample_key(s)) == f ? held : train).push_back(s);
    const std::vector<ModelCoefficients> settings = fit_fold_settings(device, train, specs);
    for (std::size_t v = 0; v < specs.size(); ++v) {
      const ModelCoefficients& fitted = settings[v];
      const QualityReport q = rank_quality(device, held, fitted);
      if (held_out.is_open())
        for (const auto& s : held) {
          const auto r = predict_measured(device, s, fitted);
          if (r)
            held_out << f + 1 << "," << v << "," << sample_key(s) << "," << s.config.id() << ","
                     << s.time_s << "," << r->time_s << "\n";
        }
      pooled[v].problems.insert(pooled[v].problems.end(), q.problems.begin(), q.problems.end());
      std::printf("fold %d/%d %-60s pick med %.3f\n", f + 1, k, specs[v].c_str(),
                  q.median_pick_fraction);
    }
    std::fflush(stdout);
  }
  print_summary_header();
  for (std::size_t v = 0; v < specs.size(); ++v) {
    summarize(pooled[v]);
    print_summary_row("all", "calibrated", pooled[v]);
    std::printf("       %s\n", specs[v].c_str());
  }
}

// Which registers a fit sees and which a ranking uses, on the same folds: each fold's
// calibration fitted once on the compiler's registers and once on the estimate, each ranking its
// held-out problems by the estimate alone, by the compiler's, and by the estimate with its first N
// re-ranked by the compiler's (a pick that compiles a shortlist before it chooses, measuring
// nothing).
void compare_registers(const DeviceSpec& device, const std::vector<CalibrationSample>& samples,
                       int k, std::uint32_t seed) {
  const std::map<std::string, int> folds = folds_by_family(samples, k, seed);
  struct Mode {
    std::string name;
    bool fit_compiled;
    int shortlist;  // 0: the estimate alone; -1: the compiler's registers throughout
  };
  // Shortlists of 4, 8, 16 and measure's own length.
  std::vector<Mode> modes;
  for (const bool fit_compiled : {false, true}) {
    const std::string fit = fit_compiled ? "fit comp, " : "fit est, ";
    modes.push_back({fit + "rank est", fit_compiled, 0});
    for (const int n : {4, 8, 16, kCompiledShortlist})
      modes.push_back({fit + "short " + std::to_string(n), fit_compiled, n});
    modes.push_back({fit + "compiled", fit_compiled, -1});
  }
  std::vector<QualityReport> pooled(modes.size());
  for (int f = 0; f < k; ++f) {
    std::vector<CalibrationSample> train, held;
    for (const auto& s : samples) (folds.at(sample_key(s)) == f ? held : train).push_back(s);
    const ModelCoefficients fit_compiled = fit_fold(device, train);
    for (auto& s : train) s.registers = -1;
    const ModelCoefficients fit_estimated = fit_fold(device, train);
    std::vector<CalibrationSample> held_estimated = held;
    for (auto& s : held_estimated) s.registers = -1;
    for (std::size_t v = 0; v < modes.size(); ++v) {
      const Mode& m = modes[v];
      const ModelCoefficients& fitted = m.fit_compiled ? fit_compiled : fit_estimated;
      const QualityReport q = m.shortlist < 0    ? rank_quality(device, held, fitted)
                              : m.shortlist == 0 ? rank_quality(device, held_estimated, fitted)
                                                 : rank_quality(device, held, fitted, m.shortlist);
      pooled[v].problems.insert(pooled[v].problems.end(), q.problems.begin(), q.problems.end());
      std::printf("fold %d/%d %-22s pick med %.3f\n", f + 1, k, m.name.c_str(),
                  q.median_pick_fraction);
    }
    std::fflush(stdout);
  }
  print_summary_header();
  for (std::size_t v = 0; v < modes.size(); ++v) {
    summarize(pooled[v]);
    print_summary_row("all", "calibrated", pooled[v]);
    const auto gpus = by_gpu(pooled[v]);
    if (gpus.size() > 1)
      for (const auto& [gpu, report] : gpus) print_summary_row(gpu, "calibrated", report);
    std::printf("       %s\n", modes[v].name.c_str());
  }
}

// The whole space's zero-run picks of every held-out problem, each fold's calibration fitted on
// the other folds (on the compiler's registers, as shipped, unless --registers estimated), ranked
// by the estimate as predict ranks; the trees once per setting of
// `learned` (none: the defaults): each setting's first `top` picks, the first being `measure
// --top 1`'s. DIR/picks.tsv holds one line per problem: fold, the problem's options, its fastest
// recorded configuration and time, then the picks (columns pick1.. with one setting, S.pick1..
// for setting S otherwise).
void write_picks(const DeviceSpec& device, const std::vector<CalibrationSample>& samples, int k,
                 std::uint32_t seed, std::vector<std::string> learned, int top,
                 const std::string& dir) {
  if (learned.empty()) learned.push_back("");
  // Each pick is ranked and timed on one GPU: the recordings must all be of it.
  for (const auto& s : samples)
    if (sample_device(s, device).name != device.name)
      throw InputError("--picks ranks for " + device.name + " (--gpu), but " + sample_key(s) +
                       " was recorded on " + sample_device(s, device).name);
  const std::map<std::string, int> folds = folds_by_family(samples, k, seed);
  std::ofstream out(dir + "/picks.tsv");
  if (!out) throw InputError("cannot write '" + dir + "/picks.tsv' (does the folder exist?)");
  out << "fold\tproblem\tbest\tbest_s";
  for (std::size_t v = 0; v < learned.size(); ++v)
    for (int i = 1; i <= top; ++i)
      out << "\t" << (learned.size() > 1 ? std::to_string(v + 1) + "." : "") << "pick" << i;
  out << "\n";
  for (std::size_t v = 0; v < learned.size(); ++v)
    std::printf("setting %zu: %s\n", v + 1,
                learned[v].empty() ? "the default" : learned[v].c_str());
  for (int f = 0; f < k; ++f) {
    std::vector<CalibrationSample> train;
    std::map<std::string, const CalibrationSample*> fastest;  // each held-out problem's
    for (const auto& s : samples) {
      if (folds.at(sample_key(s)) != f) {
        train.push_back(s);
        continue;
      }
      const CalibrationSample*& best = fastest[sample_key(s)];
      if (!best || s.time_s < best->time_s) best = &s;
    }
    const std::vector<ModelCoefficients> fitted = fit_fold_settings(device, train, learned);
    for (const auto& [key, best] : fastest) {
      out << f + 1 << "\t" << problem_options(best->problem) << "\t" << best->config.id() << "\t"
          << best->time_s;
      for (const ModelCoefficients& c : fitted) {
        const Ranking r = rank_space(best->problem, device, top, c);
        if (int(r.top.size()) < top)
          throw InputError("--top " + std::to_string(top) + ": the space of " + key + " holds " +
                           std::to_string(r.top.size()) + " configurations");
        for (const Ranked& pick : r.top) out << "\t" << pick.config.id();
      }
      out << "\n" << std::flush;
    }
    std::printf("fold %d/%d: %zu problems picked\n", f + 1, k, fastest.size());
    std::fflush(stdout);
  }
}

// One of a flag's two values; InputError naming the flag and the value otherwise.
std::string one_of(const std::string& flag, const std::string& value, const char* first,
                   const char* second) {
  if (value != first && value != second)
    throw InputError(flag + " takes " + first + " or " + second + ", not '" + value + "'");
  return value;
}

// A whole decimal number in [lo, hi]; InputError naming the flag and the value otherwise.
std::int64_t parse_count(const std::string& flag, const std::string& value, std::int64_t lo,
                         std::int64_t hi) {
  std::int64_t v = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (error != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw InputError(flag + " takes a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", not '" + value + "'");
  return v;
}

// --folds: a count from 2 to the number of problems, or "all" for one fold per problem
// (leave-one-problem-out).
int fold_count(const std::string& value, const std::vector<CalibrationSample>& samples) {
  std::set<std::string> keys;
  for (const auto& s : samples) keys.insert(sample_key(s));
  const auto problems = std::int64_t(keys.size());
  if (value == "all") return int(problems);
  std::int64_t k = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), k);
  if (error != std::errc() || end != value.data() + value.size() || k < 2 || k > problems)
    throw InputError("--folds takes 'all' or a count from 2 to " + std::to_string(problems) +
                     " (the problems in the data), not '" + value + "'");
  return int(k);
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> paths;
  std::string gpu = "H100-SXM", by = "problem", folds = "5", calibration, dump_path, held_out_path,
              picks_dir, registers = "compiled";
  int picks_top = 3;
  bool picks_top_given = false;
  int shortlist_length = kCompiledShortlist;
  bool shortlist_given = false;
  std::vector<std::string> learned;
  std::uint32_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool flag = a.rfind("--", 0) == 0;
    if (flag && i + 1 >= argc) throw InputError(a + " needs a value");
    if (a == "--gpu") {
      gpu = argv[++i];
    } else if (a == "--by") {
      by = one_of(a, argv[++i], "problem", "class");
    } else if (a == "--folds") {
      folds = argv[++i];
    } else if (a == "--registers") {
      registers = argv[++i];
      if (registers != "compare" && registers != "shortlist")
        registers = one_of(a, registers, "compiled", "estimated");
    } else if (a == "--held-out") {
      held_out_path = argv[++i];
    } else if (a == "--picks") {
      picks_dir = argv[++i];
    } else if (a == "--top") {
      picks_top = int(parse_count(a, argv[++i], 1, 16));
      picks_top_given = true;
    } else if (a == "--shortlist") {
      shortlist_length = int(parse_count(a, argv[++i], 1, 100000));
      shortlist_given = true;
    } else if (a == "--dump") {
      dump_path = argv[++i];
    } else if (a == "--learned") {
      learned.push_back(argv[++i]);
    } else if (a == "--calibration") {
      calibration = argv[++i];
    } else if (a == "--seed") {
      seed = std::uint32_t(parse_count(a, argv[++i], 0, 0xffffffff));
    } else if (flag) {
      throw InputError("unknown option '" + a + "'");
    } else {
      paths.push_back(a);
    }
  }
  if (picks_top_given && picks_dir.empty()) throw InputError("--top applies to --picks only");
  if (shortlist_given && registers != "shortlist")
    throw InputError("--shortlist applies to --registers shortlist only");
  if (!picks_dir.empty() &&
      (!dump_path.empty() || !calibration.empty() || !held_out_path.empty() || by != "problem" ||
       (registers != "compiled" && registers != "estimated")))
    throw InputError(
        "--picks takes the recordings, --gpu, --folds, --seed, --top, --learned and "
        "--registers compiled|estimated only");
  if (paths.empty()) paths.push_back(GEMMTUNE_SOURCE_DIR "/tests/data/h100_sweeps.csv");
  const DeviceSpec device = find_builtin_device(gpu);
  std::vector<CalibrationSample> samples = recorded_samples(paths);

  // A zero-run pick has no compiler: --registers estimated fits and ranks as predict does.
  if (registers == "estimated")
    for (auto& s : samples) s.registers = -1;
  // measure --top's pick: fitted on the compiler's counts, as the shipped calibrations are, and
  // ranked by the estimate with its first --shortlist (kCompiledShortlist) ranked again by the
  // compiler's.
  const int shortlist = registers == "shortlist" ? shortlist_length : 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (!picks_dir.empty()) {
    write_picks(device, samples, fold_count(folds, samples), seed, learned, picks_top, picks_dir);
  } else if (!dump_path.empty()) {
    dump(device, samples, calibration, dump_path);
  } else if (!calibration.empty()) {
    with_calibration(device, samples, calibration, shortlist);
  } else if (registers == "compare") {
    compare_registers(device, samples, fold_count(folds, samples), seed);
  } else if (!learned.empty()) {
    compare_learned(device, samples, fold_count(folds, samples), seed, learned, held_out_path);
  } else if (by == "class") {
    by_class(device, samples);
  } else {
    by_problem(device, samples, fold_count(folds, samples), seed, shortlist);
  }
  std::printf("total %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "model_accuracy: %s\n", e.what());
  return 1;
}
