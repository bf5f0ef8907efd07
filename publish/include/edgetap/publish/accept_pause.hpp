// When accept() fails for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM)
// the connection stays queued and the listening socket stays readable: polling
// it again at once spins a core and starves everything else. AcceptPause tells
// a listener's poll loop to leave the listening fd out for a while instead
// (100 ms, doubling to 1 s while it keeps failing), and logs the first failure
// of a run and the recovery, never each retry.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace spdlog { class logger; }

namespace edgetap::pipeline {

class AcceptPause {
 public:
  using Clock = std::chrono::steady_clock;

  // `what` names the listener in log lines ("track socket").
  AcceptPause(std::string what, std::shared_ptr<spdlog::logger> log);

  // accept() failed with `error` (an errno other than EAGAIN, EINTR or ECONNABORTED).
  void failed(int error, Clock::time_point now);
  // accept() returned a connection.
  void succeeded();
  // The fd to poll for the listener: `listen_fd`, or -1 while paused, when `wait`
  // is shortened to the end of the pause.
  int poll_fd(int listen_fd, Clock::time_point now, std::chrono::milliseconds& wait) const;

 private:
  std::string what_;
  std::shared_ptr<spdlog::logger> log_;
  Clock::time_point until_{};
  std::chrono::milliseconds pause_{0};
  unsigned failures_ = 0;  // in the current run
};

// True for accept() errors after which the next accept() may succeed at once.
bool accept_error_is_transient(int error);

}  // namespace edgetap::pipeline
