#include "edgetap/daemon/signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <stdexcept>

namespace edgetap::daemon {
namespace {

// The write end is used by the handler, the read end by wait(). One waiter per process.
int g_pipe[2] = {-1, -1};
// The constructing thread's signal mask before the waiter blocked its signals.
sigset_t g_previous_mask;
// What wait() lets through: the previous mask without the waiter's signals.
sigset_t g_waiting_mask;

void on_signal(int signal) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

SignalWaiter::SignalWaiter(std::initializer_list<int> signals) {
  if (g_pipe[0] >= 0) throw std::logic_error("one SignalWaiter per process");
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  struct sigaction action{};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) {
    ::sigaction(s, &action, nullptr);
    sigaddset(&set, s);
  }
  // Blocked here, and so in every thread started from now on (they inherit the
  // mask): the signals reach a thread that waits in wait(), not a capture or
  // GStreamer thread asleep in a raw futex, where a sanitizer's runtime would
  // hold the handler back until that thread next wakes.
  ::pthread_sigmask(SIG_BLOCK, &set, &g_previous_mask);
  g_waiting_mask = g_previous_mask;
  for (int s : signals) sigdelset(&g_waiting_mask, s);
}

SignalWaiter::~SignalWaiter() {
  ::pthread_sigmask(SIG_SETMASK, &g_previous_mask, nullptr);
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int SignalWaiter::wait(std::chrono::milliseconds timeout) {
  pollfd pfd{g_pipe[0], POLLIN, 0};
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec span{static_cast<std::time_t>(seconds.count()),
                      static_cast<long>(std::chrono::nanoseconds(timeout - seconds).count())};  // NOLINT(google-runtime-int)
  // The signals are let through for the wait only; one caught during it
  // interrupts the wait (EINTR) after its handler has written to the pipe.
  if (::ppoll(&pfd, 1, &span, &g_waiting_mask) == 0) return 0;
  unsigned char byte = 0;
  return ::read(g_pipe[0], &byte, 1) == 1 ? byte : 0;
}

}  // namespace edgetap::daemon
