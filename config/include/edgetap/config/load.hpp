// Loading and validating configuration files. All problems in a file are
// collected and reported together, each naming file, line, key and range.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"

namespace edgetap::config {

// Exit status for a bad configuration (EX_CONFIG from sysexits.h).
inline constexpr int kExitBadConfig = 78;

struct Problem {
  std::string file;
  int line = 0;    // 1-based; 0 when the problem has no position
  int column = 0;  // 1-based
  std::string key; // dotted path, e.g. cameras[1].queries.grid
  std::string message;

  std::string to_string() const;  // "file:line:col: key: message"
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Problem> problems);
  const std::vector<Problem>& problems() const noexcept { return problems_; }

 private:
  std::vector<Problem> problems_;
};

// Throws ConfigError listing every problem found.
Config load_file(const std::string& path);
// `name` is used in messages; relative file:// sources resolve against `base_dir`.
Config load_string(const std::string& text, const std::string& name, const std::string& base_dir);

// A camera's `source` string read as the loader reads it (file://PATH, rtsp://URL,
// v4l2:///dev/videoN, test:PATTERN); nullopt with `error` when it is bad.
std::optional<Source> parse_source(const std::string& uri, const std::string& base_dir, std::string& error);

}  // namespace edgetap::config
