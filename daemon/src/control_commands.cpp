#include "edgetap/daemon/control_commands.hpp"

#include <algorithm>
#include <chrono>

#include "edgetap/daemon/health.hpp"
#include "edgetap/daemon/point_ids.hpp"
#include "edgetap/daemon/runtime.hpp"

namespace edgetap::daemon {
namespace {

using json = nlohmann::json;
constexpr auto kApplyTimeout = std::chrono::milliseconds(3000);

json error(const std::string& message) { return {{"ok", false}, {"error", message}}; }

json list(Runtime& runtime) {
  const config::Config config = runtime.config();
  const std::vector<CameraStats> stats = runtime.stats();
  json cameras = json::array();
  for (std::size_t i = 0; i < config.cameras.size() && i < stats.size(); ++i) {
    const config::CameraConfig& c = config.cameras[i];
    cameras.push_back({{"name", c.name},
                       {"state", to_string(stats[i].state)},
                       {"source", c.source.uri},
                       {"tracker", config::to_string(c.tracker)},
                       {"model_size", {c.model_width, c.model_height}},
                       {"queries", config::to_string(c.queries.policy)},
                       {"points", stats[i].points}});
  }
  return {{"ok", true}, {"cameras", cameras}};
}

}  // namespace

json stats_reply(Runtime& runtime) {
  const Snapshot snapshot = runtime.snapshot();
  json cameras = json::array();
  for (const CameraStats& c : snapshot.cameras) cameras.push_back(camera_json(c));
  json reply = {{"ok", true},
                {"cameras", cameras},
                {"socket", {{"subscribers", snapshot.socket.subscribers},
                            {"messages", snapshot.socket.messages},
                            {"subscriber_drops", snapshot.socket.subscriber_drops},
                            {"refused", snapshot.socket.refused}}}};
  if (snapshot.mqtt) {
    reply["mqtt"] = {{"connected", snapshot.mqtt->connected},
                     {"published", snapshot.mqtt->published},
                     {"dropped", snapshot.mqtt->dropped},
                     {"connects", snapshot.mqtt->connects},
                     {"throttled", snapshot.mqtt->throttled}};
  }
  return reply;
}

json mqtt_stats_message(Runtime& runtime) {
  json message = stats_reply(runtime);
  message.erase("ok");
  message["v"] = 1;
  message["type"] = "stats";
  message["publish_us"] = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
  return message;
}

namespace {

json change_reply(const PointsChange& change, const char* applied_key) {
  if (!change.error.empty()) return error(change.error);
  return {{"ok", true}, {applied_key, change.applied}, {"rejected", change.rejected}};
}

// `value` as ASCII JSON, cut to a readable length, for an error message.
std::string shown(const json& value) {
  constexpr std::size_t kMaxShown = 200;
  std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

// A point's id, checked: a bad one is rejected alone, named by its index (echoing it could
// carry the very characters refused).
bool accept_id(const std::string& id, std::size_t index, const config::ControlLimits& limits,
               std::vector<std::string>& rejected) {
  const std::string problem = point_id_problem(id, static_cast<std::size_t>(limits.max_id_bytes));
  if (problem.empty()) return true;
  rejected.push_back("points[" + std::to_string(index) + "]: " + problem);
  return false;
}

// The points of `points` whose ids were added, as the operator gave them (they are what
// the state file keeps).
std::vector<config::ExplicitPoint> applied_points(const std::vector<config::ExplicitPoint>& points,
                                                  const std::vector<std::string>& applied) {
  std::vector<config::ExplicitPoint> kept;
  for (const config::ExplicitPoint& p : points) {
    if (std::find(applied.begin(), applied.end(), p.id) != applied.end()) kept.push_back(p);
  }
  return kept;
}

// A list longer than control.max_points_per_request, said so; "" when it is not.
std::string over_request_cap(const json& list, const char* what, const config::ControlLimits& limits) {
  if (list.size() <= static_cast<std::size_t>(limits.max_points_per_request)) return "";
  return "at most " + std::to_string(limits.max_points_per_request) + " " + what +
         " per request (control.max_points_per_request), got " + std::to_string(list.size());
}

json add_points(Runtime& runtime, const std::string& camera, const json& request, const config::ControlLimits& limits) {
  const json& list = request.contains("points") ? request["points"] : json();
  if (!list.is_array() || list.empty()) return error("'points' must be a non-empty list of {id, x, y}");
  if (const std::string over = over_request_cap(list, "points", limits); !over.empty()) return error(over);
  std::vector<config::ExplicitPoint> points;
  std::vector<std::string> rejected;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& p = list[i];
    if (!p.is_object() || !p.contains("id") || !p["id"].is_string() || !p.contains("x") || !p["x"].is_number() ||
        !p.contains("y") || !p["y"].is_number()) {
      return error("points[" + std::to_string(i) + "]: each point needs a string 'id' and numbers 'x' and 'y' " +
                   "(source pixels): " + shown(p));
    }
    const std::string id = p["id"].get<std::string>();
    if (!accept_id(id, i, limits, rejected)) continue;
    points.push_back({id, p["x"].get<double>(), p["y"].get<double>()});
  }
  PointsChange change;
  if (!points.empty()) {
    const auto max_live = static_cast<std::size_t>(limits.max_points_per_camera);
    // Recorded on the tracking thread as the points are added, so that a change applied
    // after the reply has timed out is kept too.
    PointsState& state = runtime.points_state();
    runtime.with_camera(camera, [&](CameraWorker& w) {
      change = w.add_points(points, kApplyTimeout, max_live,
                            [&state, camera, points](const std::vector<std::string>& applied) {
                              state.added(camera, applied_points(points, applied));
                            });
    });
  }
  change.rejected.insert(change.rejected.begin(), rejected.begin(), rejected.end());
  return change_reply(change, "added");
}

json remove_points(Runtime& runtime, const std::string& camera, const json& request,
                   const config::ControlLimits& limits) {
  const json& list = request.contains("ids") ? request["ids"] : json();
  if (!list.is_array() || list.empty()) return error("'ids' must be a non-empty list of track ids");
  if (const std::string over = over_request_cap(list, "ids", limits); !over.empty()) return error(over);
  std::vector<std::string> ids;
  std::vector<std::string> rejected;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) return error("'ids' must be a list of strings");
    const std::string id = list[i].get<std::string>();
    if (accept_id(id, i, limits, rejected)) ids.push_back(id);
  }
  PointsChange change;
  if (!ids.empty()) {
    runtime.with_camera(camera, [&](CameraWorker& w) {
      change = w.remove_points(ids, kApplyTimeout);
      // Every id asked for leaves the file, tracked or not: a saved point that could
      // not be restored (outside a smaller image, say) is removed the same way.
      if (change.error.empty()) runtime.points_state().removed(camera, ids);
    });
  }
  change.rejected.insert(change.rejected.begin(), rejected.begin(), rejected.end());
  return change_reply(change, "removed");
}

}  // namespace

json handle_control_request(Runtime& runtime, const json& request) {
  const std::string cmd = request.value("cmd", "");
  if (cmd == "list") return list(runtime);
  if (cmd == "stats") return stats_reply(runtime);
  if (cmd != "add_points" && cmd != "remove_points") {
    return error("unknown cmd '" + cmd + "' (list, stats, add_points, remove_points)");
  }
  const json& camera = request.value("camera", json());
  if (!camera.is_string()) return error("'" + cmd + "' needs \"camera\": NAME");
  const std::string name = camera.get<std::string>();
  bool found = false;
  runtime.with_camera(name, [&](CameraWorker&) { found = true; });
  if (!found) return error("no camera named '" + name + "'");
  const config::ControlLimits limits = runtime.control_limits();
  return cmd == "add_points" ? add_points(runtime, name, request, limits)
                             : remove_points(runtime, name, request, limits);
}

}  // namespace edgetap::daemon
