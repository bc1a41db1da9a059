// Experiment: model_accuracy's leave-one-class-out figures on the SIMT exhaustive sweeps, with the
// tensor-core sweeps (tests/data/h100_tensor_sweeps.csv) of the other classes added to each
// fold's fit. Folds are cached under $GEMMTUNE_FOLDS (default /tmp/folds_tensor).
//   tensor_folds EXHAUSTIVE.csv TENSOR.csv
#include <cstdio>

#include "exp/held_out.hpp"
using namespace gemmtune;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const auto simt = exp::read_samples(argv[1]);
  const auto tensor = exp::read_samples(argv[2]);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  // "coefficients-simt" in argv[3]: the NLopt coefficients of the SIMT-only folds (cached under
  // /tmp/folds), the correction refitted on SIMT and tensor samples.
  const bool coefficients_simt = argc > 3 && std::string(argv[3]) == "coefficients-simt";
  if (coefficients_simt)
    setenv("GEMMTUNE_FOLDS", "/tmp/folds", 1);
  else
    setenv("GEMMTUNE_FOLDS", "/tmp/folds_tensor", 0);
  QualityReport plain_all, cal_all;
  for (const auto& [fold, held] : exp::by_class(simt)) {
    // fold_coefficients fits on every class but the fold; the tensor samples of other classes
    // join the fit.
    std::vector<CalibrationSample> both = simt;
    for (const auto& s : tensor)
      if (problem_class(s.problem) != fold) both.push_back(s);
    ModelCoefficients k;
    if (coefficients_simt) {
      k = exp::fold_coefficients(d, simt, fold);
      k.correction = {};
      k.correction = fit_log_time_correction(d, exp::all_but(both, fold), k);
    } else {
      k = exp::fold_coefficients(d, both, fold);
    }
    const QualityReport plain = rank_quality(d, held, {});
    const QualityReport cal = rank_quality(d, held, k);
    for (size_t i = 0; i < cal.problems.size(); ++i) {
      const auto &p = plain.problems[i], &c = cal.problems[i];
      std::printf("%-14s %-26s spearman %.3f -> %.3f  regret %.3f -> %.3f  short10 %d -> %d\n",
                  fold.c_str(), c.problem.c_str(), p.spearman, c.spearman, p.regret, c.regret,
                  int(p.shortlist10), int(c.shortlist10));
      plain_all.problems.push_back(p);
      cal_all.problems.push_back(c);
    }
  }
  summarize(plain_all);
  summarize(cal_all);
  std::printf("median spearman %.3f -> %.3f  regret %.3f -> %.3f  shortlist10 %.2f -> %.2f\n",
              plain_all.median_spearman, cal_all.median_spearman, plain_all.median_regret,
              cal_all.median_regret, plain_all.shortlist10_rate, cal_all.shortlist10_rate);
}
