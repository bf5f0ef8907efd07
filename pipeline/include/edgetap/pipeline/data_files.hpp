// Where EdgeTAP's shipped data (the bundled model, the demo clip) is found:
// $EDGETAP_DATA_DIR, then the installed /usr/share/edgetap, then the source tree.
#pragma once

#include <string>

namespace edgetap::pipeline {

// `installed_relative` is the path under the data directory (e.g. "demo/clip.avi"),
// `source_relative` the same file's path in the source tree (e.g. "assets/demo/clip.avi").
// Returns the first that exists, else the source-tree path.
std::string find_data_file(const std::string& installed_relative, const std::string& source_relative);

}  // namespace edgetap::pipeline
