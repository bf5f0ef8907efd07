// The journal fields of a log record: every component logs under the one
// identifier edgetapd, the component in a field of its own.
#include <gtest/gtest.h>

#include <syslog.h>

#include "edgetap/daemon/journal_sink.hpp"

using namespace edgetap;

TEST(JournalFields, IdentifierIsEdgetapdAndTheComponentAFieldOfItsOwn) {
  const auto fields = daemon::journal_fields("camera/gate", spdlog::level::warn, "rung klt -> klt-s2: slow");
  EXPECT_EQ(fields, (std::vector<std::string>{"MESSAGE=camera/gate: rung klt -> klt-s2: slow",
                                              "PRIORITY=" + std::to_string(LOG_WARNING), "SYSLOG_IDENTIFIER=edgetapd",
                                              "EDGETAP_COMPONENT=camera/gate"}));
}

TEST(JournalFields, LevelsMapToSyslogPriorities) {
  const std::vector<std::pair<spdlog::level::level_enum, int>> cases = {
      {spdlog::level::trace, LOG_DEBUG}, {spdlog::level::debug, LOG_DEBUG}, {spdlog::level::info, LOG_INFO},
      {spdlog::level::warn, LOG_WARNING}, {spdlog::level::err, LOG_ERR},   {spdlog::level::critical, LOG_CRIT}};
  for (const auto& [level, priority] : cases) {
    EXPECT_EQ(daemon::journal_fields("daemon", level, "x")[1], "PRIORITY=" + std::to_string(priority))
        << spdlog::level::to_string_view(level).data();
  }
}

TEST(JournalFields, AMessageWithoutComponentHasNoPrefix) {
  const auto fields = daemon::journal_fields("", spdlog::level::info, "hello");
  EXPECT_EQ(fields, (std::vector<std::string>{"MESSAGE=hello", "PRIORITY=" + std::to_string(LOG_INFO),
                                              "SYSLOG_IDENTIFIER=edgetapd"}));
}
