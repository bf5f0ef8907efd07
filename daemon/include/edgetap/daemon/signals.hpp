// Signals arrive through a signalfd: nothing runs in a signal handler. Create
// the waiter before starting any thread so that every thread inherits the mask.
#pragma once

#include <chrono>
#include <initializer_list>

namespace edgetap::daemon {

class SignalWaiter {
 public:
  explicit SignalWaiter(std::initializer_list<int> signals);
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  // The next signal received within `timeout`, or 0.
  int wait(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

}  // namespace edgetap::daemon
