// The control socket's requests, one JSON object each ("cmd" selects):
//   {"cmd": "list"}                                   cameras and their state
//   {"cmd": "stats"}                                  every counter (as /metrics)
//   {"cmd": "add_points", "camera": C, "points": [{"id": I, "x": X, "y": Y}]}
//                                                     new tracks at source pixels of the latest frame
//   {"cmd": "remove_points", "camera": C, "ids": [I]} stop tracks for good
// Replies carry "ok" and either the result or "error"; an "id" in the request
// is echoed back.
#pragma once

#include <nlohmann/json.hpp>

namespace edgetap::daemon {

class Runtime;

nlohmann::json handle_control_request(Runtime& runtime, const nlohmann::json& request);

}  // namespace edgetap::daemon
