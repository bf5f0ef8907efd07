// spdlog loggers, one named logger per component ("config", "publisher",
// "camera/<name>", ...), all writing to one shared sink.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace edgetap::daemon {

// Sets the level for every logger made afterwards ("trace" ... "off").
// Returns false for an unknown level name.
bool set_log_level(const std::string& level);

std::shared_ptr<spdlog::logger> make_logger(const std::string& component);

}  // namespace edgetap::daemon
