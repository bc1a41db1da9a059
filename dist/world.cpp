// MPI's lifetime, and what mpirun tells a process before MPI starts.
#include <mpi.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "dist/dist.hpp"

namespace gemmtune::dist {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}

}  // namespace

int launched_ranks() {
  return env_int("OMPI_COMM_WORLD_SIZE", env_int("PMIX_SIZE", 1));
}

int launched_local_rank() {
  return env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
}

bool survives_lost_ranks() {
  return (env_is("OMPI_MCA_orte_enable_recovery", "1") ||
          env_is("OMPI_MCA_orte_enable_recovery", "true")) &&
         (env_is("OMPI_MCA_orte_abort_on_non_zero_status", "0") ||
          env_is("OMPI_MCA_orte_abort_on_non_zero_status", "false"));
}

World::World() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() {
  std::atomic<bool> finalized{false};
  std::thread guard([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!finalized) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (std::chrono::steady_clock::now() - start >
          std::chrono::duration<double>(finalize_timeout_s)) {
        std::fflush(stdout);
        _exit(exit_code);
      }
    }
  });
  MPI_Finalize();
  finalized = true;
  guard.join();
}

double ScheduleReport::efficiency() const {
  return workers > 0 && seconds > 0 ? worker_busy_s / (workers * seconds) : 0;
}

}  // namespace gemmtune::dist
