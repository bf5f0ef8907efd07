#include "edgetap/daemon/live_view.hpp"

#include <httplib.h>

#include <algorithm>

#include "edgetap/json_input.hpp"
#include "edgetap/tracking/track_overlay.hpp"

namespace edgetap::daemon {
namespace {

using nlohmann::json;

void reply_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', true, json::error_handler_t::replace) + "\n", "application/json");
}

// The camera the request's path names, or "" after answering 404 with the cameras that run.
std::string known_camera(const LiveViewSources& sources, const httplib::Request& req, httplib::Response& res) {
  const std::string name = req.matches[1];
  const std::vector<std::string> cameras = sources.cameras();
  if (std::find(cameras.begin(), cameras.end(), name) != cameras.end()) return name;
  reply_json(res, 404, {{"error", "no camera named '" + name + "'"}, {"cameras", cameras}});
  return "";
}

void snapshot(const LiveViewSources& sources, const httplib::Request& req, httplib::Response& res) {
  const std::string camera = known_camera(sources, req, res);
  if (camera.empty()) return;
  const std::shared_ptr<const LatestFrame> latest = sources.frames->get(camera);
  if (!latest) {
    res.set_header("Retry-After", "1");
    reply_json(res, 503, {{"error", "camera '" + camera + "' has not tracked a frame yet"}});
    return;
  }
  const bool tracks = req.get_param_value("tracks") == "1";
  const std::vector<std::uint8_t> jpeg = pipeline::snapshot_jpeg(latest->frame, tracks ? &latest->points : nullptr);
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Edgetap-Frame", std::to_string(latest->frame.index));
  res.set_content(std::string(jpeg.begin(), jpeg.end()), "image/jpeg");
}

// The body is the control socket's add_points request without "cmd" and "camera" (the path
// names the camera). Only application/json is taken: a page of another origin cannot send
// that without a CORS preflight, which this server does not grant.
void add_points(const LiveViewSources& sources, const httplib::Request& req, httplib::Response& res) {
  const std::string camera = known_camera(sources, req, res);
  if (camera.empty()) return;
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    reply_json(res, 415, {{"ok", false}, {"error", "POST /cameras/" + camera + "/points takes application/json"}});
    return;
  }
  std::string error;
  json request = parse_json_input(req.body, error);
  if (request.is_discarded() || !request.is_object()) {
    reply_json(res, 400, {{"ok", false},
                          {"error", "POST /cameras/" + camera + "/points: the body must be one JSON object " +
                                        "{\"points\": [{\"id\", \"x\", \"y\"}]}" + (error.empty() ? "" : ": " + error)}});
    return;
  }
  request["cmd"] = "add_points";
  request["camera"] = camera;
  const json reply = sources.control(request);
  reply_json(res, reply.value("ok", false) ? 200 : 400, reply);
}

}  // namespace

void add_live_view_routes(httplib::Server& server, LiveViewSources sources) {
  auto shared = std::make_shared<const LiveViewSources>(std::move(sources));
  server.Get("/", [shared](const httplib::Request&, httplib::Response& res) {
    res.set_content(live_view_index_html(shared->cameras()), "text/html; charset=utf-8");
  });
  server.Get("/cameras", [shared](const httplib::Request&, httplib::Response& res) {
    reply_json(res, 200, {{"cameras", shared->cameras()}});
  });
  server.Get(R"(/cameras/([^/]+)/view)", [shared](const httplib::Request& req, httplib::Response& res) {
    const std::string camera = known_camera(*shared, req, res);
    if (!camera.empty()) res.set_content(live_view_camera_html(camera), "text/html; charset=utf-8");
  });
  server.Get(R"(/cameras/([^/]+)/snapshot\.jpg)",
             [shared](const httplib::Request& req, httplib::Response& res) { snapshot(*shared, req, res); });
  server.Post(R"(/cameras/([^/]+)/points)",
              [shared](const httplib::Request& req, httplib::Response& res) { add_points(*shared, req, res); });
}

}  // namespace edgetap::daemon
