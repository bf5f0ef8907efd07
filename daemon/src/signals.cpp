#include "edgetap/daemon/signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace edgetap::daemon {
namespace {

// The write end is used by the handler, the read end by wait(). One waiter per process.
int g_pipe[2] = {-1, -1};

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
  for (int s : signals) ::sigaction(s, &action, nullptr);
}

SignalWaiter::~SignalWaiter() {
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int SignalWaiter::wait(std::chrono::milliseconds timeout) {
  pollfd pfd{g_pipe[0], POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return 0;
  unsigned char byte = 0;
  return ::read(g_pipe[0], &byte, 1) == 1 ? byte : 0;
}

}  // namespace edgetap::daemon
