#include "edgetap/pipeline/publisher.hpp"

#include "edgetap/pipeline/hello.hpp"
#include "edgetap/pipeline/unix_listener.hpp"
#include "edgetap/pipeline/wire_format.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>

namespace edgetap::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHelloBytes = 64 * 1024;
constexpr int kMessagesPerWakeup = 64;
constexpr auto kPollInterval = std::chrono::milliseconds(500);

std::string errno_text() { return std::strerror(errno); }

}  // namespace

// One message in every encoding some subscriber wants.
struct Publisher::Encoded {
  std::string json;
  std::string cbor;  // empty unless a CBOR subscriber wants it
};

struct Publisher::Subscriber {
  struct Entry {
    std::shared_ptr<const Encoded> message;
    bool tracks = true;  // a track message (gets the "dropped" field) or a reply
  };
  int fd = -1;
  std::set<std::string> cameras;  // empty: all
  wire::Format format = wire::Format::ndjson;
  std::deque<Entry> queue;
  std::uint64_t dropped_pending = 0;
  std::uint64_t dropped_total = 0;
  std::string out;  // bytes being written
  std::size_t out_offset = 0;
  std::string in;   // hello bytes read so far
  Clock::time_point connected = Clock::now();
  bool hello_done = false;
  bool read_closed = false;  // the subscriber shut down its sending side: it may still read
  bool close_after_flush = false;
  bool dead = false;

  ~Subscriber() {
    if (fd >= 0) ::close(fd);
  }
  bool wants(const std::string& camera) const { return cameras.empty() || cameras.count(camera) > 0; }
  bool has_output() const { return out_offset < out.size() || !queue.empty(); }
  // Nothing is sent before the hello reply: until the hello is read, or no hello can come
  // (nothing arrived within kHelloWait, or the subscriber stopped sending).
  bool streaming(Clock::time_point now) const {
    return hello_done || read_closed || (in.empty() && now >= hello_deadline());
  }
  Clock::time_point hello_deadline() const { return connected + kHelloWait; }
};

Publisher::Publisher(std::string socket_path, std::size_t queue_capacity, std::shared_ptr<spdlog::logger> log)
    : path_(std::move(socket_path)), capacity_(queue_capacity), log_(std::move(log)) {}

Publisher::~Publisher() { stop(); }

bool Publisher::start(std::string& error) {
  listen_fd_ = listen_unix(path_, 0660, error);
  if (listen_fd_ < 0) return false;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  running_ = true;
  thread_ = std::thread([this] { serve(); });
  log_->info("track socket listening on {}", path_);
  return true;
}

void Publisher::stop() {
  if (running_.exchange(false)) {
    wake();
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  subscribers_.clear();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink(path_.c_str());
    listen_fd_ = -1;
  }
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
    wake_fd_ = -1;
  }
}

void Publisher::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void Publisher::publish(const std::string& camera, const std::string& json) {
  {
    std::lock_guard lock(mutex_);
    ++messages_;
    auto encoded = std::make_shared<Encoded>();
    encoded->json = json;
    const bool cbor_wanted = std::any_of(subscribers_.begin(), subscribers_.end(), [&](const auto& s) {
      return s->format == wire::Format::cbor && s->wants(camera);
    });
    if (cbor_wanted) encoded->cbor = wire::cbor_of(json);
    std::shared_ptr<const Encoded> shared = std::move(encoded);
    for (auto& s : subscribers_) {
      if (s->dead || s->close_after_flush || !s->wants(camera)) continue;
      if (s->queue.size() >= capacity_) {
        s->queue.pop_front();
        ++s->dropped_pending;
        ++s->dropped_total;
      }
      s->queue.push_back({shared, true});
    }
  }
  wake();
}

PublisherStats Publisher::stats() const {
  std::lock_guard lock(mutex_);
  PublisherStats stats;
  stats.subscribers = subscribers_.size();
  stats.messages = messages_;
  stats.subscriber_drops = past_drops_;
  for (const auto& s : subscribers_) stats.subscriber_drops += s->dropped_total;
  return stats;
}

void Publisher::accept_clients() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto s = std::make_unique<Subscriber>();
    s->fd = fd;
    subscribers_.push_back(std::move(s));
    log_->info("subscriber connected ({} now)", subscribers_.size());
  }
}

