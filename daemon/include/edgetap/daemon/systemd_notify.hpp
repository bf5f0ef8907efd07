// The sd_notify protocol: READY, STATUS, RELOADING, STOPPING and WATCHDOG
// messages to the service manager. Without NOTIFY_SOCKET (not run by systemd)
// every call is a no-op.
#pragma once

#include <chrono>
#include <string>

namespace edgetap::daemon {

class SystemdNotifier {
 public:
  SystemdNotifier();

  bool enabled() const noexcept { return enabled_; }
  // The watchdog interval systemd expects pings within (WatchdogSec=), or 0.
  std::chrono::microseconds watchdog_interval() const noexcept { return watchdog_; }

  void ready(const std::string& status) const;
  void status(const std::string& status) const;
  void reloading(const std::string& status) const;
  void stopping(const std::string& status) const;
  void watchdog() const;

 private:
  void send(const std::string& message) const;
  bool enabled_ = false;
  std::chrono::microseconds watchdog_{0};
};

}  // namespace edgetap::daemon
