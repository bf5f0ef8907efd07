// Finds and loads the CUDA engine plugin (cuda_engine_plugin.hpp).
#pragma once

#include <string>
#include <vector>

#include "edgetap/backend/cuda_engine_plugin.hpp"

namespace edgetap::backend {

struct LoadedCudaPlugin {
  const CudaEnginePlugin* plugin = nullptr;  // null when none could be loaded
  std::string path;                          // the file loaded, or the last one tried
  std::string error;                         // why `plugin` is null
};

// Where the plugin is looked for, in order: $EDGETAP_CUDA_PLUGIN when set (a
// path; "off" loads none), then beside the running program, then
// ../lib/edgetap/ from it (a build tree), then the installed plugin directory
// relative to the program (../lib/<multiarch>/edgetap/: an installation under
// any root) and as installed (package edgetap-cuda).
std::vector<std::string> cuda_plugin_candidates();

// Loads the plugin at `path` and checks that it is of this build (ABI and
// version); never throws. The library stays loaded for the process's life.
LoadedCudaPlugin load_cuda_plugin(const std::string& path);

// The first candidate that exists, loaded; asked once per process.
const LoadedCudaPlugin& cuda_plugin();

}  // namespace edgetap::backend
