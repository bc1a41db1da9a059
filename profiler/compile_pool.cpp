// Parallel compilation: NVRTC is thread-safe, so one program per worker thread.
#include "kernels/kernels.hpp"
#include "profiler/profiler.hpp"

namespace gemmtune {

std::vector<CompileResult> compile_many(const std::vector<CompileJob>& jobs,
                                        const std::string& arch, const CompileCache* cache,
                                        int threads) {
  std::vector<CompileResult> results(jobs.size());
  parallel_for(
      jobs.size(),
      [&](std::size_t i, int) {
        const CompileJob& j = jobs[i];
        try {
          results[i] = compile_source(render_source(j.config, j.precision, j.op_a, j.op_b, j.batch),
                                      arch, cache);
        } catch (const InputError& e) {
          results[i].ok = false;
          results[i].log = e.what();
        }
      },
      threads);
  return results;
}

}  // namespace gemmtune