void Publisher::read_hello(Subscriber& s) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(s.fd, buffer, sizeof(buffer), 0);
    if (n == 0) {
      // A half-close ends the subscriber's input, not the stream: it still reads the reply and
      // the messages. Unfinished hello bytes are the hello (the end of input ends its line).
      s.read_closed = true;
      if (!s.hello_done && !s.in.empty()) answer_hello(s, s.in);
      return;
    }
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) s.dead = true;
      return;
    }
    if (s.hello_done) continue;  // anything after the hello is ignored
    s.in.append(buffer, static_cast<std::size_t>(n));
    const std::size_t newline = s.in.find('\n');
    if (newline != std::string::npos) {
      answer_hello(s, s.in.substr(0, newline));
    } else if (s.in.size() >= kMaxHelloBytes) {
      answer_hello(s, std::nullopt);
    }
  }
}

void Publisher::answer_hello(Subscriber& s, const std::optional<std::string>& line) {
  s.hello_done = true;
  s.in.clear();
  const std::string error = line ? parse_hello(*line, s.cameras, s.format) : "hello line longer than 64 KiB";
  nlohmann::ordered_json reply;
  reply["v"] = 1;
  s.queue.clear();  // the stream, in the chosen encoding and cameras, starts after the reply
  if (error.empty()) {
    reply["type"] = "hello";
    reply["subscribe"] = s.cameras.empty() ? nlohmann::ordered_json("all") : nlohmann::ordered_json(s.cameras);
    reply["format"] = s.format == wire::Format::cbor ? "cbor" : "ndjson";
  } else {
    reply["type"] = "error";
    reply["error"] = error;
    s.close_after_flush = true;
    log_->warn("subscriber sent a bad hello: {}", error);
  }
  auto encoded = std::make_shared<Encoded>();
  encoded->json = reply.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace);
  if (error.empty() && s.format == wire::Format::cbor) encoded->cbor = wire::cbor_of(encoded->json);
  s.queue.push_front({std::move(encoded), false});
}

void Publisher::flush(Subscriber& s) {
  for (int sent = 0; sent < kMessagesPerWakeup; ++sent) {
    if (s.out_offset >= s.out.size()) {
      if (s.queue.empty()) break;
      const Subscriber::Entry entry = std::move(s.queue.front());
      s.queue.pop_front();
      const Encoded& m = *entry.message;
      const bool cbor = s.format == wire::Format::cbor && !m.cbor.empty();  // a failed hello's reply stays JSON
      if (entry.tracks) {
        s.out = cbor ? wire::cbor_with_dropped(m.cbor, s.dropped_pending)
                     : wire::ndjson_with_dropped(m.json, s.dropped_pending);
        s.dropped_pending = 0;
      } else {
        s.out = cbor ? m.cbor : m.json + "\n";
      }
      s.out_offset = 0;
    }
    while (s.out_offset < s.out.size()) {
      const ssize_t n = ::send(s.fd, s.out.data() + s.out_offset, s.out.size() - s.out_offset, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) s.dead = true;
        return;
      }
      s.out_offset += static_cast<std::size_t>(n);
    }
  }
  if (s.close_after_flush && !s.has_output()) s.dead = true;
}

void Publisher::serve() {
  std::vector<pollfd> fds;
  while (running_) {
    std::chrono::milliseconds wait = kPollInterval;
    {
      std::lock_guard lock(mutex_);
      const Clock::time_point now = Clock::now();
      fds.assign({{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}});
      for (const auto& s : subscribers_) {
        const bool sending = s->streaming(now) && s->has_output();
        // A half-closed subscriber is polled for nothing: POLLHUP still reports that it left.
        fds.push_back({s->fd, static_cast<short>((s->read_closed ? 0 : POLLIN) | (sending ? POLLOUT : 0)), 0});
        if (!s->streaming(now) && s->in.empty()) {  // wake when its hello is no longer awaited
          wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(s->hello_deadline() - now));
        }
      }
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0 && errno != EINTR) {
      log_->error("poll: {}", errno_text());
      break;
    }
    std::uint64_t counter = 0;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &counter, sizeof(counter));
    std::lock_guard lock(mutex_);
    if (fds[1].revents & POLLIN) accept_clients();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      for (auto& s : subscribers_) {
        if (s->fd != fds[i].fd) continue;
        if (!s->read_closed && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
          read_hello(*s);
        } else if (s->read_closed && (fds[i].revents & (POLLHUP | POLLERR))) {
          s->dead = true;  // gone for good: its reading side closed too
        }
        break;
      }
    }
    const Clock::time_point now = Clock::now();
    for (auto& s : subscribers_) {
      if (!s->dead && s->streaming(now) && s->has_output()) flush(*s);
    }
    for (auto it = subscribers_.begin(); it != subscribers_.end();) {
      if (!(*it)->dead) {
        ++it;
        continue;
      }
      past_drops_ += (*it)->dropped_total;
      it = subscribers_.erase(it);
      log_->info("subscriber left ({} now)", subscribers_.size());
    }
  }
}

}  // namespace edgetap::pipeline
