// Strategies on replayed measurements. The recording here is synthetic: the model's time with a
// deterministic error that is systematic per tile shape and per thread layout (10% each, as a
// model's misprediction is) plus 2% noise per configuration, with compile failures and wrong
// kernels planted: the model is informative but not exact, as on real GPUs.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "search/search.hpp"
#include "store/store.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {

SpaceDomain small_domain() {
  SpaceDomain d;
  d.blk_m = {32, 64, 128};
  d.blk_n = {32, 64, 128};
  d.blk_k = {8, 16};
  d.dim_x = {8, 16};
  d.dim_y = {8, 16};
  d.pad = {0, 1};
  d.raster = {1};
  d.vec_c = {0};
  return d;
}

// The hybrid over the small domain, measuring the best 8 of its first compile_top compiled.
HybridOptions small_options(int compile_top) {
  HybridOptions o;
  o.domain = small_domain();
  o.compile_top = compile_top;
  o.measure_top = 8;
  return o;
}

Problem problem() {
  Problem p;
  p.m = 3000;
  p.n = 2000;
  p.k = 1000;
  return p.normalized();
}

// `realization` draws another set of errors, as another GPU or problem would.
std::vector<Evaluation> record(const Problem& p, const DeviceSpec& d, const SpaceDomain& dom,
                               int realization = 0) {
  std::vector<Evaluation> out;
  for (const auto& c : pruned_space(p, d, dom)) {
    const size_t h = std::hash<std::string>{}(c.id() + "#" + std::to_string(realization));
    auto factor = [](size_t key, double sigma) {
      std::mt19937 rng(static_cast<unsigned>(key));
      return std::exp(std::normal_distribution<double>(0.0, sigma)(rng));
    };
    const double systematic = factor(size_t(c.blk_m * 131 + c.blk_n * 7 + c.blk_k), 0.10) *
                              factor(size_t(c.dim_x * 1009 + c.dim_y * 17 + c.prefetch), 0.10);
    Evaluation e;
    e.config = c;
    e.registers =
        estimate_registers(c, p.precision, default_register_model(p.precision)) + int(h % 17) - 8;
    e.time_s = predict(p, d, c, {}, e.registers).time_s * systematic * factor(h, 0.02);
    if (h % 37 == 0) e.status = "compile_error";
    if (h % 41 == 0) {
      e.status = "wrong";
      e.time_s *= 0.2;  // a wrong kernel may well be fast: it must never win
    }
    out.push_back(e);
  }
  return out;
}

double best_ok(const std::vector<Evaluation>& rec) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& e : rec)
    if (e.ok()) best = std::min(best, e.time_s);
  return best;
}

// Evaluations until a configuration at least as fast as target was measured.
int evaluations_to(const TuneResult& r, double target) {
  for (size_t i = 0; i < r.best_after.size(); ++i)
    if (r.best_after[i] <= target) return int(i) + 1;
  return std::numeric_limits<int>::max();
}

}  // namespace

TEST_CASE("tuner: sweep measures everything and keeps the fastest correct kernel", "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto rec = record(problem(), d, small_domain());
  REQUIRE(rec.size() > 300);
  ReplayEvaluator replay(d, rec);
  std::vector<KernelConfig> all;
  for (const auto& e : rec) all.push_back(e.config);
  int sunk = 0;
  const TuneResult r = sweep(problem(), replay, all, {}, [&](const Evaluation&) { ++sunk; });
  CHECK(r.evaluations == int(rec.size()));
  CHECK(sunk == r.evaluations);
  CHECK(r.stopped_by == "space exhausted");
  REQUIRE(r.best);
  CHECK(r.best->time_s == best_ok(rec));
  CHECK(r.best->ok());
  // A budget stops it.
  const TuneResult cut = sweep(problem(), replay, all, Budget{25, 0});
  CHECK(cut.evaluations == 25);
  CHECK(cut.stopped_by == "evaluation budget");
  CHECK_THROWS_WITH(replay.measure(problem(), {KernelConfig::parse("BM256_BN16")}),
                    Catch::Contains("no recorded measurement"));
}

