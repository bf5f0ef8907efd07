// The live view, served on the metrics listener (loopback by default):
//   GET  /                              an index of the cameras, each linked to its page
//   GET  /cameras                       {"cameras": ["gate", ...]}
//   GET  /cameras/<name>/view           the camera's page: its latest frame with its
//                                       tracks, refreshed live; a click adds a point
//   GET  /cameras/<name>/snapshot.jpg   the latest frame at source size, as JPEG;
//                                       ?tracks=1 draws its tracks (filled dot: visible,
//                                       ring: occluded, red cross: lost)
//   POST /cameras/<name>/points         {"points": [{"id", "x", "y"}]} in source pixels:
//                                       the control socket's add_points, same reply
// A camera that does not run: 404 {"error": "no camera named 'x'", "cameras": [...]};
// one that has tracked no frame yet: 503 with the reason.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgetap/camera/latest_frames.hpp"

namespace httplib { class Server; }

namespace edgetap::daemon {

struct LiveViewSources {
  std::function<std::vector<std::string>()> cameras;             // the cameras running now
  std::shared_ptr<const LatestFrames> frames;
  std::function<nlohmann::json(const nlohmann::json&)> control;  // the control socket's request handler
};

void add_live_view_routes(httplib::Server& server, LiveViewSources sources);

// The pages, with the camera names filled in.
std::string live_view_index_html(const std::vector<std::string>& cameras);
std::string live_view_camera_html(const std::string& camera);

}  // namespace edgetap::daemon
