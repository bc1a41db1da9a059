// Rank 0: dynamic scheduling of work items, with lost ranks' items handed again.
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <stdexcept>

#include "dist/channel.hpp"
#include "dist/dist.hpp"

namespace gemmtune::dist {
namespace {

using detail::Clock;
using detail::seconds_since;

// What rank 0 knows of one worker.
struct Held {
  bool busy = false, lost = false;
  size_t item = 0;
  Clock::time_point sent, heard, posted;
  double handout_s = 0;
  std::vector<std::string> results;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// "index\nrest" -> index, rest.
std::pair<size_t, std::string> split_index(const std::string& text) {
  const auto nl = text.find('\n');
  return {size_t(std::stoull(text.substr(0, nl))),
          nl == std::string::npos ? "" : text.substr(nl + 1)};
}

}  // namespace

ScheduleReport schedule(const World& world, const std::vector<std::string>& payloads,
                        const std::function<void(size_t, ItemOutcome&&)>& done,
                        const Options& options) {
  using namespace detail;
  const auto start = Clock::now();
  const LoseHook hook = lose_hook();
  std::vector<Held> ranks(size_t(world.size()));
  std::deque<size_t> queue;
  for (size_t i = 0; i < payloads.size(); ++i) queue.push_back(i);
  ScheduleReport report;
  report.workers = world.size() - 1;
  std::vector<double> round_trips, handling;
  Outbox out;
  auto stop_all = [&] {
    for (int r = 1; r < world.size(); ++r)
      if (!ranks[size_t(r)].lost) out.post(r, kStop, "");
  };
  size_t finished = 0;
  auto handing_out = [&] {
    return options.hand_out_s <= 0 || seconds_since(start) < options.hand_out_s;
  };
  auto any_busy = [&] {
    return std::any_of(ranks.begin(), ranks.end(), [](const Held& h) { return h.busy; });
  };
  try {
    while (finished < payloads.size() && (handing_out() || any_busy())) {
      for (int r = 1; r < world.size() && !queue.empty() && handing_out(); ++r) {
        Held& h = ranks[size_t(r)];
        if (h.busy || h.lost) continue;
        const auto t = Clock::now();
        h.item = queue.front();
        queue.pop_front();
        out.post(r, kItem, std::to_string(h.item) + "\n" + payloads[h.item]);
        h.busy = true;
        h.sent = h.heard = h.posted = Clock::now();
        h.results.clear();
        h.handout_s = seconds_since(t);
      }
      bool received = false;
      while (auto m = poll()) {
        received = true;
        Held& h = ranks[size_t(m->source)];
        if (h.lost || !h.busy) continue;  // a lost rank's late words, or an idle rank's
        h.heard = Clock::now();
        auto [index, rest] = split_index(m->text);
        if (index != h.item) continue;
        if (m->tag == kResult) {
          h.results.push_back(std::move(rest));
        } else if (m->tag == kDone) {
          const auto t = Clock::now();
          const auto space = m->text.find(' ');
          const double work_s = std::stod(m->text.substr(space + 1));
          if (rest.starts_with("!"))
            throw std::runtime_error("rank " + std::to_string(m->source) + " failed item " +
                                     std::to_string(index) + ": " + rest.substr(1));
          round_trips.push_back(seconds_since(h.sent) - work_s);
          report.worker_busy_s += work_s;
          h.busy = false;
          done(index, ItemOutcome{std::move(h.results), std::move(rest), m->source, work_s});
          ++finished;
          handling.push_back(h.handout_s + seconds_since(t));
          if (hook.rank == 0 && int(finished) == hook.items) {
            std::fprintf(stderr, "gemmtune: test hook: rank 0 exits after %zu items\n", finished);
            _exit(3);
          }
        }
      }
      for (int r = 1; r < world.size(); ++r) {
        Held& h = ranks[size_t(r)];
        if (h.lost) continue;
        if (h.busy && seconds_since(h.heard) > options.rank_timeout_s) {
          h.lost = true;
          h.busy = false;
          queue.push_front(h.item);
          ++report.reassigned;
          const std::string why = "no word for " + std::to_string(int(options.rank_timeout_s)) +
                                  " s while it held item " + std::to_string(h.item);
          report.lost.push_back({r, why});
          std::fprintf(stderr, "gemmtune: rank %d lost (%s); the item goes to another rank\n", r,
                       why.c_str());
        } else if (!h.busy && seconds_since(h.posted) > options.rank_timeout_s / 4) {
          out.post(r, kKeepAlive, "");
          h.posted = Clock::now();
        }
      }
      if (int(report.lost.size()) == report.workers && finished < payloads.size())
        throw std::runtime_error("every worker rank was lost with " +
                                 std::to_string(payloads.size() - finished) + " items left");
      out.reap();
      if (!received) pause();
    }
  } catch (...) {
    stop_all();  // the workers end too, rather than wait for their watchdog
    throw;
  }
  stop_all();
  report.items = int(finished);
  report.seconds = seconds_since(start);
  report.round_trip_overhead_ms = median(round_trips) * 1e3;
  report.rank0_ms = median(handling) * 1e3;
  return report;
}

double simulated_makespan(const std::vector<double>& item_seconds, int workers, double round_trip_s,
                          double rank0_s) {
  if (workers < 1)
    throw InputError("a simulation needs at least one worker, not " + std::to_string(workers));
  // Each worker's time of freedom; rank 0 serves one item at a time, in hand-out order.
  std::vector<double> free_at(size_t(workers), 0);
  double rank0_free = 0, makespan = 0;
  for (double work : item_seconds) {
    auto next = std::min_element(free_at.begin(), free_at.end());
    const double handed = std::max(*next, rank0_free) + rank0_s;
    rank0_free = handed;
    *next = handed + round_trip_s + work;
    makespan = std::max(makespan, *next);
  }
  return makespan;
}

}  // namespace gemmtune::dist
