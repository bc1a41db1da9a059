// The learned correction: a tree ensemble over named features of the problem, the configuration
// and the analytical terms. The terms rank what first principles see; the trees learn where a
// GPU departs from them in ways no single term expresses (which tile wins a small complex
// problem, when split-K or cp.async pays), and a problem never seen is described by the same
// features as the recorded ones. Fitted by XGBoost (fit_learned.cpp); evaluated here from its
// JSON model, so prediction needs no XGBoost at run time.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "model/model.hpp"

namespace gemmtune {
namespace {

double log2_of(double v) {
  return std::log2(std::max(v, 1e-30));
}

struct Input {
  const Problem& p;
  const KernelConfig& c;
  const Prediction& r;
  double share(double term) const { return r.time_s > 0 ? term / r.time_s : 0.0; }
};

struct Feature {
  const char* name;
  double (*value)(const Input&);
};

// Of the problem; of the configuration as a whole (its parameters follow, from the config's
// own column list); of the analytical prediction made without any correction.
constexpr Feature kProblemFeatures[] = {
    {"m_log2", [](const Input& in) { return log2_of(double(in.p.m)); }},
    {"n_log2", [](const Input& in) { return log2_of(double(in.p.n)); }},
    {"k_log2", [](const Input& in) { return log2_of(double(in.p.k)); }},
    {"batch_log2", [](const Input& in) { return log2_of(double(in.p.batch)); }},
    {"precision_s", [](const Input& in) { return in.p.precision == Precision::S ? 1.0 : 0.0; }},
    {"precision_d", [](const Input& in) { return in.p.precision == Precision::D ? 1.0 : 0.0; }},
    {"precision_c", [](const Input& in) { return in.p.precision == Precision::C ? 1.0 : 0.0; }},
    {"precision_z", [](const Input& in) { return in.p.precision == Precision::Z ? 1.0 : 0.0; }},
    {"precision_h", [](const Input& in) { return in.p.precision == Precision::H ? 1.0 : 0.0; }},
    {"precision_b", [](const Input& in) { return in.p.precision == Precision::B ? 1.0 : 0.0; }},
    {"precision_t", [](const Input& in) { return in.p.precision == Precision::T ? 1.0 : 0.0; }},
    {"a_transposed", [](const Input& in) { return in.p.op_a != Op::N ? 1.0 : 0.0; }},
    {"b_transposed", [](const Input& in) { return in.p.op_b != Op::N ? 1.0 : 0.0; }},
    {"beta_nonzero",
     [](const Input& in) {
       return in.p.beta != Scalar{0.0, 0.0} ? 1.0 : 0.0;
     }},
    {"leading_dims_unaligned",
     [](const Input& in) { return in.p.lda % 4 || in.p.ldb % 4 || in.p.ldc % 4 ? 1.0 : 0.0; }},
};

constexpr Feature kTermFeatures[] = {
    {"thread_tile_m_log2", [](const Input& in) { return log2_of(double(in.c.thr_m())); }},
    {"thread_tile_n_log2", [](const Input& in) { return log2_of(double(in.c.thr_n())); }},
    {"threads_log2", [](const Input& in) { return log2_of(double(in.c.threads())); }},
    {"registers", [](const Input& in) { return double(in.r.registers); }},
    {"predicted_log", [](const Input& in) { return std::log(std::max(in.r.time_s, 1e-30)); }},
    {"compute_share", [](const Input& in) { return in.share(in.r.t_compute); }},
    {"shared_share", [](const Input& in) { return in.share(in.r.t_smem); }},
    {"issue_share", [](const Input& in) { return in.share(in.r.t_issue); }},
    {"l2_share", [](const Input& in) { return in.share(in.r.t_l2); }},
    {"dram_share", [](const Input& in) { return in.share(in.r.t_dram); }},
    {"latency_share", [](const Input& in) { return in.share(in.r.t_latency); }},
    {"launch_share", [](const Input& in) { return in.share(in.r.t_launch); }},
    {"store_share", [](const Input& in) { return in.share(in.r.t_store); }},
    {"split_pass_share", [](const Input& in) { return in.share(in.r.t_split_pass); }},
    {"tiles_log2", [](const Input& in) { return log2_of(double(in.r.tiles) + 1); }},
    {"wave_efficiency", [](const Input& in) { return in.r.wave_efficiency; }},
    {"occupancy", [](const Input& in) { return in.r.occ.fraction; }},
    {"blocks_per_sm", [](const Input& in) { return double(in.r.occ.blocks_per_sm); }},
    {"fmas_per_tile_log2",
     [](const Input& in) {
       return log2_of(in.r.fma_count / double(std::max<std::int64_t>(1, in.r.tiles)) + 1);
     }},
    {"dram_bytes_log2", [](const Input& in) { return log2_of(in.r.dram_bytes + 1); }},
    {"l2_bytes_log2", [](const Input& in) { return log2_of(in.r.l2_bytes + 1); }},
    {"tile_waste_m",
     [](const Input& in) {
       const double tiles = std::ceil(double(in.p.m) / in.c.blk_m);
       return tiles * in.c.blk_m / double(in.p.m);
     }},
    {"tile_waste_n",
     [](const Input& in) {
       const double tiles = std::ceil(double(in.p.n) / in.c.blk_n);
       return tiles * in.c.blk_n / double(in.p.n);
     }},
};

// XGBoost splits on 32-bit floats: a row goes left when its value is below the threshold.
// Stored with each node's two children side by side (left, then right), in 12 bytes, so a walk
// down a tree reads few cache lines.
struct Node {
  int child = -1;   // the left child's index (the right one follows it); -1 for a leaf
  int feature = 0;  // split feature
  float value = 0;  // the threshold, or the leaf's output
};
// Missing values (none of the features is ever NaN; kept for XGBoost's semantics) go the way
// the fit chose for them: bit 30 of `feature` set means right.
constexpr int kMissingGoesRight = 1 << 30;

// The leaf a row reaches from node i.
float leaf(const Node* nodes, int i, const std::vector<float>& f) {
  const Node* n = nodes + i;
  while (n->child >= 0) {
    const float v = f[std::size_t(n->feature & ~kMissingGoesRight)];
    const int right = std::isnan(v) ? (n->feature & kMissingGoesRight ? 1 : 0) : !(v < n->value);
    n = nodes + n->child + right;
  }
  return n->value;
}

int depth_below(const std::vector<Node>& nodes, int i) {
  const Node& n = nodes[std::size_t(i)];
  if (n.child < 0) return 0;
  return 1 + std::max(depth_below(nodes, n.child), depth_below(nodes, n.child + 1));
}

// The trees again, each as a complete binary tree of one depth in heap order (node i's children
// at 2i + 1 and 2i + 2, a leaf above the last level repeated below it), walked several at a
// time: every row takes the same steps, so the walks neither mispredict branches nor wait on one
// load at a time. Rows with a missing (NaN) value take the nodes instead.
struct Split {
  int feature = 0;
  float threshold = 0;
};
constexpr int kMaxCompleteDepth = 8;     // deeper trees would take too much memory complete
constexpr std::size_t kInterleaved = 8;  // trees walked together

void fill_complete(const std::vector<Node>& nodes, int i, std::size_t at, int levels_left,
                   Split* splits, float* leaves, std::size_t internal) {
  const Node& n = nodes[std::size_t(i)];
  if (levels_left == 0) {
    leaves[at - internal] = n.value;
    return;
  }
  // Below a leaf, splits that send a row either way to a copy of it.
  const bool split = n.child >= 0;
  if (split) splits[at] = {n.feature & ~kMissingGoesRight, n.value};
  fill_complete(nodes, split ? n.child : i, 2 * at + 1, levels_left - 1, splits, leaves, internal);
  fill_complete(nodes, split ? n.child + 1 : i, 2 * at + 2, levels_left - 1, splits, leaves,
                internal);
}

}  // namespace

struct TreeEnsemble::Trees {
  std::vector<Node> nodes;
  std::vector<int> roots;
  double base = 0;
  std::size_t features = 0;
  int depth = 0;              // of the complete trees; 0 where they are not built
  std::vector<Split> splits;  // 2^depth - 1 per tree, for a multiple of kInterleaved trees
  std::vector<float> leaves;  // 2^depth per tree

