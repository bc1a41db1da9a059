// Problems drawn at random: the recordings the model is fitted on, and held-out checks drawn
// with another seed. Pure: the same sampling and device give the same list on any machine.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "core/core.hpp"

namespace gemmtune {
namespace {

// Log-uniform integer in [lo, hi].
std::int64_t log_uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi) + 1));
  return std::clamp<std::int64_t>(std::int64_t(std::exp(u(rng))), lo, hi);
}

bool chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

Op random_op(std::mt19937_64& rng, Precision p) {
  const int choices = is_complex(p) ? 3 : 2;
  return static_cast<Op>(std::uniform_int_distribution<int>(0, choices - 1)(rng));
}

// A leading dimension a little longer than the rows, odd where the rows allow it: the
// misaligned case that vector loads must refuse.
std::int64_t odd_leading_dimension(std::mt19937_64& rng, std::int64_t rows) {
  const std::int64_t pad = std::uniform_int_distribution<std::int64_t>(1, 16)(rng);
  return rows + pad;
}

}  // namespace

void ProblemSampling::validate() const {
  if (count < 1) throw InputError("count = " + std::to_string(count) + " must be >= 1");
  if (min_size < 1 || max_size < min_size)
    throw InputError("sizes " + std::to_string(min_size) + ".." + std::to_string(max_size) +
                     " must satisfy 1 <= min <= max");
  if (!(max_seconds > 0))
    throw InputError("max_seconds = " + std::to_string(max_seconds) + " must be positive");
  for (double share : {batched_share, odd_ld_share, beta_share})
    if (share < 0 || share > 1)
      throw InputError("share " + std::to_string(share) + " must lie in [0, 1]");
  if (precisions.empty()) throw InputError("no precision to draw from");
  if (batched_share > 0 && min_size > kSampledBatchMaxSize)
    throw InputError("min_size = " + std::to_string(min_size) + " leaves no batched problem (" +
                     "their sizes are at most " + std::to_string(kSampledBatchMaxSize) +
                     "); set the batched share (--batched-share) to 0");
}

double sampling_seconds_estimate(const Problem& p, const DeviceSpec& device) {
  return p.flops() / (device.peak_gflops(p.precision) * 1e9 * kSamplingPeakFraction);
}

std::vector<Problem> random_problems(const ProblemSampling& s, const DeviceSpec& device) {
  s.validate();
  std::mt19937_64 rng(s.seed);
  std::vector<Problem> out;
  // Rejection keeps each draw inside the time bound; a bound no draw can meet is an error,
  // not an endless loop.
  const int max_tries = 1000 * s.count;
  for (int tries = 0; int(out.size()) < s.count; ++tries) {
    if (tries >= max_tries)
      throw InputError("no problem of sizes " + std::to_string(s.min_size) + ".." +
                       std::to_string(s.max_size) + " runs under " + std::to_string(s.max_seconds) +
                       " s on " + device.name);
    Problem p;
    p.precision =
        s.precisions[std::uniform_int_distribution<size_t>(0, s.precisions.size() - 1)(rng)];
    p.op_a = random_op(rng, p.precision);
    p.op_b = random_op(rng, p.precision);
    if (chance(rng, s.batched_share)) {
      const std::int64_t hi = std::min<std::int64_t>(s.max_size, kSampledBatchMaxSize);
      p.m = log_uniform(rng, s.min_size, hi);
      p.n = log_uniform(rng, s.min_size, hi);
      p.k = log_uniform(rng, s.min_size, hi);
      p.batch = log_uniform(rng, 2, kSampledMaxBatch);
    } else {
      p.m = log_uniform(rng, s.min_size, s.max_size);
      p.n = log_uniform(rng, s.min_size, s.max_size);
      p.k = log_uniform(rng, s.min_size, s.max_size);
    }
    if (chance(rng, s.odd_ld_share)) {
      p.lda = odd_leading_dimension(rng, p.rows_a());
      p.ldb = odd_leading_dimension(rng, p.rows_b());
      p.ldc = odd_leading_dimension(rng, p.m);
    }
    if (chance(rng, s.beta_share)) p.beta = {1.0, 0.0};
    p = p.normalized();
    if (sampling_seconds_estimate(p, device) > s.max_seconds) continue;
    out.push_back(p);
  }
  return out;
}

std::string problem_options(const Problem& p) {
  std::ostringstream o;
  o << "--precision " << char(std::tolower(to_char(p.precision))) << " --opa "
    << char(std::tolower(to_char(p.op_a))) << " --opb " << char(std::tolower(to_char(p.op_b)))
    << " --m " << p.m << " --n " << p.n << " --k " << p.k;
  const Problem packed = make_problem(p.precision, p.op_a, p.op_b, p.m, p.n, p.k, p.batch);
  if (p.lda != packed.lda) o << " --lda " << p.lda;
  if (p.ldb != packed.ldb) o << " --ldb " << p.ldb;
  if (p.ldc != packed.ldc) o << " --ldc " << p.ldc;
  if (p.batch != 1) o << " --batch " << p.batch;
  if (p.alpha != Scalar{1.0, 0.0}) o << " --alpha " << p.alpha.re;
  if (p.beta != Scalar{0.0, 0.0}) o << " --beta " << p.beta.re;
  return o.str();
}

}  // namespace gemmtune
