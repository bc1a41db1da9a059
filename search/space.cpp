// Lazy walk of the space. Parameters are fixed level by level (tiling; shared layout, padding
// and stages; prefetch; unroll, edge and rasterization): the variants at the level the parameter
// table declares for them (walk_level), in its nesting order (walk_rank). A stage is tested at
// the first level that fixes all its inputs, and only once every earlier stage has been decided,
// so a rejected subtree is counted whole against the first stage it breaks: the funnel is exact
// without visiting the billions of raw combinations.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "search/constraints.hpp"

namespace gemmtune {
namespace {

using detail::StageContext;

// The level at which each stage's inputs are all fixed.
constexpr int kStageLevel[kStageCount] = {
    1, 1, 1, 1,  // layout, warp, threads, vectors: tiling only
    2, 2,        // shared memory, shared vector reads: + stages, pad, layouts, read width
    3, 3,        // registers: + prefetch
    3, 3, 3, 3,  // thread count, FMAs per load, tile fit, coalescing (tiling only; after hard)
    3, 3,        // occupancy, bank conflicts
    4};          // relevant variants: + unroll, edge, raster

// The variants' levels, and the most parameters one may hold.
constexpr int kFirstVariantLevel = 2, kLastLevel = 4;
constexpr std::size_t kMaxLevelWidth = 8;
using WalkLevel = std::vector<const TuningParameter*>;

std::array<WalkLevel, kLastLevel + 1> declared_walk() {
  std::array<WalkLevel, kLastLevel + 1> levels;
  for (const TuningParameter& p : tuning_parameters()) {
    if (!p.domain || p.tiling) continue;
    if (p.walk_level < kFirstVariantLevel || p.walk_level > kLastLevel)
      throw std::logic_error(std::string("variant ") + p.token + " declares no walk level");
    levels[size_t(p.walk_level)].push_back(&p);
  }
  for (WalkLevel& level : levels) {
    if (level.size() > kMaxLevelWidth)
      throw std::logic_error("a walk level holds too many variants");
    std::sort(level.begin(), level.end(), [](const TuningParameter* a, const TuningParameter* b) {
      return a->walk_rank < b->walk_rank;
    });
  }
  return levels;
}

// What the shared-memory cost of the bank-conflict stage reads beyond the tiling.
const WalkLevel& shared_read_parameters() {
  static const WalkLevel parameters = {&tuning_parameter("LA"), &tuning_parameter("LB"),
                                       &tuning_parameter("PD"), &tuning_parameter("VS")};
  return parameters;
}

// Configurations one level's parameters make.
double level_count(const SpaceDomain& dom, const WalkLevel& level) {
  double count = 1;
  for (const TuningParameter* p : level) count *= double((dom.*p->domain).size());
  return count;
}

// The loops of one level over one domain: per parameter, its values and where they go (its int
// member, else its set).
struct LevelLoops {
  struct Loop {
    const TuningParameter* p;
    int KernelConfig::*member;
    const int* values;
    std::size_t size;
    void store(KernelConfig& c, int value) const {
      if (member)
        c.*member = value;
      else
        p->set(c, value);
    }
    int load(const KernelConfig& c) const { return member ? c.*member : p->get(c); }
  };
  std::array<Loop, kMaxLevelWidth> loops{};
  std::size_t count = 0;
  double combinations = 1;
  LevelLoops(const SpaceDomain& dom, const WalkLevel& level)
      : combinations(level_count(dom, level)) {
    for (const TuningParameter* p : level) {
      const std::vector<int>& values = dom.*p->domain;
      loops[count++] = {p, p->walk_member, values.data(), values.size()};
    }
  }
};

// Calls body() once for every combination of the level's values, each set on c, in the order of
// nested loops with the first parameter outermost (an odometer: the last digit turns fastest).
// Inlined with the body, like the loop nests it stands for.
template <class Body>
[[gnu::always_inline]] inline void for_each_combination(KernelConfig& c, const LevelLoops& level,
                                                        Body&& body) {
  for (std::size_t i = 0; i < level.count; ++i) {
    if (level.loops[i].size == 0) return;
    level.loops[i].store(c, level.loops[i].values[0]);
  }
  std::array<std::size_t, kMaxLevelWidth> at{};
  for (;;) {
    body();
    std::size_t i = level.count;
    for (;;) {
      if (i == 0) return;
      --i;
      const LevelLoops::Loop& loop = level.loops[i];
      if (++at[i] < loop.size) {
        loop.store(c, loop.values[at[i]]);
        break;
      }
      at[i] = 0;
      loop.store(c, loop.values[0]);
    }
  }
}

struct Verdict {
  int stage;  // the failing stage, or the first one left undecided
  bool failed;
};

// One combination of the level-2 parameters (stages, pad, layouts, read and address widths)
// that passes level 2, with the first stage it leaves undecided.
struct SharedChoice {
  std::array<int, kMaxLevelWidth> values;  // by place in walk_parameters(2)
  Verdict verdict;
  double twins;  // configurations it stands for: 2 where its SL1 twin is counted with it
};

// The level-2 verdicts under one tiling. The level-2 stages read the block tile, the thread
// tile (whether its sides divide by each VS), MM, AC and (with cp.async) VA and VB, never the
// read layouts, so tilings share them.
struct SharedChoices {
  std::array<int, 10> key{};
  std::vector<SharedChoice> passed;          // in walk order, without SL1 twins counted with SL0
  std::array<double, kStageCount> failed{};  // twins rejected at each stage
  double passing = 0;                        // twins that pass level 2
  int undecided = kStageCount;               // where those that pass go on
};

struct Walker {
  const StageContext& ctx;
  const SpaceDomain& dom;
  const std::function<void(const KernelConfig&)>& visit;
  std::array<double, kStageCount> rejected{};
  // Level-2 verdicts of the tilings of one block tile, by SharedChoices::key.
  std::vector<SharedChoices> shared_memo{};
  // Per tiling: shared-memory cost of each (LA, LB, PD), computed when first needed.
  std::vector<double> bank_cost{};
  bool bank_cost_ready = false;
  double bank_cost_min = 0;
  // Per tiling: the raw register estimate depends only on the tiling and the prefetch mode.
  std::array<double, 4> regs_raw{};
  std::array<bool, 4> regs_ready{};
  // The occupancy stage's last verdict under each prefetch mode's registers: consecutive level-2
  // choices of a tiling often differ only in what occupancy does not read (VS, SL).
  struct OccupancyVerdict {
    int threads = -1, registers = -1;
    std::int64_t smem = -1;
    bool enough = false;
  };
  std::array<OccupancyVerdict, 4> last_occupancy{};
  const LevelLoops level2{dom, detail::walk_parameters(2)};
  const LevelLoops level3{dom, detail::walk_parameters(3)};
  const LevelLoops level4{dom, detail::walk_parameters(4)};
  // The shared-memory cost's parameters, for the bank-conflict stage.
  const LevelLoops shared_reads{dom, shared_read_parameters()};
  // Under one level-3 choice (prefetch fixed): the level-4 variants; under one level-2 choice:
  // times the level-3 ones (prefetch modes); under one tiling: times the level-2 ones.
  double sub3 = level4.combinations;
  double sub2 = level3.combinations * sub3;
  double variants = detail::walk_variant_count(dom);
  // The thread tile's sides matter to level 2 only modulo this (the VS values divide it).
  int vs_lcm = [this] {
    int l = 1;
    for (int vs : dom.vec_s)
      if (vs > 0) l = std::lcm(l, vs);
    return l;
  }();