TEST_CASE("tuner: the hybrid reaches the best with fewer evaluations than random", "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const SpaceDomain dom = small_domain();
  HybridOptions o = small_options(32);
  o.refine_rounds = 20;

  // One draw of the model's errors can flatter or shame any strategy: the "3x fewer than random"
  // this test once asserted on one draw held for 9 of these 16 draws and for 4 of another 16
  // (whose median was 1.9x). So the claims are medians over 16 draws, with room for that spread.
  std::vector<double> quality, speedup;
  for (int realization = 0; realization < 16; ++realization) {
    const auto rec = record(problem(), d, dom, realization);
    ReplayEvaluator replay(d, rec);
    std::vector<KernelConfig> all;
    for (const auto& e : rec) all.push_back(e.config);
    const TuneResult h = hybrid_tune(problem(), replay, o);
    REQUIRE(h.best);
    CHECK(h.best->ok());
    CHECK(h.evaluations < int(rec.size()) / 20);  // under 5% of the space measured
    std::vector<int> random_evals;
    for (unsigned seed = 1; seed <= 25; ++seed)
      random_evals.push_back(
          evaluations_to(random_search(problem(), replay, all, seed), h.best->time_s));
    std::sort(random_evals.begin(), random_evals.end());
    const int random_median = random_evals[random_evals.size() / 2];
    INFO("draw " << realization << ": hybrid " << h.evaluations << " evaluations, best "
                 << h.best->time_s << ", exhaustive best " << best_ok(rec)
                 << "; random median evaluations to the hybrid's best " << random_median);
    quality.push_back(h.best->time_s / best_ok(rec));
    speedup.push_back(double(random_median) / h.evaluations);
  }
  std::string per_draw;
  for (size_t i = 0; i < quality.size(); ++i)
    per_draw += " " + std::to_string(quality[i]).substr(0, 5) + "/" +
                std::to_string(speedup[i]).substr(0, 4);
  std::sort(quality.begin(), quality.end());
  std::sort(speedup.begin(), speedup.end());
  const double median_quality = (quality[7] + quality[8]) / 2;
  const double median_speedup = (speedup[7] + speedup[8]) / 2;
  WARN("hybrid's best / exhaustive best, random's evaluations / hybrid's, per draw:"
       << per_draw << "; medians " << median_quality << ", " << median_speedup);
  CHECK(median_quality <= 1.15);
  CHECK(median_speedup >= 1.5);
  CHECK(quality.back() <= 1.25);  // no draw leaves the hybrid far off

  const auto rec = record(problem(), d, dom);
  ReplayEvaluator replay(d, rec);
  // The budget holds for the hybrid too.
  o.budget.evaluations = 5;
  const TuneResult capped = hybrid_tune(problem(), replay, o);
  CHECK(capped.evaluations == 5);
  CHECK(capped.stopped_by == "evaluation budget");

  // A time budget spent before anything was measured still ends with a measured kernel.
  o.budget = {};
  o.budget.seconds = 1e-9;
  const TuneResult late = hybrid_tune(problem(), replay, o);
  REQUIRE(late.best);
  CHECK(late.evaluations >= 1);
  CHECK(late.evaluations <= 8);
  CHECK(late.stopped_by == "time budget");
}

namespace {

// A replay whose compiler takes piece_s for each compile width of configurations, as NVRTC on a
// machine of width cores does.
class SlowCompiler : public Evaluator {
 public:
  SlowCompiler(ReplayEvaluator& replay, int width, double piece_s)
      : replay_(replay), width_(width), piece_s_(piece_s) {}
  const DeviceSpec& device() const override { return replay_.device(); }
  std::vector<CompiledInfo> compile(const Problem& p,
                                    const std::vector<KernelConfig>& configs) override {
    const size_t pieces = (configs.size() + size_t(width_) - 1) / size_t(width_);
    std::this_thread::sleep_for(std::chrono::duration<double>(piece_s_ * double(pieces)));
    compiled_ += int(configs.size());
    return replay_.compile(p, configs);
  }
  std::vector<Evaluation> measure(const Problem& p,
                                  const std::vector<KernelConfig>& configs) override {
    if (first_measure_compiled_ < 0) first_measure_compiled_ = compiled_;
    return replay_.measure(p, configs);
  }
  bool can_evaluate(const KernelConfig& c) const override { return replay_.can_evaluate(c); }
  int compile_width() const override { return width_; }
  int first_measure_compiled() const { return first_measure_compiled_; }

