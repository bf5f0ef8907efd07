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
// on one I/O thread, so a stalled or vanished subscriber never slows tracking;
// the I/O thread reads and writes sockets without holding the lock that
// publish() takes. Anything a subscriber sends after its hello is discarded,
// and one that sends more than kMaxBytesAfterHello is dropped. Subscribers
// beyond max_subscribers are refused: they receive one error line, then EOF.
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

#include "edgetap/publish/accept_pause.hpp"
#include "edgetap/publish/camera_directory.hpp"
#include "edgetap/publish/message_sink.hpp"

namespace spdlog { class logger; }

namespace edgetap::pipeline {

// How long a new subscriber's hello is awaited before the stream starts without one.
inline constexpr std::chrono::milliseconds kHelloWait{500};
// Bytes a subscriber may send after its hello line before it is dropped.
inline constexpr std::size_t kMaxBytesAfterHello = 64 * 1024;

struct PublisherOptions {
  std::size_t max_subscribers = 64;  // publisher.max_subscribers
  std::string group;                 // publisher.group: the socket file's group ("" = the daemon's)
  // The daemon's cameras (it must outlive the publisher): a hello naming a camera
  // not in it is answered with an error listing them; null: names are not checked.
  const CameraDirectory* directory = nullptr;
};

struct PublisherStats {
  std::size_t subscribers = 0;
  std::uint64_t messages = 0;          // published (before fan-out)
  std::uint64_t subscriber_drops = 0;  // summed over subscribers, past and present
  std::uint64_t refused = 0;           // subscribers turned away at max_subscribers
};

class Publisher final : public MessageSink {
 public:
  Publisher(std::string socket_path, std::size_t queue_capacity, std::shared_ptr<spdlog::logger> log,
            PublisherOptions options = {});
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
  // The I/O thread's loop and its steps. Only this thread adds or removes
  // subscribers; it takes mutex_ for that and for what publish() also touches
  // (each subscriber's queue, drop counts, cameras and format), never for I/O.
  void serve();
  void accept_clients();
  void refuse(int fd);
  void read_from(Subscriber& s);
  // Answers the hello `line` (nullopt: longer than the limit), queueing the reply first.
  void answer_hello(Subscriber& s, const std::optional<std::string>& line);
  void flush(Subscriber& s);
  void remove_dead();
  void trim_if_due(std::chrono::steady_clock::time_point now, std::chrono::milliseconds& wait);
  void wake();

  const std::string path_;
  const std::size_t capacity_;
  const PublisherOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::unique_ptr<AcceptPause> accept_pause_;  // I/O thread only
  std::chrono::steady_clock::time_point refusals_logged_{};  // I/O thread only
  std::uint64_t refusals_unlogged_ = 0;                       // I/O thread only
  std::chrono::steady_clock::time_point trim_at_{};           // I/O thread only; {}: none due
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Subscriber>> subscribers_;
  std::uint64_t messages_ = 0;
  std::uint64_t past_drops_ = 0;  // of subscribers that have left
  std::uint64_t refused_ = 0;
};

}  // namespace edgetap::pipeline