  double raw_registers(const KernelConfig& c) {
    if (c.prefetch < 0 || c.prefetch > 3)
      return raw_register_estimate(c, ctx.problem.precision,
                                   default_register_model(ctx.problem.precision));
    const size_t i = size_t(c.prefetch);
    if (!regs_ready[i]) {
      regs_raw[i] = raw_register_estimate(c, ctx.problem.precision,
                                          default_register_model(ctx.problem.precision));
      regs_ready[i] = true;
    }
    return regs_raw[i];
  }

  bool occupancy_enough(int prefetch, int threads, int registers, std::int64_t smem) {
    OccupancyVerdict& v = last_occupancy[size_t(prefetch) % last_occupancy.size()];
    if (v.threads != threads || v.registers != registers || v.smem != smem) {
      const Occupancy o = occupancy(ctx.device, threads, registers, smem);
      v = {threads, registers, smem,
           o.blocks_per_sm > 0 && o.fraction >= ctx.options.min_occupancy};
    }
    return v.enough;
  }

  // Decides stages from `first` on while they are decidable at `level`: the first failing stage,
  // or the first one left undecided. judge, test and passes are inlined into the loop bodies, as
  // the compiler did by itself into the hand-written loops (the walk is a quarter of predict).
  [[gnu::always_inline]] Verdict judge(const KernelConfig& c, int first, int level) {
    for (int s = first; s < kStageCount; ++s) {
      if (!ctx.options.enabled[size_t(s)]) continue;
      if (kStageLevel[s] > level) return {s, false};
      if (!passes(static_cast<Stage>(s), c)) return {s, true};
    }
    return {kStageCount, false};
  }

