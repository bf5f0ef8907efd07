// The cameras a daemon runs and what runs each one's rung in force, for the
// track socket's hello (which answers a subscribe to an unknown camera with
// the list) without reaching into the runtime: the runtime sets the names on
// start and reload, each camera its engine on start and on every rung change.
// Thread-safe; its lock is taken for copies only, never around other locks.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/ladder/engine_info.hpp"

namespace edgetap::pipeline {

class CameraDirectory {
 public:
  struct Entry {
    std::string name;
    std::optional<EngineInfo> engine;  // none while the camera's tracker is not (yet) made
  };

  // The cameras, in configuration order; a name kept keeps its engine.
  void set_cameras(const std::vector<std::string>& names);
  // Ignored for a camera not in the directory; nullopt: its tracker could not be made.
  void set_engine(const std::string& camera, const std::optional<EngineInfo>& engine);
  std::vector<Entry> entries() const;
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace edgetap::pipeline
