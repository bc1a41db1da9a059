// The tuning parameters, declared once: token, macro, member, values per domain, refinement,
// place in the space walk.
#include <algorithm>
#include <type_traits>

#include "core/core.hpp"

namespace gemmtune {
namespace {

template <auto Member>
int get(const KernelConfig& c) {
  return static_cast<int>(c.*Member);
}
template <auto Member>
void set(KernelConfig& c, int value) {
  c.*Member = static_cast<std::remove_cvref_t<decltype(c.*Member)>>(value);
}

constexpr unsigned kSimt = kRegisterStagedSimt | kCpAsyncSimt;

constexpr bool positive(int v) {
  return v > 0;
}
constexpr bool flag(int v) {
  return v == 0 || v == 1;
}
constexpr bool vector_width(int v) {
  return v == 1 || v == 2 || v == 4;
}
// Global loads of 16-bit elements reach 16 bytes with 8 of them; at most 16 bytes for any type.
constexpr bool load_width(int v) {
  return vector_width(v) || v == 8;
}
constexpr const char* kSize = "a positive number of elements or threads";
constexpr const char* kVector = "1, 2 or 4 (elements per access)";
constexpr const char* kLoadVector = "1, 2, 4 or 8 (elements per access, at most 16 bytes)";
constexpr unsigned kRegisterStaged = kRegisterStagedSimt | kMma;

std::vector<TuningParameter> declare() {
  using K = KernelConfig;
  using D = SpaceDomain;
  const std::vector<int> tile{16, 32, 64, 96, 128, 192, 256}, tile_compact{32, 64, 128, 256};
  const std::vector<int> layout{4, 8, 16, 32, 64}, layout_compact{8, 16, 32};
  const std::vector<int> read_layout{1, 2, 4, 8, 16, 32, 64, 128, 256};
  const std::vector<int> vector{1, 2, 4}, vector_compact{1, 4};
  return {
      {.token = "BM",
       .get = get<&K::blk_m>,
       .set = set<&K::blk_m>,
       .macro = "BLK_M",
       .source_rank = 1,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::blk_m,
       .full = tile,
       .compact = tile_compact,
       .tiling = true,
       .ordered = true,
       .refine_rank = 1,
       .families = kEveryFamily},
      {.token = "BN",
       .get = get<&K::blk_n>,
       .set = set<&K::blk_n>,
       .macro = "BLK_N",
       .source_rank = 2,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::blk_n,
       .full = tile,
       .compact = tile_compact,
       .tiling = true,
       .ordered = true,
       .refine_rank = 2,
       .families = kEveryFamily},
      {.token = "BK",
       .get = get<&K::blk_k>,
       .set = set<&K::blk_k>,
       .macro = "BLK_K",
       .source_rank = 3,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::blk_k,
       .full = {4, 8, 16, 32},
       .compact = {8, 16, 32},
       .reduced = {64},
       .tiling = true,
       .ordered = true,
       .refine_rank = 3,
       .families = kEveryFamily},
      {.token = "DX",
       .get = get<&K::dim_x>,
       .set = set<&K::dim_x>,
       .macro = "DIM_X",
       .source_rank = 4,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::dim_x,
       .full = layout,
       .compact = layout_compact,
       .tiling = true,
       .ordered = true,
       .refine_rank = 4,
       .families = kEveryFamily},
      {.token = "DY",
       .get = get<&K::dim_y>,
       .set = set<&K::dim_y>,
       .macro = "DIM_Y",
       .source_rank = 5,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::dim_y,
       .full = layout,
       .compact = layout_compact,
       .tiling = true,
       .ordered = true,
       .refine_rank = 5,
       .families = kEveryFamily},
      {.token = "DXA",
       .get = get<&K::dim_xa>,
       .set = set<&K::dim_xa>,
       .macro = "DIM_XA",
       .source_rank = 6,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::dim_xa,
       .full = read_layout,
       .tiling = true,
       .ordered = true,
       .refine_rank = 6,
       .families = kEveryFamily},
      {.token = "DYA",
       .get = get<&K::dim_ya>,
       .set = set<&K::dim_ya>,
       .macro = "DIM_YA",
       .source_rank = 7,
       .valid = positive,
       .meaning = kSize,
       .families = kEveryFamily},
      {.token = "DXB",
       .get = get<&K::dim_xb>,
       .set = set<&K::dim_xb>,
       .macro = "DIM_XB",
       .source_rank = 8,
       .valid = positive,
       .meaning = kSize,
       .domain = &D::dim_xb,
       .full = read_layout,
       .tiling = true,
       .ordered = true,
       .refine_rank = 7,
       .families = kEveryFamily},
      {.token = "DYB",
       .get = get<&K::dim_yb>,
       .set = set<&K::dim_yb>,
       .macro = "DIM_YB",
       .source_rank = 9,
       .valid = positive,
       .meaning = kSize,
       .families = kEveryFamily},
      {.token = "VA",
       .get = get<&K::vec_a>,
       .set = set<&K::vec_a>,
       .macro = "VEC_A",
       .source_rank = 10,
       .valid = load_width,
       .meaning = kLoadVector,
       .domain = &D::vec_a,
       .full = vector,
       .compact = vector_compact,
       .reduced = {8},  // 16 bytes of 16-bit elements
       .tiling = true,
       .ordered = true,
       .refine_rank = 8,
       .families = kEveryFamily,
       .variable_batch = 1},
      {.token = "VB",
       .get = get<&K::vec_b>,
       .set = set<&K::vec_b>,
       .macro = "VEC_B",
       .source_rank = 11,
       .valid = load_width,
       .meaning = kLoadVector,
       .domain = &D::vec_b,
       .full = vector,
       .compact = vector_compact,
       .reduced = {8},  // 16 bytes of 16-bit elements
       .tiling = true,
       .ordered = true,
       .refine_rank = 9,
       .families = kEveryFamily,
       .variable_batch = 1},
      {.token = "LA",
       .get = get<&K::smem_a_kmajor>,
       .set = set<&K::smem_a_kmajor>,
       .macro = "LA_KMAJOR",
       .source_rank = 12,
       .valid = flag,
       .meaning = "0 (the A tile in shared as [M][K]) or 1 (as [K][M])",
       .domain = &D::smem_a_kmajor,
       .full = {0, 1},
       .refine_values = {0, 1},
       .refine_rank = 17,
       .walk_level = 2,
       .walk_rank = 3,
       .walk_member = &K::smem_a_kmajor,
       .families = kEveryFamily},
      {.token = "LB",
       .get = get<&K::smem_b_kmajor>,
       .set = set<&K::smem_b_kmajor>,
       .macro = "LB_KMAJOR",
       .source_rank = 13,
       .valid = flag,
       .meaning = "0 (the B tile in shared as [N][K]) or 1 (as [K][N])",
       .domain = &D::smem_b_kmajor,
       .full = {0, 1},
       .refine_values = {0, 1},
       .refine_rank = 18,
       .walk_level = 2,
       .walk_rank = 4,
       .walk_member = &K::smem_b_kmajor,
       .families = kEveryFamily},
      // 4: conflict-free transposed stores of 8-deep tiles
      {.token = "PD",
       .get = get<&K::pad>,
       .set = set<&K::pad>,
       .macro = "PAD",
       .source_rank = 14,
       .valid = [](int v) { return v >= 0 && v <= 16; },
       .meaning = "0..16 (elements of padding per shared row)",
       .domain = &D::pad,
       .full = {0, 1, 2, 3, 4},
       // 16-bit rows of 64 (128 bytes) need 8 or 16 to spread the fragment reads over the banks
       .reduced = {8, 16},
       .ordered = true,
       .refine_values = {0, 1, 2, 3, 4},
       .refine_rank = 16,
       .walk_level = 2,
       .walk_rank = 2,
       .walk_member = &K::pad,
       .families = kEveryFamily},
      {.token = "PF",
       .get = get<&K::prefetch>,
       .set = set<&K::prefetch>,
       .macro = "PREFETCH",
       .source_rank = 15,
       .valid = [](int v) { return v >= 0 && v <= 3; },
       .meaning = "0..3 (register prefetch: none, A, B, both)",
       .domain = &D::prefetch,
       .full = {0, 1, 2, 3},
       .compact = {0, 3},
       .refine_values = {0, 1, 2, 3},
       .refine_rank = 19,
       .walk_level = 3,
       .walk_rank = 7,
       .walk_member = &K::prefetch,
       .families = kRegisterStaged},
      // 3 and 4 with the cp.async pipeline only
      {.token = "ST",
       .get = get<&K::stages>,
       .set = set<&K::stages>,
       .macro = "STAGES",
       .source_rank = 16,
       .valid = [](int v) { return v >= 1 && v <= 4; },
       .meaning = "1..4 (shared buffers)",
       .domain = &D::stages,
       .full = {1, 2, 3, 4},
       .compact = {2},
       .ordered = true,
       .refine_rank = 10,
       .walk_level = 2,
       .walk_rank = 1,
       .walk_member = &K::stages,
       .families = kEveryFamily},
      // Partial unrolls are explored by refinement only.
      {.token = "UR",
       .get = get<&K::unroll>,
       .set = set<&K::unroll>,
       .macro = "UNROLL",
       .source_rank = 17,
       .valid = [](int v) { return v >= 0; },
       .meaning = "0 (full unroll) or a partial unroll factor",
       .domain = &D::unroll,
       .full = {0},
       .refine_values = {0, 1, 2, 4, 8},
       .refine_rank = 20,
       .walk_level = 4,
       .walk_rank = 8,
       .walk_member = &K::unroll,
       .families = kEveryFamily},
      {.token = "RS",
       .get = get<&K::raster>,
       .set = set<&K::raster>,
       .macro = "RASTER",
       .source_rank = 19,
       .valid = positive,
       .meaning = "1 (no rasterization) or more (tile columns per group)",
       .domain = &D::raster,
       .full = {1, 8},
       .ordered = true,
       .refine_values = {1, 2, 4, 8, 16},
       .refine_rank = 21,
       .walk_level = 4,
       .walk_rank = 10,
       .walk_member = &K::raster,
       .families = kEveryFamily},
      {.token = "VS",
       .get = get<&K::vec_s>,
       .set = set<&K::vec_s>,
       .macro = "VEC_S",
       .source_rank = 20,
       .valid = vector_width,
       .meaning = kVector,
       .domain = &D::vec_s,
       .full = vector,
       .compact = vector_compact,
       .ordered = true,
       .refine_values = vector,
       .refine_rank = 22,
       .walk_level = 2,
       .walk_rank = 5,
       .walk_member = &K::vec_s,
       .families = kEveryFamily},
      {.token = "ED",
       .get = get<&K::edge>,
       .set = set<&K::edge>,
       .macro = "EDGE_REDIRECT",
       .source_rank = 18,
       .valid = flag,
       .meaning = "the edge mode, 0 (predicate) or 1 (redirect)",
       .domain = &D::edge,
       .full = {0, 1},
       .refine_values = {0, 1},
       .refine_rank = 23,
       .walk_level = 4,
       .walk_rank = 9,
       .families = kRegisterStaged},
      {.token = "MM",
       .get = get<&K::mma>,
       .set = set<&K::mma>,
       .macro = "GT_MMA",
       .source_rank = 21,
       .optional = true,
       .valid = [](int v) { return v >= 0 && v <= 4; },
       .meaning = "0 (SIMT), 1 (FP64 tensor cores, m8n8k4), 2 (m16n8k4), 3 (m16n8k8) or 4 "
                  "(m16n8k16); H and B take 3 or 4, T 2 or 3",
       .domain = &D::mma,
       .full = {0, 1, 2, 3, 4},
       .compact = {0},
       .tensor = {1, 2, 3, 4},
       .tiling = true,
       .refine_rank = 11,
       .families = kMma},
      {.token = "AC",
       .get = get<&K::async_copy>,
       .set = set<&K::async_copy>,
       .macro = "ASYNC_COPY",
       .source_rank = 22,
       .optional = true,
       .valid = flag,
       .meaning = "0 (register staging) or 1 (cp.async pipeline)",
       .domain = &D::async_copy,
       .full = {0, 1},
       .compact = {0},
       .tiling = true,
       .refine_rank = 12,
       .families = kCpAsyncSimt | kMma},
      // Only problems with few tiles of C keep a split past the tile-fit stage, so large
      // problems pay nothing for them.
      {.token = "SK",
       .get = get<&K::split_k>,
       .set = set<&K::split_k>,
       .macro = "SPLIT_K",
       .macro_when = MacroWhen::Split,
       .source_rank = 26,
       .optional = true,
       .valid = [](int v) { return v == 0 || (v >= 2 && v <= 64); },
       .meaning = "0 (no split-K) or 2..64 (blocks per tile of C along K)",
       .domain = &D::split_k,
       .full = {0, 2, 4, 8, 16, 32, 64},
       .compact = {0},
       .tensor = {0},
       .tiling = true,
       .ordered = true,
       .refine_rank = 13,
       .families = kEveryFamily,
       .variable_batch = 0},
      {.token = "VC",
       .get = get<&K::vec_c>,
       .set = set<&K::vec_c>,
       .macro = "VEC_C",
       .source_rank = 23,
       .optional = true,
       .valid = flag,
       .meaning = "0 (C stored an element at a time) or 1 (VS rows at a time; mma kernels: staged "
                  "through shared memory, 16 bytes a lane)",
       .domain = &D::vec_c,
       .full = {0, 1},
       .compact = {0},
       .refine_rank = 14,
       .walk_level = 4,
       .walk_rank = 11,
       .walk_member = &K::vec_c,
       .families = kEveryFamily},
      {.token = "SL",
       .get = get<&K::shared32>,
       .set = set<&K::shared32>,
       .macro = "LDS32",
       .macro_when = MacroWhen::Set,
       .source_rank = 24,
       .optional = true,
       .valid = flag,
       .meaning = "0 (fragment loads on 64-bit shared addresses) or 1 (on 32-bit ones, VS > 1 SIMT "
                  "only)",
       .domain = &D::shared32,
       .full = {0, 1},
       .compact = {0},
       .refine_rank = 15,
       .walk_level = 2,
       .walk_rank = 6,
       .walk_member = &K::shared32,
       .families = kSimt},
  };
}

}  // namespace

const std::vector<TuningParameter>& tuning_parameters() {
  static const std::vector<TuningParameter> table = declare();
  return table;
}

const TuningParameter& tuning_parameter(std::string_view token) {
  std::vector<std::string> tokens;
  for (const TuningParameter& p : tuning_parameters()) {
    if (token == p.token) return p;
    tokens.emplace_back(p.token);
  }
  throw InputError("unknown configuration id key '" + std::string(token) +
                   "' (known: " + join(tokens, ", ") + ")");
}

SpaceDomain::SpaceDomain() {
  for (const TuningParameter& p : tuning_parameters())
    if (p.domain) this->*p.domain = p.full;
}

SpaceDomain SpaceDomain::named(const std::string& name) {
  SpaceDomain d;
  if (name == "full") return d;
  // wide: the full domain with every value refinement steps to (partial unrolls, rasters), which
  // hold many tunes' bests; ranked whole only where predict's time allows.
  if (name == "wide") {
    for (const TuningParameter& p : tuning_parameters())
      if (p.domain)
        for (int v : p.refine_values)
          if (!enumerates(d.*p.domain, v)) (d.*p.domain).push_back(v);
    return d;
  }
  // tensor: the full domain's tensor-core kernels only (FP64: D and Z), for sweeps that give
  // the calibration the tensor-pipe, cp.async and stage data the compact sweeps lack. compact:
  // as recorded in tests/data, sweeps from before the tensor-core and cp.async kernels.
  if (name != "compact" && name != "tensor")
    throw InputError("space domain '" + name + "' is not one of full, wide, compact, tensor");
  const bool compact = name == "compact";
  for (const TuningParameter& p : tuning_parameters()) {
    const std::vector<int>& values = compact ? p.compact : p.tensor;
    if (p.domain && !values.empty()) d.*p.domain = values;
  }
  // The floor the recorded sweeps were taken under: a lower one would leave them incomplete.
  if (compact) d.short_k_min_fmas_per_load = 48;
  return d;
}

std::vector<int> TuningParameter::values_for(std::vector<int> values, Precision p) const {
  if (is_reduced(p))
    for (int v : reduced)
      if (!enumerates(values, v)) values.push_back(v);
  return values;
}

SpaceDomain SpaceDomain::for_precision(Precision p) const {
  SpaceDomain d = *this;
  for (const TuningParameter& t : tuning_parameters())
    if (t.domain) d.*t.domain = t.values_for(d.*t.domain, p);
  return d;
}

double SpaceDomain::tiling_count() const {
  double count = 1;
  for (const TuningParameter& p : tuning_parameters())
    if (p.domain && p.tiling) count *= double((this->*p.domain).size());
  return count;
}

double SpaceDomain::variant_count() const {
  double count = 1;
  for (const TuningParameter& p : tuning_parameters())
    if (p.domain && !p.tiling) count *= double((this->*p.domain).size());
  return count;
}

KernelConfig variable_batch_config(KernelConfig c) {
  for (const TuningParameter& p : tuning_parameters())
    if (p.variable_batch) p.set(c, *p.variable_batch);
  return c;
}

SpaceDomain variable_batch_domain(SpaceDomain domain) {
  for (const TuningParameter& p : tuning_parameters())
    if (p.variable_batch && p.domain) domain.*p.domain = {*p.variable_batch};
  return domain;
}

}  // namespace gemmtune