  // Tests stages from `first` on while they are decidable at `level`. Returns the first stage
  // left undecided, or -1 after counting the subtree against a failing stage.
  [[gnu::always_inline]] int test(const KernelConfig& c, int first, int level, double subtree) {
    const Verdict v = judge(c, first, level);
    if (!v.failed) return v.stage;
    rejected[size_t(v.stage)] += subtree;
    return -1;
  }

  size_t bank_index(const KernelConfig& c) const {
    size_t pad_index = 0, vs_index = 0;
    while (pad_index < dom.pad.size() && dom.pad[pad_index] != c.pad) ++pad_index;
    while (vs_index < dom.vec_s.size() && dom.vec_s[vs_index] != c.vec_s) ++vs_index;
    return ((size_t(c.smem_a_kmajor) * 2 + size_t(c.smem_b_kmajor)) * dom.pad.size() + pad_index) *
               dom.vec_s.size() +
           vs_index;
  }

  void prepare_bank_costs(const KernelConfig& tiling) {
    bank_cost.assign(4 * dom.pad.size() * dom.vec_s.size(),
                     std::numeric_limits<double>::infinity());
    bank_cost_min = std::numeric_limits<double>::infinity();
    KernelConfig c = tiling;
    // A stage count its main loop runs, as the walk's SharedVector stage has checked unless it is
    // switched off: the layouts' verdicts then do not depend on which ST built the table.
    c.stages = c.async_copy ? std::max(2, c.stages) : std::min(2, c.stages);
    for_each_combination(c, shared_reads, [&] {
      // Only layouts the tiling's family and main loop can run set the least cost.
      if (!detail::shared_vector_ok(c, ctx.problem) || !detail::family_layout_ok(c, ctx.problem) ||
          !detail::main_loop_layout_ok(c, ctx.problem))
        return;
      const double cost = detail::smem_cost(c, ctx.problem);
      bank_cost[bank_index(c)] = cost;
      bank_cost_min = std::min(bank_cost_min, cost);
    });
    bank_cost_ready = true;
  }

  [[gnu::always_inline]] bool passes(Stage s, const KernelConfig& c) {
    const Problem& p = ctx.problem;
    const DeviceSpec& d = ctx.device;
    switch (s) {
      case Stage::LayoutDivides:
        return detail::family_supported(c, p, d) && detail::main_loop_supported(c, p, d) &&
               detail::layout_divides(c, p);
      case Stage::WarpMultiple:
        return c.threads() % d.warp_size == 0;
      case Stage::MaxThreads:
        return c.threads() <= d.max_threads_per_block;
      case Stage::VectorAlignment:
        return detail::vector_aligned(c, p);
      case Stage::SharedVector:
        return (!c.shared32 || c.has_shared32_path()) && detail::shared_vector_ok(c, p) &&
               detail::main_loop_layout_ok(c, p) && detail::family_layout_ok(c, p);
      case Stage::SharedMemory:
        return shared_bytes(c, p.precision) <= d.smem_per_block_optin;
      case Stage::RegistersPerThread:
        return raw_registers(c) <= detail::register_limit(c, d);
      case Stage::RegistersPerBlock:
        return raw_registers(c) * c.threads() <= d.regs_per_block;
      case Stage::ThreadCount:
        return c.threads() >= ctx.min_threads && c.threads() <= ctx.max_threads;
      case Stage::FmasPerLoad:
        return detail::fmas_per_load(c) >= ctx.min_fmas_per_load;
      case Stage::TileFitsProblem:
        return detail::tile_fits(c, ctx);
      case Stage::CoalescedReads:
        return detail::reads_coalesced(c, p);
      case Stage::MinOccupancy:
        return occupancy_enough(c.prefetch, c.threads(),
                                detail::clamp_registers(raw_registers(c), c),
                                shared_bytes(c, p.precision));
      case Stage::BankConflicts: {
        if (!bank_cost_ready) prepare_bank_costs(c);
        const double cost = bank_cost[bank_index(c)];
        if (cost > bank_cost_min) return false;
        // Among equal costs keep the least padding for this pair of layouts.
        KernelConfig q = c;
        for (int pd : dom.pad) {
          if (pd >= c.pad) continue;
          q.pad = pd;
          if (bank_cost[bank_index(q)] <= cost) return false;
        }
        return true;
      }
      case Stage::RelevantVariants:
        return detail::variants_relevant(c, ctx);
      case Stage::Count:
        break;
    }
    return true;
  }

