#include "edgetap/publish/publisher.hpp"

#include "edgetap/publish/hello.hpp"
#include "edgetap/thread_name.hpp"
#include "edgetap/publish/unix_listener.hpp"
#include "edgetap/publish/wire_format.hpp"

#include <fcntl.h>
#include <malloc.h>
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
constexpr int kReadsPerWakeup = 16;      // of 4 KiB: a flooding subscriber cannot hold the loop
constexpr int kAcceptsPerWakeup = 64;
constexpr std::size_t kKeptOutBytes = 64 * 1024;  // a larger idle write buffer is given back
constexpr auto kPollInterval = std::chrono::milliseconds(500);
constexpr auto kRefusalLogEvery = std::chrono::seconds(10);
constexpr auto kTrimAfter = std::chrono::seconds(1);

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
  std::size_t after_hello = 0;  // bytes received after the hello (discarded)
  Clock::time_point connected = Clock::now();
  bool hello_done = false;
  bool read_closed = false;  // the subscriber shut down its sending side: it may still read
  bool close_after_flush = false;
  bool dead = false;

  ~Subscriber() {
    if (fd >= 0) ::close(fd);
  }
  bool wants(const std::string& camera) const { return cameras.empty() || cameras.count(camera) > 0; }
  bool has_output() const { return out_offset < out.size() || !queue.empty(); }  // under the lock
  // Nothing is sent before the hello reply: until the hello is read, or no hello can come
  // (nothing arrived within kHelloWait, or the subscriber stopped sending).
  bool streaming(Clock::time_point now) const {
    return hello_done || read_closed || (in.empty() && now >= hello_deadline());
  }
  Clock::time_point hello_deadline() const { return connected + kHelloWait; }
};

Publisher::Publisher(std::string socket_path, std::size_t queue_capacity, std::shared_ptr<spdlog::logger> log,
                     PublisherOptions options)
    : path_(std::move(socket_path)),
      capacity_(queue_capacity),
      options_(std::move(options)),
      log_(std::move(log)),
      accept_pause_(std::make_unique<AcceptPause>("track socket", log_)) {}

Publisher::~Publisher() { stop(); }

bool Publisher::start(std::string& error) {
  listen_fd_ = listen_unix(path_, 0660, options_.group, error);
  if (listen_fd_ < 0) return false;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  running_ = true;
  thread_ = std::thread([this] { serve(); });
  log_->info("track socket listening on {} (at most {} subscribers)", path_, options_.max_subscribers);
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
      if (s->close_after_flush || !s->wants(camera)) continue;
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
  stats.refused = refused_;
  for (const auto& s : subscribers_) stats.subscriber_drops += s->dropped_total;
  return stats;
}

void Publisher::accept_clients() {
  for (int accepted = 0; accepted < kAcceptsPerWakeup; ++accepted) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (!accept_error_is_transient(errno)) accept_pause_->failed(errno, Clock::now());
      return;
    }
    accept_pause_->succeeded();
    if (subscribers_.size() >= options_.max_subscribers) {
      refuse(fd);
      continue;
    }
    auto s = std::make_unique<Subscriber>();
    s->fd = fd;
    std::size_t count = 0;
    {
      std::lock_guard lock(mutex_);
      subscribers_.push_back(std::move(s));
      count = subscribers_.size();
    }
    log_->info("subscriber connected ({} now)", count);
  }
}

// One error line and EOF: the client learns why instead of waiting on a silent socket.
void Publisher::refuse(int fd) {
  const std::string line = nlohmann::ordered_json{{"v", 1},
                                                  {"type", "error"},
                                                  {"error", "too many subscribers (publisher.max_subscribers is " +
                                                                std::to_string(options_.max_subscribers) + ")"}}
                               .dump() +
                           "\n";
  {
    std::lock_guard lock(mutex_);
    ++refused_;  // counted before the client can see its refusal
  }
  [[maybe_unused]] ssize_t n = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
  ++refusals_unlogged_;
  const Clock::time_point now = Clock::now();
  if (now - refusals_logged_ >= kRefusalLogEvery) {
    log_->warn("refused {} subscriber(s): at the limit of {} (publisher.max_subscribers)", refusals_unlogged_,
               options_.max_subscribers);
    refusals_logged_ = now;
    refusals_unlogged_ = 0;
  }
}

void Publisher::read_from(Subscriber& s) {
  char buffer[4096];
  for (int reads = 0; reads < kReadsPerWakeup; ++reads) {
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
    std::size_t ignored = static_cast<std::size_t>(n);
    if (!s.hello_done) {
      s.in.append(buffer, static_cast<std::size_t>(n));
      const std::size_t newline = s.in.find('\n');
      ignored = newline == std::string::npos ? 0 : s.in.size() - newline - 1;
      if (newline != std::string::npos) {
        answer_hello(s, s.in.substr(0, newline));
      } else if (s.in.size() >= kMaxHelloBytes) {
        answer_hello(s, std::nullopt);
      }
    }
    s.after_hello += ignored;
    if (s.after_hello > kMaxBytesAfterHello) {
      log_->warn("subscriber sent more than {} KiB after its hello: dropped", kMaxBytesAfterHello / 1024);
      s.dead = true;
      return;
    }
  }
}

