// The YAML configuration loader on arbitrary text. A file is either a Config or
// a ConfigError that lists its problems (exit 78 in the daemon); any other
// exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "edgetap/config/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    edgetap::config::load_string(text, "fuzz.yaml", "/nonexistent");
  } catch (const edgetap::config::ConfigError&) {
  }
  return 0;
}
