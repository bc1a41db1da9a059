// A fixed pool of threads that takes tasks by index: the walk of the space and NVRTC
// compiles both split into independent pieces of uneven cost, so workers pull the next index
// instead of taking an equal share.
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "core/core.hpp"

namespace gemmtune {

int hardware_threads() {
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_for(std::size_t count, const std::function<void(std::size_t, int)>& body,
                  int threads) {
  if (threads <= 0) threads = hardware_threads();
  threads = int(std::min<std::size_t>(std::size_t(threads), std::max<std::size_t>(1, count)));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  // After a failure the other workers stop taking tasks: the first error is what the caller
  // sees, and nothing after it is worth its time.
  std::atomic<bool> failed{false};
  auto worker = [&](int id) {
    try {
      for (std::size_t i = next++; i < count && !failed; i = next++) body(i, id);
    } catch (...) {
      errors[std::size_t(id)] = std::current_exception();
      failed = true;
    }
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (auto& t : pool) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gemmtune
