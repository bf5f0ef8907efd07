#include "edgetap/pipeline/data_files.hpp"

#include <cstdlib>
#include <filesystem>

namespace edgetap::pipeline {

std::string find_data_file(const std::string& installed_relative, const std::string& source_relative) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("EDGETAP_DATA_DIR");
  const fs::path source = fs::path(EDGETAP_SOURCE_DIR) / source_relative;
  for (const fs::path& candidate : {env && *env ? fs::path(env) / installed_relative : fs::path(),
                                    fs::path("/usr/share/edgetap") / installed_relative, source}) {
    if (!candidate.empty() && fs::exists(candidate)) return candidate.string();
  }
  return source.string();
}

}  // namespace edgetap::pipeline
