#include "edgetap/tracking/data_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace edgetap::pipeline {

std::string find_data_file(const std::string& installed_relative, [[maybe_unused]] const std::string& source_relative) {
  namespace fs = std::filesystem;
  const fs::path installed = fs::path(EDGETAP_INSTALL_DATA_DIR) / installed_relative;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("EDGETAP_DATA_DIR"); env && *env) candidates.push_back(fs::path(env) / installed_relative);
  candidates.push_back(installed);
#ifdef EDGETAP_SOURCE_DIR
  // A development build also finds the files in its source tree; packages are built without it
  // (EDGETAP_SOURCE_TREE_DATA=OFF), so no build path is compiled into a shipped binary.
  const fs::path source = fs::path(EDGETAP_SOURCE_DIR) / source_relative;
  candidates.push_back(source);
  const fs::path missing = source;
#else
  const fs::path missing = installed;
#endif
  for (const fs::path& candidate : candidates) {
    if (fs::exists(candidate)) return candidate.string();
  }
  return missing.string();
}

}  // namespace edgetap::pipeline
