// Log records to the systemd journal under one identifier, edgetapd (so that
// `journalctl -t edgetapd` finds them all), with the component that logged
// ("camera/gate", "publisher", ...) in a field of its own, EDGETAP_COMPONENT
// (`journalctl -t edgetapd EDGETAP_COMPONENT=camera/gate`), and at the
// matching syslog priority.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace edgetap::daemon {

inline constexpr std::string_view kSyslogIdentifier = "edgetapd";

// The journal fields of one record, "NAME=value" each: MESSAGE ("component:
// message"), PRIORITY, SYSLOG_IDENTIFIER and, for a named component, EDGETAP_COMPONENT.
std::vector<std::string> journal_fields(std::string_view component, spdlog::level::level_enum level,
                                        std::string_view message);

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}
};

}  // namespace edgetap::daemon