void Publisher::answer_hello(Subscriber& s, const std::optional<std::string>& line) {
  s.hello_done = true;
  std::string().swap(s.in);  // up to kMaxHelloBytes, given back
  std::set<std::string> cameras;
  wire::Format format = wire::Format::ndjson;
  std::string error = line ? parse_hello(*line, cameras, format) : "hello line longer than 64 KiB";
  nlohmann::ordered_json reply;
  if (error.empty()) {
    std::optional<std::vector<CameraDirectory::Entry>> directory;
    if (options_.directory) directory = options_.directory->entries();
    reply = hello_reply(cameras, format, directory, error);
    if (!error.empty()) log_->warn("subscriber asked for a camera that does not run: {}", error);
  } else {
    reply["v"] = 1;
    reply["type"] = "error";
    reply["error"] = error;
    log_->warn("subscriber sent a bad hello: {}", error);
  }
  auto encoded = std::make_shared<Encoded>();
  encoded->json = reply.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace);
  if (error.empty() && format == wire::Format::cbor) encoded->cbor = wire::cbor_of(encoded->json);
  std::lock_guard lock(mutex_);
  s.cameras = std::move(cameras);
  s.format = format;
  s.close_after_flush = !error.empty();
  s.queue.clear();  // the stream, in the chosen encoding and cameras, starts after the reply
  s.queue.push_front({std::move(encoded), false});
}

void Publisher::flush(Subscriber& s) {
  bool drained = false;
  for (int sent = 0; sent < kMessagesPerWakeup; ++sent) {
    if (s.out_offset >= s.out.size()) {
      Subscriber::Entry entry;
      std::uint64_t dropped = 0;
      {
        std::lock_guard lock(mutex_);
        drained = s.queue.empty();
        if (drained) break;
        entry = std::move(s.queue.front());
        s.queue.pop_front();
        if (entry.tracks) std::swap(dropped, s.dropped_pending);
      }
      const Encoded& m = *entry.message;
      const bool cbor = s.format == wire::Format::cbor && !m.cbor.empty();  // a failed hello's reply stays JSON
      if (entry.tracks) {
        s.out = cbor ? wire::cbor_with_dropped(m.cbor, dropped) : wire::ndjson_with_dropped(m.json, dropped);
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
  if (!drained) return;
  if (s.out.capacity() > kKeptOutBytes) std::string().swap(s.out);  // an idle subscriber keeps little
  if (s.close_after_flush) s.dead = true;
}

void Publisher::remove_dead() {
  std::size_t left = 0;
  std::size_t count = 0;
  {
    std::lock_guard lock(mutex_);
    for (auto it = subscribers_.begin(); it != subscribers_.end();) {
      if (!(*it)->dead) {
        ++it;
        continue;
      }
      past_drops_ += (*it)->dropped_total;
      it = subscribers_.erase(it);
      ++left;
    }
    count = subscribers_.size();
  }
  if (left == 0) return;
  if (left == 1) {
    log_->info("subscriber left ({} now)", count);
  } else {
    log_->info("{} subscribers left ({} now)", left, count);
  }
  trim_at_ = Clock::now() + kTrimAfter;  // once departures stop for a moment
}

// glibc keeps memory freed by departed subscribers in its arenas, scattered between what is
// still in use, so RSS stays at its peak; malloc_trim() hands the free pages back.
void Publisher::trim_if_due(Clock::time_point now, std::chrono::milliseconds& wait) {
  if (trim_at_ == Clock::time_point{}) return;
  if (now < trim_at_) {
    wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(trim_at_ - now));
    return;
  }
  ::malloc_trim(0);
  trim_at_ = {};
}

void Publisher::serve() {
  name_this_thread("publisher");
  std::vector<pollfd> fds;
  while (running_) {
    std::chrono::milliseconds wait = kPollInterval;
    Clock::time_point now = Clock::now();
    trim_if_due(now, wait);
    fds.assign({{wake_fd_, POLLIN, 0}, {accept_pause_->poll_fd(listen_fd_, now, wait), POLLIN, 0}});
    std::size_t polled = 0;  // subscribers_[i] is fds[i + 2]; later ones were accepted after poll()
    {
      std::lock_guard lock(mutex_);
      polled = subscribers_.size();
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
    // subscribers_ changes only on this thread, so it is walked here without the lock.
    for (std::size_t i = 0; i < polled; ++i) {
      Subscriber& s = *subscribers_[i];
      const short revents = fds[i + 2].revents;
      if (!s.read_closed && (revents & (POLLIN | POLLHUP | POLLERR))) {
        read_from(s);
      } else if (s.read_closed && (revents & (POLLHUP | POLLERR))) {
        s.dead = true;  // gone for good: its reading side closed too
      }
    }
    if (fds[1].revents & POLLIN) accept_clients();
    now = Clock::now();
    for (auto& s : subscribers_) {
      if (!s->dead && s->streaming(now)) flush(*s);
    }
    remove_dead();
  }
}

}  // namespace edgetap::pipeline
