// Ranks 1..N-1: evaluate what rank 0 hands out; a watchdog ends a rank that is stuck or whose
// rank 0 is gone, so a lost rank never keeps the job from ending.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "dist/channel.hpp"
#include "dist/dist.hpp"

namespace gemmtune::dist {
namespace {

using detail::Clock;

// Exits the process when nothing touched it for the timeout.
class Watchdog {
 public:
  Watchdog(int rank, double timeout_s) : rank_(rank), timeout_s_(timeout_s) {
    touch();
    thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void touch() { last_ = Clock::now().time_since_epoch().count(); }

 private:
  void watch() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const Clock::time_point last{Clock::duration(last_.load())};
      if (detail::seconds_since(last) > timeout_s_) {
        std::fprintf(stderr,
                     "gemmtune: rank %d: no word from rank 0 and no progress for %.0f s; exiting\n",
                     rank_, timeout_s_);
        std::fflush(stderr);
        _exit(3);
      }
    }
  }
  int rank_;
  double timeout_s_;
  std::atomic<Clock::rep> last_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

int serve(const World& world, const Handler& handler, const Options& options) {
  using namespace detail;
  const LoseHook hook = lose_hook();
  Watchdog watchdog(world.rank(), options.rank_timeout_s);
  int served = 0;
  for (;;) {
    const auto m = poll(0);
    if (!m) {
      pause();
      continue;
    }
    watchdog.touch();
    if (m->tag == kStop) break;
    if (m->tag != kItem) continue;
    if (hook.rank == world.rank() && served == hook.items) {
      std::fprintf(stderr, "gemmtune: test hook: rank %d %s after %d items\n", world.rank(),
                   hook.hang ? "hangs" : "exits", served);
      std::fflush(stderr);
      if (!hook.hang) _exit(3);
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const auto nl = m->text.find('\n');
    const std::string index = m->text.substr(0, nl);
    const auto start = Clock::now();
    std::string summary;
    try {
      summary = handler(m->text.substr(nl + 1), [&](const std::string& result) {
        send(0, kResult, index + "\n" + result);
        watchdog.touch();
      });
    } catch (const std::exception& e) {
      summary = std::string("!") + e.what();
    }
    send(0, kDone, index + " " + std::to_string(seconds_since(start)) + "\n" + summary);
    watchdog.touch();
    ++served;
  }
  return served;
}

}  // namespace gemmtune::dist
