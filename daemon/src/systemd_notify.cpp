#include "edgetap/daemon/systemd_notify.hpp"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdlib>

namespace edgetap::daemon {
namespace {

std::string monotonic_usec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::to_string(static_cast<long long>(ts.tv_sec) * 1000000LL + ts.tv_nsec / 1000);
}

}  // namespace

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  std::uint64_t usec = 0;
  if (enabled_ && sd_watchdog_enabled(0, &usec) > 0) watchdog_ = std::chrono::microseconds(usec);
}

void SystemdNotifier::send(const std::string& message) const {
  if (enabled_) sd_notify(0, message.c_str());
}

void SystemdNotifier::ready(const std::string& status) const { send("READY=1\nSTATUS=" + status); }

void SystemdNotifier::status(const std::string& status) const { send("STATUS=" + status); }

void SystemdNotifier::reloading(const std::string& status) const {
  // MONOTONIC_USEC is required by systemd >= 253 for Type=notify-reload and harmless before.
  send("RELOADING=1\nMONOTONIC_USEC=" + monotonic_usec() + "\nSTATUS=" + status);
}

void SystemdNotifier::stopping(const std::string& status) const { send("STOPPING=1\nSTATUS=" + status); }

void SystemdNotifier::watchdog() const { send("WATCHDOG=1"); }

}  // namespace edgetap::daemon