  void build_complete() {
    int deepest = 0;
    for (int root : roots) deepest = std::max(deepest, depth_below(nodes, root));
    if (deepest > kMaxCompleteDepth) return;
    depth = deepest;
    const std::size_t internal = (std::size_t(1) << depth) - 1;
    const std::size_t padded = (roots.size() + kInterleaved - 1) / kInterleaved * kInterleaved;
    splits.assign(padded * internal, Split{});
    leaves.assign(padded * (internal + 1), 0.0f);
    for (std::size_t t = 0; t < roots.size(); ++t)
      fill_complete(nodes, roots[t], 0, depth, splits.data() + t * internal,
                    leaves.data() + t * (internal + 1), internal);
  }

  // The sum over the trees for row f; with tails, it stops as soon as the sum so far and the
  // least the trees left can add exceed `above`, and returns that bound. The leaves are added
  // in the trees' order either way, so a sum taken to the end is always the same.
  double sum(const std::vector<float>& f, const double* tails, double above) const {
    const bool complete =
        !splits.empty() && std::none_of(f.begin(), f.end(), [](float v) { return std::isnan(v); });
    const std::size_t internal = (std::size_t(1) << depth) - 1;
    double s = base;
    for (std::size_t t = 0; t < roots.size(); t += kInterleaved) {
      const std::size_t end = std::min(roots.size(), t + kInterleaved);
      if (complete) {
        std::array<std::size_t, kInterleaved> at{};
        const Split* block = splits.data() + t * internal;
        for (int level = 0; level < depth; ++level)
          for (std::size_t j = 0; j < kInterleaved; ++j) {
            const Split& sp = block[j * internal + at[j]];
            at[j] = 2 * at[j] + 1 + std::size_t(!(f[std::size_t(sp.feature)] < sp.threshold));
          }
        for (std::size_t u = t; u < end; ++u)
          s += leaves[u * (internal + 1) + at[u - t] - internal];
      } else {
        for (std::size_t u = t; u < end; ++u) s += leaf(nodes.data(), roots[u], f);
      }
      if (tails && s + tails[end] > above) return s + tails[end];
    }
    return s;
  }
};

const std::vector<std::string>& learned_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& f : kProblemFeatures) n.emplace_back(f.name);
    for (const auto& h : config_csv_header()) n.push_back("config_" + h);
    for (const auto& f : kTermFeatures) n.emplace_back(f.name);
    return n;
  }();
  return names;
}

