// A variable-size batch's kernels ranked for its size distribution: one launch runs every matrix,
// so the kernel that suits the largest matrix (what the batch's grid is sized for) can waste most
// of each block on the smaller ones. The candidates come from a few of the batch's own sizes;
// each is scored on a sample of them.
#include <algorithm>
#include <map>

#include "search/search.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kSampleSize = 64;
constexpr int kLeastPerQuantile = 16;  // candidates per quantile (top_k where larger)

double work(const Problem& p) {
  return double(p.m) * double(p.n) * double(std::max<std::int64_t>(p.k, 1));
}

// The matrix of `sizes` that stands at fraction q of the batch ordered by work.
const Problem& quantile(const std::vector<const Problem*>& by_work, double q) {
  const std::size_t i = std::min(by_work.size() - 1, std::size_t(q * double(by_work.size())));
  return *by_work[i];
}

// The non-empty matrices of `sizes` in work order (`largest` alone if every C is empty: any
// kernel will do).
std::vector<const Problem*> in_work_order(const Problem& largest,
                                          const std::vector<Problem>& sizes) {
  std::vector<const Problem*> by_work;
  for (const Problem& p : sizes)
    if (p.m > 0 && p.n > 0) by_work.push_back(&p);
  if (by_work.empty()) by_work.push_back(&largest);
  std::stable_sort(by_work.begin(), by_work.end(),
                   [](const Problem* a, const Problem* b) { return work(*a) < work(*b); });
  return by_work;
}

// A matrix's sizes as a strided problem of `largest`'s kind.
Problem like_largest(const Problem& largest, const Problem& s, std::int64_t batch) {
  Problem p = largest;
  p.m = s.m;
  p.n = s.n;
  p.k = std::max<std::int64_t>(s.k, 1);
  p.lda = p.ldb = p.ldc = 0;
  p.batch = batch;
  return p.normalized();
}

// One slice of the work order: its middle matrix as a strided batch of every non-empty matrix
// (one launch runs them all: its waves, occupancy and launch cost are the whole batch's), and
// the slice's share of the batch.
struct Slice {
  Problem problem;
  double share = 0;
};

// The sample: the work order cut into up to 64 slices. Each slice's prediction stands for the
// batch as if every matrix were the slice's; the shares weigh them into one launch's time
// (summing a launch per slice would count the launch cost and a wave tail 64 times over).
std::vector<Slice> sample_of(const Problem& largest, const std::vector<const Problem*>& by_work) {
  const std::size_t total = by_work.size(), n = std::min(kSampleSize, total);
  std::vector<Slice> sample;
  for (std::size_t i = 0; i < n; ++i)
    sample.push_back(
        {like_largest(largest, *by_work[(2 * i + 1) * total / (2 * n)], std::int64_t(total)),
         double((i + 1) * total / n - i * total / n) / double(total)});
  return sample;
}

double batch_time(const std::vector<Slice>& sample, const DeviceSpec& device, const KernelConfig& c,
                  const ModelCoefficients& coefficients) {
  double time = 0;
  for (const Slice& s : sample)
    time += s.share * predict(s.problem, device, c, coefficients).time_s;
  return time;
}

}  // namespace

double time_for_sizes(const Problem& largest, const std::vector<Problem>& sizes,
                      const DeviceSpec& device, const KernelConfig& c,
                      const ModelCoefficients& coefficients) {
  if (sizes.empty()) throw InputError("a variable batch's time needs at least one matrix");
  return batch_time(sample_of(largest, in_work_order(largest, sizes)), device, c, coefficients);
}

std::vector<Ranked> rank_for_sizes(const Problem& largest, const std::vector<Problem>& sizes,
                                   const DeviceSpec& device, int top_k,
                                   const ModelCoefficients& coefficients,
                                   const SpaceDomain& domain) {
  if (top_k < 1) throw InputError("top k = " + std::to_string(top_k) + " must be >= 1");
  if (sizes.empty()) throw InputError("a variable batch's ranking needs at least one matrix");
  const SpaceDomain variable = variable_batch_domain(domain);
  const std::vector<const Problem*> by_work = in_work_order(largest, sizes);
  const std::vector<Slice> sample = sample_of(largest, by_work);
  // Candidates: the best for the matrices at a quarter, half and three quarters of the work
  // order, and for the largest; every one valid for the largest, which the launch covers.
  const int per_quantile = std::max(kLeastPerQuantile, top_k);
  std::map<std::string, KernelConfig> candidates;
  for (const double q : {0.25, 0.5, 0.75})
    for (const Ranked& r : rank_space(like_largest(largest, quantile(by_work, q), 1), device,
                                      per_quantile, coefficients, variable)
                               .top)
      candidates.emplace(r.config.id(), r.config);
  for (const Ranked& r : rank_space(largest, device, per_quantile, coefficients, variable).top)
    candidates.emplace(r.config.id(), r.config);
  std::vector<Ranked> ranked;
  for (const auto& [id, c] : candidates) {
    if (check_hard(largest, device, c)) continue;
    Ranked r{c, predict(largest, device, c, coefficients)};
    r.prediction.time_s = batch_time(sample, device, c, coefficients);
    ranked.push_back(std::move(r));
  }
  // Ties (configurations the model cannot tell apart) keep the ids' order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return a.prediction.time_s < b.prediction.time_s;
  });
  if (ranked.size() > std::size_t(top_k)) ranked.resize(std::size_t(top_k));
  return ranked;
}

}  // namespace gemmtune