 private:
  ReplayEvaluator& replay_;
  int width_;
  double piece_s_;
  int compiled_ = 0, first_measure_compiled_ = -1;
};

}  // namespace

TEST_CASE("tuner: under a time budget the hybrid measures before slow compiles spend it",
          "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  HybridOptions o = small_options(64);
  const auto rec = record(problem(), d, o.domain);
  ReplayEvaluator replay(d, rec);
  // The whole first batch would compile in 8 x 0.4 s, past the 2 s budget: only a kernel or
  // two could be measured. Paced, compiling stops at half the budget with 16 compiled (while
  // ranking takes under 0.2 s).
  SlowCompiler slow(replay, 8, 0.4);
  o.budget.seconds = 2.0;
  const TuneResult r = hybrid_tune(problem(), slow, o);
  REQUIRE(r.best);
  INFO("compiled before the first measurement: " << slow.first_measure_compiled()
                                                 << ", evaluations " << r.evaluations);
  CHECK(slow.first_measure_compiled() == 16);
  CHECK(r.evaluations >= o.measure_top);
  CHECK(r.stopped_by == "time budget");
  // Refinement compiles paced too, and measures what it compiled in time: compiling its 22
  // candidates at once ran past the budget and measured none of them (8 evaluations in all).
  CHECK(r.evaluations > o.measure_top);
  CHECK(r.seconds < 2.6);  // within about one piece of the budget

  // Without a time budget the first batch is the user's whole top k, compiled at once.
  SlowCompiler fast(replay, 64, 0.0);
  o.budget = {};
  const TuneResult whole = hybrid_tune(problem(), fast, o);
  CHECK(fast.first_measure_compiled() == 64);
  CHECK(whole.best);
}

TEST_CASE("tuner: the first measurements cover as many tile families as they can", "[tuner]") {
  // The compiled batch is re-ranked with its real registers; the first measure_top measured must
  // still be the best of distinct (BM, BN, BK, DX, DY) families: sorted by prediction alone they
  // were variants of one family on the H100, and refinement never left it.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  HybridOptions o = small_options(64);
  o.budget.evaluations = o.measure_top;
  const auto rec = record(problem(), d, o.domain);
  ReplayEvaluator replay(d, rec);
  const TuneResult r = hybrid_tune(problem(), replay, o);
  REQUIRE(r.history.size() == size_t(o.measure_top));
  auto family = [](const KernelConfig& c) {
    return std::array<int, 5>{c.blk_m, c.blk_n, c.blk_k, c.dim_x, c.dim_y};
  };
  std::set<std::array<int, 5>> measured, available;
  for (const auto& e : r.history) measured.insert(family(e.config));
  for (const auto& c : pruned_space(problem(), d, o.domain)) available.insert(family(c));
  REQUIRE(available.size() > 1);
  CHECK(measured.size() == std::min(available.size(), size_t(o.measure_top)));
}

TEST_CASE("tuner: the hybrid does not measure a kernel the compiler spilled heavily", "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  HybridOptions o = small_options(32);
  auto rec = record(problem(), d, o.domain);
  ReplayEvaluator plain(d, rec);
  const TuneResult first = hybrid_tune(problem(), plain, o);
  REQUIRE(first.history.size() >= 2);
  // The same recording, but the compiler spilled the hybrid's first pick to local memory (as
  // ptxas did to one SGEMM tiling on the H100: 32 registers, 41 KB of spills per thread), and
  // its second pick a little.
  const std::string heavy = first.history[0].config.id(), light = first.history[1].config.id();
  for (auto& e : rec) {
    if (e.config.id() == heavy) e.spill_bytes = 41172;
    if (e.config.id() == light) e.spill_bytes = 16;
  }
  ReplayEvaluator spilled(d, rec);
  const TuneResult r = hybrid_tune(problem(), spilled, o);
  REQUIRE(r.best);
  bool measured_heavy = false, measured_light = false;
  for (const auto& e : r.history) {
    measured_heavy |= e.config.id() == heavy;
    measured_light |= e.config.id() == light;
  }
  CHECK_FALSE(measured_heavy);
  CHECK(measured_light);  // a few spilled bytes cost little: still a candidate
}