void learned_problem_features(const Problem& p, std::vector<float>& out) {
  const KernelConfig c;
  const Prediction r;
  const Input in{p, c, r};
  out.clear();
  for (const auto& f : kProblemFeatures) out.push_back(float(f.value(in)));
}

namespace {
// The features after the problem's: the configuration's parameters, then the prediction's terms.
void append_config_features(const Problem& p, const KernelConfig& c, const Prediction& uncorrected,
                            std::vector<float>& out) {
  const Input in{p, c, uncorrected};
  thread_local std::vector<int> parameters;
  config_csv_values(c, parameters);
  for (int v : parameters) out.push_back(float(v));
  for (const auto& f : kTermFeatures) out.push_back(float(f.value(in)));
}
}  // namespace

void learned_features(const Problem& p, const KernelConfig& c, const Prediction& uncorrected,
                      std::vector<float>& out) {
  learned_problem_features(p, out);
  append_config_features(p, c, uncorrected, out);
}

void learned_features(const std::vector<float>& leading, const Problem& p, const KernelConfig& c,
                      const Prediction& uncorrected, std::vector<float>& out) {
  out.assign(leading.begin(), leading.end());
  append_config_features(p, c, uncorrected, out);
}

TreeEnsemble::TreeEnsemble() = default;
TreeEnsemble::~TreeEnsemble() = default;
// The trees never change once read: copies share them.
TreeEnsemble::TreeEnsemble(const TreeEnsemble&) = default;
TreeEnsemble& TreeEnsemble::operator=(const TreeEnsemble&) = default;

