// Parallel compilation: NVRTC is thread-safe, so one program per worker thread.
#include <atomic>
#include <thread>

#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

std::vector<CompileResult> compile_many(const std::vector<CompileJob>& jobs,
                                        const std::string& arch, const CompileCache* cache,
                                        int threads) {
  std::vector<CompileResult> results(jobs.size());
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, int(std::max<size_t>(1, jobs.size())));
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  auto worker = [&](int id) {
    try {
      for (size_t i = next++; i < jobs.size(); i = next++) {
        const CompileJob& j = jobs[i];
        try {
          results[i] =
              compile_source(render_source(j.config, j.precision, j.op_a, j.op_b), arch, cache);
        } catch (const InputError& e) {
          results[i].ok = false;
          results[i].log = e.what();
        }
      }
    } catch (...) {
      errors[size_t(id)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace gemmtune
