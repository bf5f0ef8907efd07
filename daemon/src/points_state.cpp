#include "edgetap/daemon/points_state.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "edgetap/daemon/atomic_file.hpp"
#include "edgetap/daemon/point_ids.hpp"
#include "edgetap/json_input.hpp"

namespace edgetap::daemon {
namespace {

using json = nlohmann::json;
constexpr int kVersion = 1;

bool parse_point(const json& p, config::ExplicitPoint& out) {
  if (!p.is_object() || !p.contains("id") || !p["id"].is_string() || !p.contains("x") || !p["x"].is_number() ||
      !p.contains("y") || !p["y"].is_number()) {
    return false;
  }
  out = {p["id"].get<std::string>(), p["x"].get<double>(), p["y"].get<double>()};
  // Any id a configuration could have let in (control.max_id_bytes may differ now).
  return point_id_problem(out.id, static_cast<std::size_t>(config::kLongestIdBytes)).empty();
}

enum class ReadResult { read, missing, failed };

ReadResult read_text(const std::string& path, std::string& text, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return ReadResult::missing;
    error = std::strerror(errno);
    return ReadResult::failed;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = "read error";
    return ReadResult::failed;
  }
  text = buffer.str();
  return ReadResult::read;
}

}  // namespace

std::string format_points_state(const PointsByCamera& points) {
  json cameras = json::object();
  for (const auto& [camera, list] : points) {
    json entries = json::array();
    for (const config::ExplicitPoint& p : list) entries.push_back({{"id", p.id}, {"x", p.x}, {"y", p.y}});
    cameras[camera] = std::move(entries);
  }
  return json{{"version", kVersion}, {"cameras", std::move(cameras)}}.dump(2) + "\n";
}

bool parse_points_state(const std::string& text, PointsByCamera& out, std::string& error) {
  const json root = parse_json_input(text, error);
  if (root.is_discarded()) return false;
  if (!root.is_object() || root.value("version", json()) != json(kVersion) || !root.contains("cameras") ||
      !root["cameras"].is_object()) {
    error = "expected {\"version\": 1, \"cameras\": {CAMERA: [{id, x, y}, ...]}}";
    return false;
  }
  PointsByCamera points;
  for (const auto& [camera, list] : root["cameras"].items()) {
    if (!list.is_array()) {
      error = "cameras." + camera + ": expected a list of {id, x, y}";
      return false;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      config::ExplicitPoint p;
      if (!parse_point(list[i], p)) {
        error = "cameras." + camera + "[" + std::to_string(i) + "]: expected {id, x, y} with a valid id";
        return false;
      }
      points[camera].push_back(std::move(p));
    }
  }
  out = std::move(points);
  return true;
}

PointsState::PointsState(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}

void PointsState::open(const std::string& path) {
  std::lock_guard lock(mutex_);
  path_ = path;
  points_.clear();
  if (path.empty()) return;
  std::string text;
  std::string error;
  const ReadResult read = read_text(path, text, error);
  if (read == ReadResult::missing) {
    log_->info("state file {} does not exist yet: no points to restore", path);
    return;
  }
  if (read == ReadResult::read && parse_points_state(text, points_, error)) {
    std::size_t count = 0;
    for (const auto& entry : points_) count += entry.second.size();
    log_->info("state file {}: {} points of {} cameras to restore", path, count, points_.size());
    return;
  }
  // Moved aside, not overwritten: what it holds may be put back by hand.
  const std::string aside = path + ".bad";
  if (std::rename(path.c_str(), aside.c_str()) == 0) {
    log_->error("state file {} cannot be read ({}): moved to {}; starting with no saved points", path, error, aside);
  } else {
    log_->error("state file {} cannot be read ({}) nor moved to {} ({}); starting with no saved points", path, error,
                aside, std::strerror(errno));
  }
}

std::string PointsState::path() const {
  std::lock_guard lock(mutex_);
  return path_;
}

std::vector<config::ExplicitPoint> PointsState::points(const std::string& camera) const {
  std::lock_guard lock(mutex_);
  const auto it = points_.find(camera);
  return it == points_.end() ? std::vector<config::ExplicitPoint>{} : it->second;
}

bool PointsState::added(const std::string& camera, const std::vector<config::ExplicitPoint>& points) {
  std::lock_guard lock(mutex_);
  if (path_.empty() || points.empty()) return true;
  std::vector<config::ExplicitPoint>& list = points_[camera];
  for (const config::ExplicitPoint& p : points) {
    // An id added again (its track had been lost, say) takes its new position.
    const auto same = std::find_if(list.begin(), list.end(), [&](const auto& q) { return q.id == p.id; });
    if (same != list.end()) {
      *same = p;
    } else {
      list.push_back(p);
    }
  }
  return write_locked();
}

bool PointsState::removed(const std::string& camera, const std::vector<std::string>& ids) {
  std::lock_guard lock(mutex_);
  const auto it = points_.find(camera);
  if (path_.empty() || it == points_.end()) return true;
  const std::size_t before = it->second.size();
  std::erase_if(it->second, [&](const auto& p) { return std::find(ids.begin(), ids.end(), p.id) != ids.end(); });
  if (it->second.size() == before) return true;
  if (it->second.empty()) points_.erase(it);
  return write_locked();
}

bool PointsState::write_locked() {
  std::string error;
  if (replace_file_atomically(path_, format_points_state(points_), error)) return true;
  log_->error("state file not updated: {}", error);
  return false;
}

}  // namespace edgetap::daemon