TEST_CASE("tuner: neighbours move one parameter one step and stay valid", "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const KernelConfig c = KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16_UR0");
  const auto ns = neighbours(problem(), d, c, SpaceDomain{});
  REQUIRE(ns.size() > 10);
  bool has_unroll4 = false, has_bm96 = false, has_bm128 = false;
  for (const auto& n : ns) {
    CHECK_FALSE(check_hard(problem(), d, n));
    int differing = 0;
    const auto a = config_csv_values(c), b = config_csv_values(n);
    for (size_t i = 0; i < a.size(); ++i) differing += a[i] != b[i];
    CHECK(differing >= 1);
    CHECK(differing <= 3);  // a compute-layout step also moves DYA / DYB
    has_unroll4 = has_unroll4 || n.unroll == 4;
    has_bm96 = has_bm96 || n.blk_m == 96;
    has_bm128 = has_bm128 || n.blk_m == 128;
  }
  CHECK(has_unroll4);
  CHECK(has_bm96);         // the next value of the domain {.., 64, 96, 128, ..}
  CHECK_FALSE(has_bm128);  // two steps away
}

TEST_CASE("tuner: on exhaustive H100 sweeps the hybrid reaches 97% of the best in 5% of the space",
          "[tuner]") {
  // tests/data/h100_exhaustive.csv: every configuration of the compact pruned space of eighteen
  // problems measured on the lent H100, see its README. The goal is 97% of the exhaustive
  // best on at least 6 shapes; the recorded data gives 15 of 18 (the misses are 512^3 D,
  // 4097^3 S and 6144x128x128 S, whose best configurations the model ranks 34th to 395th), so
  // fewer than 15 means the hybrid got worse.
  CsvImportReport report;
  const auto by_problem = recordings_by_problem(read_attempts_csv(
      read_text_file(GEMMTUNE_SOURCE_DIR "/tests/data/h100_exhaustive.csv", "recording"), report));
  REQUIRE(report.rejected.empty());
  CHECK(by_problem.size() == 18);
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const SpaceDomain dom = SpaceDomain::named("compact");
  std::vector<double> model_top1;
  int reached = 0;
  for (const auto& [id, recording] : by_problem) {
    const Problem& p = recording.problem;
    const std::vector<Evaluation>& rec = recording.evaluations;
    REQUIRE(rec.size() == pruned_space(p, d, dom).size());  // every sweep is complete
    ReplayEvaluator replay(d, rec);
    HybridOptions o;
    o.domain = dom;
    o.budget.space_share = 0.05;
    const TuneResult h = hybrid_tune(p, replay, o);
    REQUIRE(h.best);
    UNSCOPED_INFO(id << ": hybrid " << h.best->time_s << " s after " << h.evaluations
                     << " evaluations, exhaustive best " << best_ok(rec) << " s");
    CHECK(h.evaluations <= int(rec.size()) / 20);
    reached += h.best->time_s <= best_ok(rec) / 0.97 ? 1 : 0;
    REQUIRE(h.history.at(0).ok());
    model_top1.push_back(best_ok(rec) / h.history[0].time_s);
  }
  CHECK(reached >= 15);
  std::sort(model_top1.begin(), model_top1.end());
  const double median = model_top1[model_top1.size() / 2];
  INFO("model top-1 median fraction of the exhaustive best: " << median);
  CHECK(median >= 0.85);
}

