// The control socket's requests, one JSON object each ("cmd" selects):
//   {"cmd": "list"}                                   cameras and their state
//   {"cmd": "stats"}                                  every counter (as /metrics)
//   {"cmd": "add_points", "camera": C, "points": [{"id": I, "x": X, "y": Y}]}
//                                                     new tracks at source pixels of the latest frame
//   {"cmd": "remove_points", "camera": C, "ids": [I]} stop tracks for good
// Replies carry "ok" and either the result or "error"; an "id" in the request
// is echoed back. A point whose id is refused (see point_ids.hpp) or that would
// take the camera past control.max_points_per_camera is rejected alone, with
// the reason; a request with more than control.max_points_per_request points
// or ids is refused whole (config::ControlLimits).
// With control.state_file set, the points added and the ids removed are recorded
// there (points_state.hpp) and come back after a restart or a reload.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

namespace edgetap::daemon {

class Runtime;

nlohmann::json handle_control_request(Runtime& runtime, const nlohmann::json& request);
// The reply to {"cmd": "stats"}; also the body of the MQTT stats message.
nlohmann::json stats_reply(Runtime& runtime);
// The retained MQTT stats message: the stats reply without "ok", with
// "v": 1, "type": "stats" and "publish_us" (wall clock, microseconds since the epoch).
nlohmann::json mqtt_stats_message(Runtime& runtime);

}  // namespace edgetap::daemon
