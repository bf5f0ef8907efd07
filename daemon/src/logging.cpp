#include "edgetap/daemon/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

#include <mutex>

#include "edgetap/daemon/journal_sink.hpp"

namespace edgetap::daemon {
namespace {

spdlog::level::level_enum g_level = spdlog::level::info;

spdlog::sink_ptr shared_sink() {
  static spdlog::sink_ptr sink = []() -> spdlog::sink_ptr {
    // Under systemd stderr is connected to the journal: log there natively,
    // with priorities, the identifier edgetapd and the component as a field.
    if (std::getenv("JOURNAL_STREAM") != nullptr) return std::make_shared<JournalSink>();
    auto s = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    s->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
    return s;
  }();
  return sink;
}

}  // namespace

bool set_log_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  g_level = parsed;
  return true;
}

std::shared_ptr<spdlog::logger> make_logger(const std::string& component) {
  auto logger = std::make_shared<spdlog::logger>(component, shared_sink());
  logger->set_level(g_level);
  return logger;
}

}  // namespace edgetap::daemon