  // Counts `subtree` configurations as the unsplit walk counted the stages before `stage`, and
  // all that reached `stage` against it.
  void reject_like(const std::array<double, kStageCount>& unsplit, Stage stage, double subtree) {
    double reached = subtree;
    for (int s = 0; s < int(stage); ++s) {
      rejected[size_t(s)] += unsplit[size_t(s)];
      reached -= unsplit[size_t(s)];
    }
    rejected[size_t(stage)] += reached;
  }

  bool sl1_counted_with_sl0(const KernelConfig& c) const {
    return ctx.shared32_both && c.has_shared32_path() &&
           ctx.options.enabled[size_t(Stage::RelevantVariants)];
  }

  std::array<int, 10> shared_key(const KernelConfig& c, int first) const {
    // Without cp.async the level-2 stages read neither VA nor VB.
    return {c.blk_m, c.blk_n, c.blk_k,      c.thr_m() % vs_lcm,         c.thr_n() % vs_lcm,
            c.mma,   first,   c.async_copy, c.async_copy ? c.vec_a : 0, c.async_copy ? c.vec_b : 0};
  }

  SharedChoices judge_shared(KernelConfig c, int first) {
    SharedChoices sc;
    sc.key = shared_key(c, first);
    for_each_combination(c, level2, [&] {
      // Where the domain has both widths, an SL1 kernel with the vector loads shares its SL0
      // twin's fate up to relevant_variants, which drops it: it is counted in SL0's walk (twice
      // each rejection, plus one there per survivor) and not walked.
      const bool twin_counted = sl1_counted_with_sl0(c);
      if (twin_counted && c.shared32 == 1) return;
      const double twins = twin_counted ? 2.0 : 1.0;
      const Verdict v = judge(c, first, 2);
      if (v.failed) {
        sc.failed[size_t(v.stage)] += twins;
        return;
      }
      SharedChoice choice{{}, v, twins};
      for (std::size_t i = 0; i < level2.count; ++i) choice.values[i] = level2.loops[i].load(c);
      sc.passed.push_back(choice);
      sc.passing += twins;
      sc.undecided = v.stage;
    });
    return sc;
  }

  // The tiling's level-2 verdicts; valid until the next call.
  const SharedChoices& shared_choices(const KernelConfig& c, int first) {
    const std::array<int, 10> key = shared_key(c, first);
    // Another block tile shares nothing with those remembered.
    if (!shared_memo.empty() &&
        !std::equal(key.begin(), key.begin() + 3, shared_memo.front().key.begin()))
      shared_memo.clear();
    for (const SharedChoices& sc : shared_memo)
      if (sc.key == key) return sc;
    shared_memo.push_back(judge_shared(c, first));
    return shared_memo.back();
  }

  // The first level-3 stage from `first` on that reads the tiling alone (thread count, FMAs per
  // load, tile fit, coalescing) and that it fails, or -1.
  int tiling_failure(const KernelConfig& c, int first) {
    for (int s = std::max(first, int(Stage::ThreadCount)); s <= int(Stage::CoalescedReads); ++s)
      if (ctx.options.enabled[size_t(s)] && !passes(static_cast<Stage>(s), c)) return s;
    return -1;
  }

