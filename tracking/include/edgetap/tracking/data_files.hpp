// Where EdgeTAP's shipped data (the bundled model, the demo clip) is found:
// $EDGETAP_DATA_DIR, then the install data directory (/usr/share/edgetap in the
// packages), then, in a development build (EDGETAP_SOURCE_TREE_DATA=ON), the source tree.
#pragma once

#include <string>

namespace edgetap::pipeline {

// `installed_relative` is the path under the data directory (e.g. "demo/clip.avi"),
// `source_relative` the same file's path in the source tree (e.g. "assets/demo/clip.avi").
// Returns the first that exists, else the last candidate (so an error names a real place).
std::string find_data_file(const std::string& installed_relative, const std::string& source_relative);

}  // namespace edgetap::pipeline