TreeEnsemble TreeEnsemble::from_xgboost_json(const std::string& text) {
  TreeEnsemble e;
  if (text.empty()) return e;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    auto t = std::make_shared<Trees>();
    const auto& learner = j.at("learner");
    // "5E-1", or "[5E-1]" as newer XGBoost writes it.
    std::string base = learner.at("learner_model_param").at("base_score").get<std::string>();
    base.erase(
        std::remove_if(base.begin(), base.end(), [](char c) { return c == '[' || c == ']'; }),
        base.end());
    t->base = std::stod(base);
    t->features = std::size_t(
        std::stoul(learner.at("learner_model_param").at("num_feature").get<std::string>()));
    const auto names = learner.value("feature_names", std::vector<std::string>{});
    if (t->features != learned_feature_names().size() ||
        (!names.empty() && names != learned_feature_names()))
      throw InputError("the learned correction was fitted on " + std::to_string(t->features) +
                       " features" + (names.empty() ? "" : " (" + join(names, ", ") + ")") +
                       ", this model has " + std::to_string(learned_feature_names().size()) + " (" +
                       join(learned_feature_names(), ", ") + ")");
    for (const auto& tree : learner.at("gradient_booster").at("model").at("trees")) {
      const auto left = tree.at("left_children").get<std::vector<int>>();
      const auto right = tree.at("right_children").get<std::vector<int>>();
      const auto index = tree.at("split_indices").get<std::vector<int>>();
      const auto cond = tree.at("split_conditions").get<std::vector<float>>();
      const auto dleft = tree.at("default_left").get<std::vector<int>>();
      if (right.size() != left.size() || index.size() != left.size() ||
          cond.size() != left.size() || dleft.size() != left.size())
        throw InputError("a tree's node arrays differ in length");
      // Breadth-first, so that the two children of a node are adjacent.
      t->roots.push_back(int(t->nodes.size()));
      std::vector<std::pair<int, int>> queue{{0, int(t->nodes.size())}};  // (xgboost id, slot)
      t->nodes.emplace_back();
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const auto [id, slot] = queue[q];
        if (id < 0 || std::size_t(id) >= left.size())
          throw InputError("a tree names node " + std::to_string(id) + " of " +
                           std::to_string(left.size()));
        Node& n = t->nodes[std::size_t(slot)];
        n.value = cond[std::size_t(id)];
        if (left[std::size_t(id)] < 0) continue;
        // XGBoost numbers children after their parent: anything else is a damaged file (and
        // could loop).
        if (left[std::size_t(id)] <= id || right[std::size_t(id)] <= id)
          throw InputError("node " + std::to_string(id) +
                           " of a tree has a child numbered before it");
        const int feature = index[std::size_t(id)];
        if (feature < 0 || std::size_t(feature) >= t->features)
          throw InputError("a split reads feature " + std::to_string(feature) + " of " +
                           std::to_string(t->features));
        n.feature = feature | (dleft[std::size_t(id)] ? 0 : kMissingGoesRight);
        n.child = int(t->nodes.size());
        queue.emplace_back(left[std::size_t(id)], n.child);
        queue.emplace_back(right[std::size_t(id)], n.child + 1);
        t->nodes.emplace_back();
        t->nodes.emplace_back();
      }
    }
    t->build_complete();
    e.trees_ = std::move(t);
  } catch (const nlohmann::json::exception& ex) {
    throw InputError(std::string("the learned correction is not an XGBoost JSON model: ") +
                     ex.what());
  } catch (const std::logic_error& ex) {  // std::stod's invalid_argument and out_of_range
    throw InputError(std::string("the learned correction has an unreadable number: ") + ex.what());
  }
  // Kept as read: it is only written back out, and re-serializing a megabyte of trees cost every
  // calibrated command about 10 ms.
  e.json = text;
  return e;
}

