// GpuEvaluator: compile here, measure in a worker process that may die without taking the
// tuning run with it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "profiler/profiler.hpp"

namespace gemmtune {

using nlohmann::json;

GpuEvaluator::GpuEvaluator(std::string executable, TimingOptions timing, double timeout_s)
    : GpuEvaluator(std::move(executable), query_local_device(), timing, timeout_s) {}

GpuEvaluator::GpuEvaluator(std::string executable, DeviceSpec device, TimingOptions timing,
                           double timeout_s)
    : executable_(std::move(executable)),
      timing_(timing),
      timeout_s_(timeout_s),
      device_(std::move(device)),
      cache_(CompileCache::default_directory()) {
  signal(SIGPIPE, SIG_IGN);  // a dead worker must not kill the tuner on the next write
}

GpuEvaluator::~GpuEvaluator() {
  stop_worker();
}

void GpuEvaluator::start_worker() {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a kill reaches whatever the worker started
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    execl(executable_.c_str(), executable_.c_str(), "worker", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  setpgid(pid, pid);  // also here, so the group exists before any kill, whichever runs first
  pid_ = pid;
  to_worker_ = in[1];
  from_worker_ = out[0];
  pending_.clear();
}

void GpuEvaluator::stop_worker() {
  if (pid_ < 0) return;
  close(to_worker_);
  close(from_worker_);
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = to_worker_ = from_worker_ = -1;
}

std::vector<CompiledInfo> GpuEvaluator::compile(const Problem& p,
                                                const std::vector<KernelConfig>& configs) {
  std::vector<CompileJob> jobs;
  for (const auto& c : configs) jobs.push_back({c, p.precision, p.op_a, p.op_b});
  std::vector<CompiledInfo> out;
  for (const auto& r : compile_many(jobs, device_.arch(), &cache_)) out.push_back(r.info());
  return out;
}

// compile_many runs one NVRTC program per hardware thread.
int GpuEvaluator::compile_width() const {
  return hardware_threads();
}

std::vector<Evaluation> GpuEvaluator::measure(const Problem& p,
                                              const std::vector<KernelConfig>& configs) {
  std::vector<Evaluation> out;
  for (const auto& c : configs) out.push_back(measure_one(p, c));
  return out;
}

Evaluation GpuEvaluator::measure_one(const Problem& p, const KernelConfig& c) {
  Evaluation e;
  e.config = c;
  return exchange(json{{"problem", json::parse(problem_to_json(p))},
                       {"config", c.id()},
                       {"repetitions", timing_.repetitions},
                       {"warmup", timing_.warmup},
                       {"counters", timing_.counters},
                       {"energy", timing_.energy}}
                      .dump(),
                  e);
}

std::optional<Evaluation> GpuEvaluator::reference(const Problem& p) {
  const Evaluation e = exchange(json{{"problem", json::parse(problem_to_json(p))},
                                     {"reference", "cublas"},
                                     {"repetitions", timing_.repetitions},
                                     {"warmup", timing_.warmup}}
                                    .dump(),
                                Evaluation{});
  if (!e.ok()) {
    std::fprintf(stderr, "gemmtune: warning: cuBLAS could not be timed on %s: %s\n",
                 p.shape_id().c_str(), e.error.c_str());
    return std::nullopt;
  }
  return e;
}

Evaluation GpuEvaluator::exchange(const std::string& request_line, Evaluation e) {
  if (pid_ < 0) start_worker();
  const std::string request = request_line + "\n";
  auto fail = [&](const std::string& status, const std::string& why) {
    stop_worker();
    ++restarts_;
    e.status = status;
    e.error = why;
    return e;
  };
  if (write(to_worker_, request.data(), request.size()) != ssize_t(request.size()))
    return fail("execute_error", "the worker process died before the request");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  std::string line;
  for (;;) {
    const size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return fail("timeout",
                  "no result within " + std::to_string(timeout_s_) + " s; the worker was killed");
    pollfd pfd{from_worker_, POLLIN, 0};
    if (poll(&pfd, 1, int(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(from_worker_, buf, sizeof buf);
    if (n <= 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      const std::string how = WIFSIGNALED(status)
                                  ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exit status " + std::to_string(WEXITSTATUS(status));
      close(to_worker_);
      close(from_worker_);
      to_worker_ = from_worker_ = -1;
      ++restarts_;
      e.status = "execute_error";
      e.error = "the worker process ended (" + how + ") while measuring";
      return e;
    }
    pending_.append(buf, size_t(n));
  }
  try {
    const json r = json::parse(line);
    e.status = r.at("status");
    e.error = r.value("error", "");
    e.time_s = r.value("median_s", 0.0);
    e.min_s = r.value("min_s", 0.0);
    e.max_s = r.value("max_s", 0.0);
    e.repetitions = r.value("repetitions", 0);
    e.rel_error = r.value("rel_error", 0.0);
    e.registers = r.value("registers", 0);
    e.spill_bytes = r.value("spill_bytes", 0);
    e.energy_j = r.value("energy_j", 0.0);
    if (r.contains("counters")) e.counters_json = r.at("counters").dump();
    // Once per evaluator: the run goes on without what could not be collected.
    for (const char* key : {"counters_error", "energy_error"})
      if (r.contains(key) && warned_.insert(key).second)
        std::fprintf(stderr, "gemmtune: warning: tuning continues without %s: %s\n",
                     key[0] == 'c' ? "counters" : "energy", r.at(key).get<std::string>().c_str());
  } catch (const json::exception& ex) {
    return fail("execute_error", std::string("unreadable reply from the worker: ") + ex.what());
  }
  // A fault poisoned the worker's context: it exits after replying; collect it now.
  if (e.status == "execute_error") {
    stop_worker();
    ++restarts_;
  }
  return e;
}

}  // namespace gemmtune
