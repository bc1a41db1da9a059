#include "dist/channel.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "core/core.hpp"

namespace gemmtune::dist::detail {

void send(int destination, Tag tag, const std::string& text) {
  if (MPI_Send(text.data(), int(text.size()), MPI_CHAR, destination, tag, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    throw std::runtime_error("MPI_Send to rank " + std::to_string(destination) + " failed");
}

std::optional<Message> poll(int source) {
  int flag = 0;
  MPI_Status status;
  if (MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                 &status) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Iprobe failed");
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m{status.MPI_SOURCE, status.MPI_TAG, std::string(size_t(count), '\0')};
  if (MPI_Recv(m.text.data(), count, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Recv from rank " + std::to_string(m.source) + " failed");
  return m;
}

struct Outbox::Pending {
  std::string text;
  MPI_Request request = MPI_REQUEST_NULL;
};

Outbox::Outbox() = default;

Outbox::~Outbox() {
  reap();
  // Sends to lost ranks never complete; their buffers are left to the process's end.
  for (auto& p : pending_) {
    MPI_Request_free(&p->request);
    static_cast<void>(p.release());
  }
}

void Outbox::post(int destination, Tag tag, std::string text) {
  auto p = std::make_unique<Pending>();
  p->text = std::move(text);
  if (MPI_Isend(p->text.data(), int(p->text.size()), MPI_CHAR, destination, tag, MPI_COMM_WORLD,
                &p->request) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Isend to rank " + std::to_string(destination) + " failed");
  pending_.push_back(std::move(p));
}

void Outbox::reap() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int flag = 0;
    MPI_Test(&(*it)->request, &flag, MPI_STATUS_IGNORE);
    it = flag ? pending_.erase(it) : std::next(it);
  }
}

void pause() {
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

LoseHook lose_hook() {
  LoseHook h;
  const char* v = std::getenv("GEMMTUNE_TEST_LOSE_RANK");
  if (!v) return h;
  const std::string s = v;
  const auto colon = s.find(':');
  if (colon == std::string::npos)
    throw InputError("GEMMTUNE_TEST_LOSE_RANK '" + s + "' is not RANK:ITEMS[:hang]");
  h.rank = std::stoi(s.substr(0, colon));
  h.items = std::stoi(s.substr(colon + 1));
  h.hang = s.find(":hang") != std::string::npos;
  return h;
}

}  // namespace gemmtune::dist::detail
