// Text messages between ranks, with the tags of the protocol (internal to dist).
#pragma once

#include <chrono>
#include <list>
#include <memory>
#include <optional>
#include <string>

namespace gemmtune::dist::detail {

enum Tag : int {
  kHello = 1,  // worker -> 0: identity
  kVerdict,    // 0 -> worker: "+" then the setup, or "-" then the refusal
  kItem,       // 0 -> worker: item index, newline, payload
  kResult,     // worker -> 0: item index, newline, one result
  kDone,       // worker -> 0: item index, work seconds, newline, summary
  kKeepAlive,  // 0 -> idle worker: rank 0 is still there
  kStop,       // 0 -> worker: no more items
};

struct Message {
  int source = 0;
  int tag = 0;
  std::string text;
};

// Blocking send (workers to rank 0: rank 0 is always receiving).
void send(int destination, Tag tag, const std::string& text);

// A pending message of any tag from `source` (-1: any rank), received; nothing when none waits.
std::optional<Message> poll(int source = -1);

// Sends that never block the sender: a message to a dead rank must not stall rank 0. Buffers
// stay alive until their send completes; those to lost ranks are dropped at the end.
class Outbox {
 public:
  Outbox();
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  void post(int destination, Tag tag, std::string text);
  void reap();  // frees what has been delivered

 private:
  struct Pending;
  std::list<std::unique_ptr<Pending>> pending_;
};

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
// Waits a little between polls: latency stays far below a millisecond, and idle ranks sharing a
// core with busy ones do not take it from them.
void pause();

// The test hook GEMMTUNE_TEST_LOSE_RANK="R:K" (or "R:K:hang"): rank R exits (or hangs) once it
// has finished K items; rank 0 exits after storing K items.
struct LoseHook {
  int rank = -1, items = 0;
  bool hang = false;
};
LoseHook lose_hook();

}  // namespace gemmtune::dist::detail