  // Counts the subtrees of the level-2 choices that fail under one tiling (the counts are whole
  // numbers far below 2^53, so adding them at once is exact).
  void reject_level2_failures(const SharedChoices& sc) {
    for (int s = 0; s < kStageCount; ++s) rejected[size_t(s)] += sc.failed[size_t(s)] * sub2;
  }

  // Counts the whole subtree of a tiling that fails a tiling-only level-3 stage, as the walk
  // would: nothing under it survives, so its level-2 and register verdicts alone place it.
  void reject_tiling(KernelConfig c, const SharedChoices& sc) {
    reject_level2_failures(sc);
    if (sc.passing == 0) return;
    for_each_combination(c, level3, [&] { test(c, sc.undecided, 3, sc.passing * sub3); });
  }

  // Walks the variants of one tiling whose stages before `first` are known to pass.
  void walk_tiling(KernelConfig c, int first = 0) {
    const int s1 = test(c, first, 1, variants);
    if (s1 < 0) return;
    bank_cost_ready = false;
    regs_ready.fill(false);
    const SharedChoices& sc = shared_choices(c, s1);
    if (tiling_failure(c, sc.undecided) >= 0) {
      reject_tiling(c, sc);
      return;
    }
    reject_level2_failures(sc);
    // Consecutive choices differ mostly in their last parameters: only those are set again.
    const SharedChoice* last = nullptr;
    for (const SharedChoice& ch : sc.passed) {
      for (std::size_t i = 0; i < level2.count; ++i)
        if (!last || ch.values[i] != last->values[i]) level2.loops[i].store(c, ch.values[i]);
      last = &ch;
      walk_variants(c, ch.verdict.stage, ch.twins);
    }
  }

