#include "edgetap/daemon/journal_sink.hpp"

#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

namespace edgetap::daemon {
namespace {

int priority_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LOG_DEBUG;
    case spdlog::level::warn: return LOG_WARNING;
    case spdlog::level::err: return LOG_ERR;
    case spdlog::level::critical: return LOG_CRIT;
    default: return LOG_INFO;
  }
}

}  // namespace

std::vector<std::string> journal_fields(std::string_view component, spdlog::level::level_enum level,
                                        std::string_view message) {
  std::string text = "MESSAGE=";
  if (!component.empty()) text.append(component).append(": ");
  text.append(message);
  std::vector<std::string> fields = {std::move(text), "PRIORITY=" + std::to_string(priority_of(level)),
                                     "SYSLOG_IDENTIFIER=" + std::string(kSyslogIdentifier)};
  if (!component.empty()) fields.push_back("EDGETAP_COMPONENT=" + std::string(component));
  return fields;
}

void JournalSink::sink_it_(const spdlog::details::log_msg& msg) {
  const std::vector<std::string> fields = journal_fields(
      std::string_view(msg.logger_name.data(), msg.logger_name.size()), msg.level,
      std::string_view(msg.payload.data(), msg.payload.size()));
  std::vector<iovec> parts;
  for (const std::string& field : fields) parts.push_back({const_cast<char*>(field.data()), field.size()});
  // A journal that cannot take the record (gone, full) must not stop the daemon.
  (void)sd_journal_sendv(parts.data(), static_cast<int>(parts.size()));
}

}  // namespace edgetap::daemon