namespace {

// `rec` and, for each of its configurations that has the twin's path, the twin (`member` at 1)
// timed `factor` times as long.
std::vector<Evaluation> with_twins(const std::vector<Evaluation>& rec, int KernelConfig::*member,
                                   const std::function<bool(const KernelConfig&)>& has_path,
                                   double factor) {
  std::vector<Evaluation> out = rec;
  for (const auto& e : rec)
    if (has_path(e.config)) {
      Evaluation twin = e;
      twin.config.*member = 1;
      twin.time_s *= factor;
      out.push_back(twin);
    }
  return out;
}

// With twins 10% faster and 10% slower, the hybrid measures its best's twin and keeps the faster.
void check_twin_measured(const Problem& p, const DeviceSpec& d, const HybridOptions& o,
                         const std::vector<Evaluation>& rec, int KernelConfig::*member,
                         const std::function<bool(const KernelConfig&)>& has_path) {
  for (double factor : {0.9, 1.1}) {
    ReplayEvaluator replay(d, with_twins(rec, member, has_path, factor));
    const TuneResult r = hybrid_tune(p, replay, o);
    REQUIRE(r.best);
    INFO("twins take " << factor << "x; best " << r.best->config.id());
    REQUIRE(has_path(r.best->config));
    std::set<std::string> measured;
    for (const auto& e : r.history) measured.insert(e.config.id());
    KernelConfig twin = r.best->config;
    twin.*member = 1 - twin.*member;
    CHECK(measured.count(twin.id()) == 1);
    CHECK(r.best->config.*member == (factor < 1 ? 1 : 0));
  }
}

}  // namespace

TEST_CASE("tuner: the hybrid measures the 32-bit-address twin of its best kernel", "[tuner]") {
  // The space keeps SL0 where the domain has both address widths; ptxas schedules some kernels
  // much better with SL1 and some worse (21% and -12% on the H100), so the
  // hybrid measures the SL1 twin of its best and keeps whichever is faster.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  HybridOptions o = small_options(32);
  const auto rec = record(problem(), d, o.domain);
  size_t with_path = 0;
  for (const auto& e : rec) {
    with_path += e.config.has_shared32_path();
    CHECK(e.config.shared32 == 0);
  }
  REQUIRE(with_path > 0);
  const auto has_path = [](const KernelConfig& c) { return c.has_shared32_path(); };
  check_twin_measured(problem(), d, o, rec, &KernelConfig::shared32, has_path);
  // A domain of SL0 alone measures no twin.
  HybridOptions only_sl0 = o;
  only_sl0.domain.shared32 = {0};
  ReplayEvaluator replay(d, with_twins(rec, &KernelConfig::shared32, has_path, 0.9));
  const TuneResult plain = hybrid_tune(problem(), replay, only_sl0);
  REQUIRE(plain.best);
  for (const auto& e : plain.history) CHECK(e.config.shared32 == 0);
}

TEST_CASE("tuner: the hybrid measures the staged-C twin of its best mma kernel", "[tuner]") {
  // The space keeps an mma kernel's VC0 where the domain has both; staging C through shared
  // memory (VC1) wins where C dominates and loses where it costs registers, so the hybrid
  // measures the VC1 twin of its best and keeps whichever is faster.
  const DeviceSpec d = find_builtin_device("H100-SXM");
  HybridOptions o = small_options(32);
  o.domain.mma = {2};
  o.domain.async_copy = {1};
  o.domain.stages = {3, 4};
  o.domain.vec_c = {0, 1};
  Problem p = problem();
  p.precision = Precision::D;
  p.k = 64;
  p = p.normalized();
  const auto rec = record(p, d, o.domain);
  REQUIRE_FALSE(rec.empty());
  const auto has_path = [&](const KernelConfig& c) {
    return c.has_vector_c_path(p.precision, p.ldc);
  };
  size_t with_path = 0;
  for (const auto& e : rec) {
    CHECK(e.config.mma == 2);
    CHECK(e.config.vec_c == 0);
    with_path += has_path(e.config);
  }
  REQUIRE(with_path > 0);
  // A domain of VC1 alone keeps the staged kernels, and only those.
  SpaceDomain only_vc1 = o.domain;
  only_vc1.vec_c = {1};
  const auto staged = pruned_space(p, d, only_vc1);
  CHECK(staged.size() == with_path);
  for (const auto& c : staged) CHECK((c.vec_c == 1 && has_path(c)));
  check_twin_measured(p, d, o, rec, &KernelConfig::vec_c, has_path);
}

