// Every rank agrees on what it runs before anything is measured.
#include <vector>

#include "core/core.hpp"
#include "dist/channel.hpp"
#include "dist/dist.hpp"

namespace gemmtune::dist {

std::string handshake(const World& world, const std::string& identity,
                      const std::optional<std::string>& setup_error, const std::string& setup,
                      const Options& options) {
  using namespace detail;
  const auto start = Clock::now();
  if (world.rank() != 0) {
    send(0, kHello, identity);
    for (;;) {
      if (auto m = poll(0); m && m->tag == kVerdict) {
        if (m->text.empty() || m->text[0] != '+') throw InputError(m->text.substr(1));
        return m->text.substr(1);
      }
      if (seconds_since(start) > options.rank_timeout_s)
        throw std::runtime_error("rank 0 did not answer in " +
                                 std::to_string(int(options.rank_timeout_s)) + " s");
      pause();
    }
  }
  std::vector<bool> heard(size_t(world.size()), false);
  std::string refusal = setup_error.value_or("");
  for (int waiting = world.size() - 1; waiting > 0;) {
    if (auto m = poll(); m && m->tag == kHello && !heard[size_t(m->source)]) {
      heard[size_t(m->source)] = true;
      --waiting;
      if (refusal.empty() && m->text != identity)
        refusal = "rank " + std::to_string(m->source) + " runs " + m->text + "; rank 0 runs " +
                  identity + ": every rank must run the same build with the same space";
    } else if (seconds_since(start) > options.rank_timeout_s) {
      std::string missing;
      for (int r = 1; r < world.size(); ++r)
        if (!heard[size_t(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      throw std::runtime_error("ranks " + missing + " did not start within " +
                               std::to_string(int(options.rank_timeout_s)) + " s");
    } else if (!m) {
      pause();
    }
  }
  const std::string verdict = refusal.empty() ? "+" + setup : "-" + refusal;
  for (int r = 1; r < world.size(); ++r) send(r, kVerdict, verdict);
  if (!refusal.empty()) throw InputError(refusal);
  return setup;
}

}  // namespace gemmtune::dist
