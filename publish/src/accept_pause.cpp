#include "edgetap/publish/accept_pause.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace edgetap::pipeline {
namespace {

constexpr std::chrono::milliseconds kFirstPause{100};
constexpr std::chrono::milliseconds kLongestPause{1000};

}  // namespace

bool accept_error_is_transient(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == ECONNABORTED;
}

AcceptPause::AcceptPause(std::string what, std::shared_ptr<spdlog::logger> log)
    : what_(std::move(what)), log_(std::move(log)) {}

void AcceptPause::failed(int error, Clock::time_point now) {
  if (failures_++ == 0) {
    log_->warn("{}: accept failed ({}); new connections wait until it succeeds, retried every {}-{} ms", what_,
               std::strerror(error), kFirstPause.count(), kLongestPause.count());
    pause_ = kFirstPause;
  } else {
    pause_ = std::min(pause_ * 2, kLongestPause);
  }
  until_ = now + pause_;
}

void AcceptPause::succeeded() {
  if (failures_ == 0) return;
  log_->info("{}: accepting connections again after {} failed attempt(s)", what_, failures_);
  failures_ = 0;
  until_ = {};
}

int AcceptPause::poll_fd(int listen_fd, Clock::time_point now, std::chrono::milliseconds& wait) const {
  if (now >= until_) return listen_fd;
  wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(until_ - now));
  return -1;
}

}  // namespace edgetap::pipeline
