// Experiment: does the tensor-core sweep data (tests/data/h100_tensor_sweeps.csv) help the model
// rank FP64 tensor-core kernels of problems it was not fitted on? Two folds of the tensor
// problems (alternating by shape id); each fold is fitted on the SIMT exhaustive data plus the
// other fold, and judged against the uncalibrated model and a fit on the SIMT data alone.
//   tensor_cv EXHAUSTIVE.csv TENSOR.csv
#include <cstdio>
#include <set>

#include "exp/held_out.hpp"
using namespace gemmtune;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const auto simt = exp::read_samples(argv[1]);
  const auto tensor = exp::read_samples(argv[2]);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  std::vector<std::string> ids;
  for (const auto& s : tensor)
    if (std::find(ids.begin(), ids.end(), s.problem.shape_id()) == ids.end())
      ids.push_back(s.problem.shape_id());
  std::sort(ids.begin(), ids.end());
  const ModelCoefficients simt_only = fit_fold(d, simt);
  QualityReport plain_all, simt_all, both_all;
  for (int fold = 0; fold < 2; ++fold) {
    std::set<std::string> held_ids;
    for (size_t i = 0; i < ids.size(); ++i)
      if (int(i % 2) == fold) held_ids.insert(ids[i]);
    std::vector<CalibrationSample> train = simt, held;
    for (const auto& s : tensor) (held_ids.count(s.problem.shape_id()) ? held : train).push_back(s);
    // "coefficients-simt" in argv[3]: the SIMT fit's coefficients, the correction refitted on
    // SIMT and tensor samples.
    ModelCoefficients both;
    if (argc > 3 && std::string(argv[3]) == "coefficients-simt") {
      both = simt_only;
      both.correction = {};
      both.correction = fit_log_time_correction(d, train, both);
    } else if (argc > 3 && std::string(argv[3]) == "tensor-only") {
      // Fitted on the other fold's tensor-core sweeps alone.
      std::vector<CalibrationSample> tensor_train;
      for (const auto& s : tensor)
        if (!held_ids.count(s.problem.shape_id())) tensor_train.push_back(s);
      both = fit_fold(d, tensor_train);
    } else {
      both = fit_fold(d, train);
    }
    const QualityReport plain = rank_quality(d, held, {});
    const QualityReport simt_q = rank_quality(d, held, simt_only);
    const QualityReport both_q = rank_quality(d, held, both);
    for (size_t i = 0; i < plain.problems.size(); ++i) {
      const auto &p = plain.problems[i], &s = simt_q.problems[i], &b = both_q.problems[i];
      std::printf(
          "%-26s rho %.3f %.3f %.3f  regret %.3f %.3f %.3f  top10 %d %d %d  short10 %d %d %d\n",
          b.problem.c_str(), p.spearman, s.spearman, b.spearman, p.regret, s.regret, b.regret,
          int(p.top10), int(s.top10), int(b.top10), int(p.shortlist10), int(s.shortlist10),
          int(b.shortlist10));
      plain_all.problems.push_back(p);
      simt_all.problems.push_back(s);
      both_all.problems.push_back(b);
    }
  }
  for (auto* q : {&plain_all, &simt_all, &both_all}) summarize(*q);
  std::printf(
      "median rho %.3f %.3f %.3f  regret %.3f %.3f %.3f  short10 %.2f %.2f %.2f "
      "(uncalibrated, SIMT fit, SIMT+tensor fit)\n",
      plain_all.median_spearman, simt_all.median_spearman, both_all.median_spearman,
      plain_all.median_regret, simt_all.median_regret, both_all.median_regret,
      plain_all.shortlist10_rate, simt_all.shortlist10_rate, both_all.shortlist10_rate);
}