TEST_CASE("tuner: a budget limits evaluations, a share of the space and time", "[tuner]") {
  CHECK(Budget{}.evaluation_limit(1000) == 0);  // no limit
  CHECK_FALSE(Budget{}.limited());
  CHECK(Budget{40}.evaluation_limit(1000) == 40);
  const Budget cap{0, 0, 0.05};
  CHECK(cap.limited());
  CHECK(cap.evaluation_limit(2000) == 100);  // 5% of the space, not rounded down to 99
  CHECK(cap.evaluation_limit(1999) == 99);
  CHECK(cap.evaluation_limit(10) == 1);  // a cap still lets one configuration run
  CHECK(Budget{30, 0, 0.05}.evaluation_limit(2000) == 30);    // the tighter limit
  CHECK(Budget{300, 0, 0.05}.evaluation_limit(2000) == 100);  // the tighter limit
  const Budget too_much{0, 0, 1.5};
  CHECK_THROWS_WITH(too_much.evaluation_limit(10),
                    Catch::Contains("1.5") && Catch::Contains("<= 1"));
  CHECK_THROWS_WITH(Budget{-3}.evaluation_limit(10), Catch::Contains("-3"));

  BudgetMeter meter(cap);
  meter.set_space_size(400);
  CHECK(meter.evaluation_limit() == 20);
  CHECK(meter.stop_reason(19, true).empty());
  CHECK(meter.stop_reason(20, true) == "evaluation budget");
  CHECK(meter.fits(1e9, 0.5));  // no time budget: any work fits

  // A spent time budget stops the run once it has a kernel, or after the grace evaluations.
  BudgetMeter late(Budget{0, 1e-9});
  while (late.elapsed() < 1e-6) {
  }
  CHECK(late.stop_reason(0, true) == "time budget");
  CHECK(late.stop_reason(BudgetMeter::kGraceEvaluations - 1, false).empty());
  CHECK(late.stop_reason(BudgetMeter::kGraceEvaluations, false) == "time budget");
  CHECK_FALSE(late.fits(0, 1.0));
  BudgetMeter roomy(Budget{0, 3600});
  CHECK(roomy.fits(60, 0.5));
  CHECK_FALSE(roomy.fits(1800, 0.5));
}

TEST_CASE("tuner: every strategy of the registry tunes a recording within its budget", "[tuner]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const Problem p = problem();
  const auto rec = record(p, d, small_domain());
  ReplayEvaluator replay(d, rec);
  REQUIRE(strategies().size() >= 3);
  CHECK(strategies().front().name == "hybrid");
  for (const Strategy& strategy : strategies()) {
    INFO("strategy " << strategy.name);
    CHECK(&find_strategy(strategy.name) == &strategy);
    CHECK_FALSE(strategy.summary.empty());
    int sunk = 0;
    TuneRequest request{p, replay, small_options(32), 5, [&](const Evaluation&) { ++sunk; }};
    request.options.budget.space_share = 0.05;
    const TuneResult r = strategy.tune(request);
    REQUIRE(r.best);
    CHECK(r.best->ok());
    CHECK(r.evaluations == sunk);
    CHECK(r.evaluations >= 1);
    CHECK(r.evaluations <= int(rec.size()) / 20);
  }
  // The random strategy with a seed is random_search over the pruned space with that seed.
  TuneRequest request{p, replay, small_options(32), 5, {}};
  request.options.budget.evaluations = 12;
  std::vector<KernelConfig> all;
  for (const auto& e : rec) all.push_back(e.config);
  const TuneResult by_name = find_strategy("random").tune(request);
  const TuneResult direct = random_search(p, replay, all, 5, Budget{12});
  REQUIRE(by_name.history.size() == direct.history.size());
  for (size_t i = 0; i < direct.history.size(); ++i)
    CHECK(by_name.history[i].config == direct.history[i].config);
}

TEST_CASE("tuner: an unknown strategy is an error naming it and the known ones", "[tuner]") {
  CHECK_THROWS_AS(find_strategy("annealing"), InputError);
  CHECK_THROWS_WITH(find_strategy("annealing"), Catch::Contains("'annealing'") &&
                                                    Catch::Contains("hybrid") &&
                                                    Catch::Contains("random"));
}
