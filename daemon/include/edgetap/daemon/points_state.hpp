// The points operators add at run time (add_points over the control socket,
// `edgetap ctl add-points`, the live view), kept by camera in control.state_file
// so that a restart or a reload re-adds them. What is kept is what the operator
// gave: each point's id and source-pixel position as requested, not where the
// tracker has since moved it. remove_points drops ids. A camera that leaves the
// configuration keeps its entry, untouched, for when it comes back.
// The file, JSON, is replaced atomically on every change:
//   {"version": 1, "cameras": {"gate": [{"id": "door", "x": 412.5, "y": 220}]}}
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "edgetap/config/config.hpp"

namespace edgetap::daemon {

using PointsByCamera = std::map<std::string, std::vector<config::ExplicitPoint>>;

// The file's text for `points`.
std::string format_points_state(const PointsByCamera& points);
// Reads the file's text; false with the reason when it is not a state file
// (bad JSON, another version, a point without a valid id or numeric x and y).
bool parse_points_state(const std::string& text, PointsByCamera& out, std::string& error);

class PointsState {
 public:
  explicit PointsState(std::shared_ptr<spdlog::logger> log);

  // Keeps points in `path` from now on ("" = keep nothing), reading what it holds.
  // A missing file is an empty state. An unreadable or corrupt one is logged naming
  // the file, moved aside to PATH.bad (so nothing in it is lost) and started afresh.
  void open(const std::string& path);
  std::string path() const;
  // What the camera had added, in the order it was added.
  std::vector<config::ExplicitPoint> points(const std::string& camera) const;
  // Record a change and rewrite the file. False, logged, when the file cannot be
  // written; the change stays in memory and is written with the next one.
  bool added(const std::string& camera, const std::vector<config::ExplicitPoint>& points);
  bool removed(const std::string& camera, const std::vector<std::string>& ids);

 private:
  bool write_locked();

  std::shared_ptr<spdlog::logger> log_;
  mutable std::mutex mutex_;
  std::string path_;
  PointsByCamera points_;
};

}  // namespace edgetap::daemon
