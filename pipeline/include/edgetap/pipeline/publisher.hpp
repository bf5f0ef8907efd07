// The track socket: a Unix stream socket serving one NDJSON line per processed
// frame per camera to any number of subscribers.
//
// A subscriber may first send one hello line
//   {"subscribe": ["cam1", ...], "format": "ndjson" | "cbor"}
// to choose cameras (default: all) and the encoding: NDJSON lines (default) or
// a stream of CBOR maps with the same fields. Nothing is sent before the hello's
// reply: a subscriber receives messages once its hello is answered, or when it sent
// none within kHelloWait of connecting (or shut down its sending side). A subscriber
// that half-closes still receives. Every subscriber has a bounded queue: when
// it is full the oldest message is dropped and counted, and the count rides in
// the "dropped" field of the next message it receives. Writes are non-blocking
// on one I/O thread, so a stalled or vanished subscriber never slows tracking.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/pipeline/message_sink.hpp"

namespace spdlog { class logger; }

namespace edgetap::pipeline {

// How long a new subscriber's hello is awaited before the stream starts without one.
inline constexpr std::chrono::milliseconds kHelloWait{500};

struct PublisherStats {
  std::size_t subscribers = 0;
  std::uint64_t messages = 0;          // published (before fan-out)
  std::uint64_t subscriber_drops = 0;  // summed over subscribers, past and present
};

class Publisher final : public MessageSink {
 public:
  Publisher(std::string socket_path, std::size_t queue_capacity, std::shared_ptr<spdlog::logger> log);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Binds and listens (mode 0660), then serves on its own thread.
  bool start(std::string& error);
  void stop();

  // Queues `json` (one object, no newline) for every subscriber of `camera`.
  // Thread-safe; never blocks on a subscriber.
  void publish(const std::string& camera, const std::string& json) override;

  PublisherStats stats() const;
  const std::string& path() const noexcept { return path_; }

 private:
  struct Encoded;
  struct Subscriber;
  void serve();
  void accept_clients();
  void read_hello(Subscriber& s);
  // Answers the hello `line` (nullopt: longer than the limit), queueing the reply first.
  void answer_hello(Subscriber& s, const std::optional<std::string>& line);
  void flush(Subscriber& s);
  void wake();

  const std::string path_;
  const std::size_t capacity_;
  std::shared_ptr<spdlog::logger> log_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> running_{false};
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Subscriber>> subscribers_;
  std::uint64_t messages_ = 0;
  std::uint64_t past_drops_ = 0;  // of subscribers that have left
};

}  // namespace edgetap::pipeline