std::string TreeEnsemble::compact_xgboost_json(const std::string& text) {
  static const std::set<std::string> kRead = {"left_children", "right_children", "split_indices",
                                              "split_conditions", "default_left"};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    for (auto& tree : j.at("learner").at("gradient_booster").at("model").at("trees"))
      for (auto it = tree.begin(); it != tree.end();)
        it = kRead.count(it.key()) ? std::next(it) : tree.erase(it);
  } catch (const nlohmann::json::exception& ex) {
    throw InputError(std::string("the learned correction is not an XGBoost JSON model: ") +
                     ex.what());
  }
  return j.dump();
}

double TreeEnsemble::evaluate(const std::vector<float>& f) const {
  return trees_ ? trees_->sum(f, nullptr, 0.0) : 0.0;
}

double TreeEnsemble::evaluate_unless_above(const std::vector<float>& f,
                                           const std::vector<double>& tails, double above) const {
  return trees_ ? trees_->sum(f, tails.data(), above) : 0.0;
}

namespace {
// The least leaf below node i, following the known features' branches and both of the others.
double least_leaf(const std::vector<Node>& nodes, int i, const std::vector<float>& known) {
  const Node& n = nodes[std::size_t(i)];
  if (n.child < 0) return n.value;
  const std::size_t feature = std::size_t(n.feature & ~kMissingGoesRight);
  if (feature < known.size())
    return least_leaf(nodes, n.child + !(known[feature] < n.value), known);
  return std::min(least_leaf(nodes, n.child, known), least_leaf(nodes, n.child + 1, known));
}
}  // namespace

std::vector<double> TreeEnsemble::least_tails(const std::vector<float>& leading) const {
  if (!trees_) return {0.0};
  std::vector<double> tails(trees_->roots.size() + 1, 0.0);
  for (std::size_t t = trees_->roots.size(); t-- > 0;)
    tails[t] = tails[t + 1] + least_leaf(trees_->nodes, trees_->roots[t], leading);
  return tails;
}

namespace {
// The least leaf below node i that a row inside the box can reach: both ways where the box spans
// the threshold (or a bound is NaN).
double least_leaf_within(const std::vector<Node>& nodes, int i, const FeatureBox& box) {
  const Node& n = nodes[std::size_t(i)];
  if (n.child < 0) return n.value;
  const std::size_t feature = std::size_t(n.feature & ~kMissingGoesRight);
  const bool some_left = !(box.lo[feature] >= n.value);
  const bool some_right = !(box.hi[feature] < n.value);
  if (!some_right) return least_leaf_within(nodes, n.child, box);
  if (!some_left) return least_leaf_within(nodes, n.child + 1, box);
  return std::min(least_leaf_within(nodes, n.child, box),
                  least_leaf_within(nodes, n.child + 1, box));
}
}  // namespace

void FeatureBox::include(const std::vector<float>& row) {
  if (lo.empty()) {
    lo = hi = row;
    return;
  }
  if (row.size() != lo.size())
    throw InputError("a feature row of " + std::to_string(row.size()) + " values joins a box of " +
                     std::to_string(lo.size()));
  for (std::size_t i = 0; i < row.size(); ++i) {
    const float v = row[i];
    if (std::isnan(v) || std::isnan(lo[i])) {
      lo[i] = hi[i] = std::numeric_limits<float>::quiet_NaN();
    } else {
      lo[i] = std::min(lo[i], v);
      hi[i] = std::max(hi[i], v);
    }
  }
}

double TreeEnsemble::least_within(const FeatureBox& box) const {
  if (!trees_) return 0.0;
  if (box.lo.size() != trees_->features || box.hi.size() != trees_->features)
    throw InputError("a feature box of " + std::to_string(box.lo.size()) + " values for trees of " +
                     std::to_string(trees_->features) + " features");
  double s = trees_->base;
  for (int root : trees_->roots) s += least_leaf_within(trees_->nodes, root, box);
  return s;
}

std::size_t TreeEnsemble::tree_count() const {
  return trees_ ? trees_->roots.size() : 0;
}

}  // namespace gemmtune
