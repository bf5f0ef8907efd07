#include "edgetap/publish/camera_directory.hpp"

#include <algorithm>

namespace edgetap::pipeline {

void CameraDirectory::set_cameras(const std::vector<std::string>& names) {
  std::lock_guard lock(mutex_);
  std::vector<Entry> next;
  for (const std::string& name : names) {
    const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
    next.push_back(it != entries_.end() ? *it : Entry{name, std::nullopt});
  }
  entries_ = std::move(next);
}

void CameraDirectory::set_engine(const std::string& camera, const std::optional<EngineInfo>& engine) {
  std::lock_guard lock(mutex_);
  for (Entry& e : entries_) {
    if (e.name == camera) e.engine = engine;
  }
}

std::vector<CameraDirectory::Entry> CameraDirectory::entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

std::vector<std::string> CameraDirectory::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const Entry& e : entries_) names.push_back(e.name);
  return names;
}

}  // namespace edgetap::pipeline