  // Walks the level-3 choices (prefetch modes) and the level-4 variants under one tiling and
  // level-2 choice.
  void walk_variants(KernelConfig c, int s2, double twins) {
    const bool twin_counted = twins == 2.0;
    // The level-3 body is inlined too, as the prefetch loop was.
    for_each_combination(
        c, level3, [&]() __attribute__((always_inline)) {
          const int s3 = test(c, s2, 3, sub3 * twins);
          if (s3 < 0) return;
          for_each_combination(c, level4, [&] {
            if (test(c, s3, 4, twins) < 0) return;
            if (twin_counted) rejected[size_t(Stage::RelevantVariants)] += 1;
            visit(c);
          });
        });
  }
};

}  // namespace

namespace {

// One piece of the walk: a block tile (BM, BN, BK) with one DIM_X. Pieces share nothing, so
// they are walked concurrently; their funnel counts add up to those of one serial walk.
struct Piece {
  int bm, bn, bk, dx;
};

struct PieceCounts {
  std::array<double, kStageCount> rejected{};
  double irrelevant_splits = 0;
};

void set_read_layouts(KernelConfig& c, int dxa, int dxb) {
  const int t = c.threads();
  c.dim_xa = dxa;
  c.dim_xb = dxb;
  c.dim_ya = t % dxa == 0 ? t / dxa : -1;  // -1 fails layout_divides
  c.dim_yb = t % dxb == 0 ? t / dxb : -1;
}

// The tiling levels stay specialised, not walked off the table: their splits test A's and B's
// read layouts and vectors, the mma shape and cp.async apart, which no generic loop knows.
// The tilings under one block tile and compute layout (BM, BN, BK, DX, DY fixed), pruned as they
// are generated: the level-1 stages (layout, warp multiple, thread limit, vector alignment) split
// into tests of the read layout of A with VA, of B with VB, of the mma shape and of cp.async
// with VA and VB, so that each rejected part is counted whole against its first failing stage
// without being walked, and only the tilings that pass them all are visited, in the same order.
void walk_block_layout(Walker& w, KernelConfig c) {
  const SpaceDomain& dom = w.dom;
  const Problem& p = w.ctx.problem;
  const DeviceSpec& d = w.ctx.device;
  const double subtree = double(dom.dim_xa.size() * dom.dim_xb.size() * dom.vec_a.size() *
                                dom.vec_b.size() * dom.mma.size() * dom.async_copy.size()) *
                         w.variants;
  auto& rejected = w.rejected;
  if (c.blk_m % c.dim_x || c.blk_n % c.dim_y) {
    rejected[size_t(Stage::LayoutDivides)] += subtree;
    return;
  }
  const int t = c.threads();
  const size_t nxa = dom.dim_xa.size(), nxb = dom.dim_xb.size(), nva = dom.vec_a.size(),
               nvb = dom.vec_b.size(), nmm = dom.mma.size(), nac = dom.async_copy.size();
  // a_ok[xa * nva + va]: A's read layout DXA x DYA with VA divides A's tile; b_ok likewise.
  std::vector<char> a_ok(nxa * nva), b_ok(nxb * nvb), mm_ok(nmm), ac_ok(nac * nva * nvb),
      aligned(nva * nvb);
  const int a_rows = p.op_a == Op::N ? c.blk_m : c.blk_k;
  const int a_cols = p.op_a == Op::N ? c.blk_k : c.blk_m;
  const int b_rows = p.op_b == Op::N ? c.blk_k : c.blk_n;
  const int b_cols = p.op_b == Op::N ? c.blk_n : c.blk_k;
  std::vector<double> a_count(nva), b_count(nvb);
  for (size_t i = 0; i < nxa; ++i)
    for (size_t v = 0; v < nva; ++v) {
      const int x = dom.dim_xa[i];
      const bool ok = t % x == 0 && a_rows % (x * dom.vec_a[v]) == 0 && a_cols % (t / x) == 0;
      a_ok[i * nva + v] = ok;
      a_count[v] += ok;
    }
  for (size_t i = 0; i < nxb; ++i)
    for (size_t v = 0; v < nvb; ++v) {
      const int x = dom.dim_xb[i];
      const bool ok = t % x == 0 && b_rows % (x * dom.vec_b[v]) == 0 && b_cols % (t / x) == 0;
      b_ok[i * nvb + v] = ok;
      b_count[v] += ok;
    }
  double mm_count = 0;
  for (size_t i = 0; i < nmm; ++i) {
    c.mma = dom.mma[i];
    mm_ok[i] = detail::family_supported(c, p, d) && detail::warp_tile_fits(c, p);
    mm_count += mm_ok[i];
  }
  c.mma = 0;
  double passing = 0;  // tilings that pass layout_divides
  std::vector<double> passing_vectors(nva * nvb);
  for (size_t va = 0; va < nva; ++va)
    for (size_t vb = 0; vb < nvb; ++vb) {
      c.vec_a = dom.vec_a[va];
      c.vec_b = dom.vec_b[vb];
      aligned[va * nvb + vb] = detail::vector_aligned(c, p);
      double ac_count = 0;
      for (size_t i = 0; i < nac; ++i) {
        c.async_copy = dom.async_copy[i];
        const bool ok = detail::main_loop_supported(c, p, d);
        ac_ok[(i * nva + va) * nvb + vb] = ok;
        ac_count += ok;
      }
      passing_vectors[va * nvb + vb] = a_count[va] * b_count[vb] * mm_count * ac_count;
      passing += passing_vectors[va * nvb + vb];
    }
  rejected[size_t(Stage::LayoutDivides)] += subtree - passing * w.variants;
  if (t % d.warp_size) {
    rejected[size_t(Stage::WarpMultiple)] += passing * w.variants;
    return;
  }
  if (t > d.max_threads_per_block) {
    rejected[size_t(Stage::MaxThreads)] += passing * w.variants;
    return;
  }
  for (size_t v = 0; v < nva * nvb; ++v)
    if (!aligned[v]) rejected[size_t(Stage::VectorAlignment)] += passing_vectors[v] * w.variants;
  constexpr int kAfterLevel1 = int(Stage::VectorAlignment) + 1;
  for (size_t xa = 0; xa < nxa; ++xa)
    for (size_t xb = 0; xb < nxb; ++xb)
      for (size_t va = 0; va < nva; ++va) {
        if (!a_ok[xa * nva + va]) continue;
        for (size_t vb = 0; vb < nvb; ++vb) {
          if (!b_ok[xb * nvb + vb] || !aligned[va * nvb + vb]) continue;
          for (size_t mm = 0; mm < nmm; ++mm) {
            if (!mm_ok[mm]) continue;
            for (size_t ac = 0; ac < nac; ++ac) {
              if (!ac_ok[(ac * nva + va) * nvb + vb]) continue;
              set_read_layouts(c, dom.dim_xa[xa], dom.dim_xb[xb]);
              c.vec_a = dom.vec_a[va];
              c.vec_b = dom.vec_b[vb];
              c.mma = dom.mma[mm];
              c.async_copy = dom.async_copy[ac];
              w.walk_tiling(c, kAfterLevel1);
            }
          }
        }
      }
}

PieceCounts walk_piece(const StageContext& ctx, const SpaceDomain& dom, const Piece& piece,
                       const std::function<void(const KernelConfig&)>& visit) {
  const ConstraintOptions& options = ctx.options;
  // The split is the one parameter only the tile-fit stage reads, and a split fits only where
  // the unsplit tile does: each (BM, BN, BK) is walked once unsplit, and every configuration
  // that survives is visited once per split that fits.
  // VC is the exception: a split kernel adds into C an element at a time, so for splits VC0 is
  // the relevant variant wherever VC1 is for the unsplit kernel (their fates up to the
  // relevant-variants stage are the same). A split copy of a VC1 survivor is its VC0 twin; where
  // the domain lacks VC0 it is dropped there, counted here.
  std::vector<int> fitting;
  bool unsplit_wanted = false;
  const bool relevance_on = options.enabled[size_t(Stage::RelevantVariants)];
  const bool has_vc0 = enumerates(dom.vec_c, 0);
  PieceCounts counts;
  const std::function<void(const KernelConfig&)> visit_splits = [&](const KernelConfig& c) {
    if (unsplit_wanted) visit(c);
    KernelConfig split = c;
    if (relevance_on && split.vec_c) {
      if (!has_vc0) {
        counts.irrelevant_splits += double(fitting.size());
        return;
      }
      split.vec_c = 0;
    }
    for (int sk : fitting) {
      split.split_k = sk;
      visit(split);
    }
  };
  Walker w{ctx, dom, visit_splits};
  const bool tile_fits_on = options.enabled[size_t(Stage::TileFitsProblem)];
  // Raw configurations under one (BM, BN, BK, SK) and one DIM_X.
  const double per_piece =
      double(dom.dim_y.size() * dom.dim_xa.size() * dom.dim_xb.size() * dom.vec_a.size() *
             dom.vec_b.size() * dom.mma.size() * dom.async_copy.size()) *
      w.variants;
  KernelConfig c;
  c.blk_m = piece.bm;
  c.blk_n = piece.bn;
  c.blk_k = piece.bk;
  int not_fitting = 0;
  for (int sk : dom.split_k) {
    c.split_k = sk;
    if (c.splits() == 1)
      unsplit_wanted = true;
    else if (!tile_fits_on || detail::split_k_fits(c, ctx))
      fitting.push_back(sk);
    else
      ++not_fitting;
  }
  c.split_k = 0;
  c.dim_x = piece.dx;
  const bool level1_on = options.enabled[size_t(Stage::LayoutDivides)] &&
                         options.enabled[size_t(Stage::WarpMultiple)] &&
                         options.enabled[size_t(Stage::MaxThreads)] &&
                         options.enabled[size_t(Stage::VectorAlignment)];
  for (int dy : dom.dim_y) {
    c.dim_y = dy;
    if (level1_on) {
      walk_block_layout(w, c);
      continue;
    }
    for (int dxa : dom.dim_xa)
      for (int dxb : dom.dim_xb)
        for (int va : dom.vec_a)
          for (int vb : dom.vec_b)
            for (int mm : dom.mma)
              for (int ac : dom.async_copy) {
                set_read_layouts(c, dxa, dxb);
                c.vec_a = va;
                c.vec_b = vb;
                c.mma = mm;
                c.async_copy = ac;
                w.walk_tiling(c);
              }
  }
  // The walk counted one copy of the unsplit subtree; each kept split repeats its counts,
  // and each split that does not fit repeats them up to the tile-fit stage.
  const std::array<double, kStageCount> unsplit = w.rejected;
  const double copies = double(fitting.size()) + (unsplit_wanted ? 1 : 0);
  for (int s = 0; s < kStageCount; ++s) w.rejected[size_t(s)] = copies * unsplit[size_t(s)];
  for (int i = 0; i < not_fitting; ++i) w.reject_like(unsplit, Stage::TileFitsProblem, per_piece);
  counts.rejected = w.rejected;
  return counts;
}

}  // namespace

namespace detail {

const std::vector<const TuningParameter*>& walk_parameters(int level) {
  static const std::array<WalkLevel, kLastLevel + 1> levels = declared_walk();
  return levels.at(std::size_t(level));
}

double walk_variant_count(const SpaceDomain& domain) {
  double count = 1;
  for (int level = kLastLevel; level >= kFirstVariantLevel; --level)
    count *= level_count(domain, walk_parameters(level));
  return count;
}

Funnel walk_space(const Problem& problem, const DeviceSpec& device, const SpaceDomain& domain,
                  const ConstraintOptions& options, const OrderedVisit& visit) {
  const SpaceDomain dom = domain.for_precision(problem.precision);
  const StageContext ctx(problem, device, options, dom);
  std::vector<Piece> pieces;
  for (int bm : dom.blk_m)
    for (int bn : dom.blk_n)
      for (int bk : dom.blk_k)
        for (int dx : dom.dim_x) pieces.push_back({bm, bn, bk, dx});
  std::vector<PieceCounts> counts(pieces.size());
  parallel_for(pieces.size(), [&](std::size_t i, int worker) {
    std::uint64_t order = std::uint64_t(i) << 32;
    counts[i] =
        walk_piece(ctx, dom, pieces[i], [&](const KernelConfig& c) { visit(c, order++, worker); });
  });
  // Summed in the serial order, so the funnel does not depend on the schedule.
  std::array<double, kStageCount> rejected{};
  for (const PieceCounts& pc : counts) {
    for (int s = 0; s < kStageCount; ++s) rejected[size_t(s)] += pc.rejected[size_t(s)];
    rejected[size_t(Stage::RelevantVariants)] += pc.irrelevant_splits;
  }
  Funnel f;
  f.raw = dom.tiling_count() * dom.variant_count();
  double remaining = f.raw;
  for (int s = 0; s < kStageCount; ++s) {
    if (!options.enabled[size_t(s)]) continue;
    remaining -= rejected[size_t(s)];
    f.rows.push_back({static_cast<Stage>(s), remaining});
  }
  return f;
}

}  // namespace detail

Funnel enumerate_space(const Problem& problem, const DeviceSpec& device, const SpaceDomain& dom,
                       const ConstraintOptions& options,
                       const std::function<void(const KernelConfig&)>& visit) {
  // Walked on every hardware thread, visited here in the serial order.
  std::vector<std::vector<std::pair<std::uint64_t, KernelConfig>>> found(
      static_cast<std::size_t>(hardware_threads()));
  const Funnel f = detail::walk_space(problem, device, dom, options,
                                      [&](const KernelConfig& c, std::uint64_t order, int worker) {
                                        found[std::size_t(worker)].emplace_back(order, c);
                                      });
  std::vector<std::pair<std::uint64_t, KernelConfig>> all;
  for (auto& part : found) {
    all.insert(all.end(), part.begin(), part.end());
    part = {};
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, c] : all) visit(c);
  return f;
}

