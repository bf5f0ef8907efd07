#include "edgetap/backend/cuda_plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace edgetap::backend {

namespace fs = std::filesystem;

namespace {

// The value of $EDGETAP_CUDA_PLUGIN that loads no plugin.
constexpr const char* kPluginOff = "off";

fs::path program_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

std::vector<std::string> cuda_plugin_candidates() {
  if (const char* chosen = std::getenv("EDGETAP_CUDA_PLUGIN"); chosen != nullptr && *chosen != '\0') return {chosen};
  std::vector<std::string> candidates;
  // Installed, the relative directory is the installed one: each path once.
  const auto add = [&candidates](const fs::path& path) {
    const std::string s = path.lexically_normal().string();
    if (std::find(candidates.begin(), candidates.end(), s) == candidates.end()) candidates.push_back(s);
  };
  if (const fs::path dir = program_dir(); !dir.empty()) {
    add(dir / kCudaPluginFile);
    add(dir.parent_path() / "lib" / "edgetap" / kCudaPluginFile);
    add(dir.parent_path() / EDGETAP_PLUGIN_RELATIVE_DIR / kCudaPluginFile);
  }
  add(fs::path(EDGETAP_PLUGIN_INSTALL_DIR) / kCudaPluginFile);
  return candidates;
}

LoadedCudaPlugin load_cuda_plugin(const std::string& path) {
  LoadedCudaPlugin loaded;
  loaded.path = path;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = "the CUDA engine " + path + " cannot be loaded: " + (why != nullptr ? why : "unknown error");
    return loaded;
  }
  const auto entry = reinterpret_cast<CudaEnginePluginEntry>(dlsym(library, kCudaPluginEntry));
  const CudaEnginePlugin* plugin = entry != nullptr ? entry() : nullptr;
  if (plugin == nullptr) {
    loaded.error = "the CUDA engine " + path + " is not an EdgeTAP plugin (no " + kCudaPluginEntry + ")";
  } else if (plugin->abi != kCudaPluginAbi || plugin->version == nullptr ||
             std::string(plugin->version) != EDGETAP_VERSION) {
    loaded.error = "the CUDA engine " + path + " is version " + (plugin->version ? plugin->version : "?") +
                   " (plugin ABI " + std::to_string(plugin->abi) + "), this program " + EDGETAP_VERSION +
                   " (ABI " + std::to_string(kCudaPluginAbi) + "): install edgetap and edgetap-cuda of one version";
  } else if (plugin->probe == nullptr || plugin->make_session == nullptr || plugin->make_aligner == nullptr) {
    loaded.error = "the CUDA engine " + path + " lacks an entry of its table";
  } else {
    loaded.plugin = plugin;
    return loaded;
  }
  dlclose(library);
  return loaded;
}

const LoadedCudaPlugin& cuda_plugin() {
  static const LoadedCudaPlugin loaded = [] {
    const std::vector<std::string> candidates = cuda_plugin_candidates();
    if (candidates.size() == 1 && candidates.front() == kPluginOff) {
      return LoadedCudaPlugin{nullptr, "", "the CUDA engine is turned off (EDGETAP_CUDA_PLUGIN=off)"};
    }
    for (const std::string& path : candidates) {
      std::error_code ec;
      if (fs::exists(path, ec)) return load_cuda_plugin(path);
    }
    std::string looked;
    for (const std::string& path : candidates) looked += (looked.empty() ? "" : ", ") + path;
    return LoadedCudaPlugin{nullptr, "",
                            "the CUDA engine is not installed (package edgetap-cuda; looked for " + looked + ")"};
  }();
  return loaded;
}

}  // namespace edgetap::backend