Stage first_failing_stage(const Problem& problem, const DeviceSpec& device,
                          const SpaceDomain& domain_in, const ConstraintOptions& options,
                          const KernelConfig& config) {
  const SpaceDomain domain = domain_in.for_precision(problem.precision);
  const StageContext ctx(problem, device, options, domain);
  const std::function<void(const KernelConfig&)> none;
  Walker w{ctx, domain, none};
  for (int s = 0; s < kStageCount; ++s) {
    if (!options.enabled[size_t(s)]) continue;
    if (!w.passes(static_cast<Stage>(s), config)) return static_cast<Stage>(s);
  }
  return Stage::Count;
}

std::vector<KernelConfig> pruned_space(const Problem& problem, const DeviceSpec& device,
                                       const SpaceDomain& domain,
                                       const ConstraintOptions& options) {
  std::vector<KernelConfig> out;
  enumerate_space(problem, device, domain, options,
                  [&](const KernelConfig& c) { out.push_back(c); });
  return out;
}

std::string Funnel::to_table() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "%-22s %-5s %18.0f\n", "raw space", "", raw);
  out += line;
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line, "%-22s %-5s %18.0f\n", stage_name(r.stage),
                  stage_kind(r.stage) == StageKind::Hard ? "hard" : "soft", r.remaining);
    out += line;
  }
  return out;
}

}  // namespace gemmtune
