// edgetap ctl: one request to edgetapd's control socket (daemon/src/control_commands.cpp
// for the protocol), its reply printed for a person (or as received, --json).
#include <nlohmann/json.hpp>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/cli/command_line.hpp"
#include "edgetap/daemon/socket_paths.hpp"
#include "edgetap/publish/track_client.hpp"

namespace edgetap::cli {
namespace {

using json = nlohmann::json;

constexpr const char* kDescription = R"(Sends one request to edgetapd's control socket and prints the reply.
Commands:
  list                                 the cameras: state, tracker, model size, queries, points, source
  stats [--camera NAME]                every counter (as /metrics), of every camera or of NAME
  add-point CAMERA ID X Y [ID X Y]...  new tracks at source pixels (X, Y) of the camera's latest frame
  remove-point CAMERA ID...            stop tracks for good)";

constexpr const char* kFooter = R"(The socket is open to the daemon's group (edgetap for the packaged service):
join it with `sudo adduser $USER edgetap` and log in again. A connection that
fails says why and what to do.
Exit status: 0 when the daemon did all that was asked; 1 when it answered an error
or rejected a point (the reason is printed), or cannot be reached; 2 on a usage
error; 78 when --config FILE is bad.)";

struct Options {
  std::string socket, config_path, camera;
  bool raw = false;
  double timeout_s = 10;
  std::vector<std::string> words;  // the command and its arguments
};

// The usage errors found once the command line is read: print and return 2.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "edgetap ctl: %s\nRun 'edgetap ctl --help' for the commands and options.\n", message.c_str());
  return 2;
}

// Options may come before or after the command; everything else is a word.
// Returns -1 to go on, else the exit status.
int parse(int argc, char** argv, Options& o) {
  CLI::App app(kDescription, "edgetap ctl");
  configure_app(app, kDescription, kFooter);
  app.add_option("--socket", o.socket,
                 "the control socket (default: control.socket of --config FILE, else of /etc/edgetap/edgetap.yaml, "
                 "else /run/edgetap/control.sock)")
      ->type_name("PATH");
  add_config_option(app, "take the socket's path from FILE", o.config_path);
  app.add_option("--camera", o.camera, "stats: only this camera")->type_name("NAME");
  app.add_flag("--json", o.raw,
               "print the reply's JSON line as received (stats --camera: with only that camera's entry)");
  add_seconds_option(app, "--timeout", "wait at most SEC seconds for the reply (default 10)", 0.1, 3600.0, o.timeout_s)
      ->type_name("SEC");
  app.add_option("COMMAND", o.words, "list, stats, add-point or remove-point, and its arguments")
      ->type_name("WORD");
  if (const int status = parse_command_line(app, argc, argv); status >= 0) return status;
  if (o.words.empty()) return usage_error("which command? (list, stats, add-point, remove-point)");
  if (!o.socket.empty() && !o.config_path.empty()) return usage_error("give --socket or --config, not both");
  if (!o.camera.empty() && o.words[0] != "stats") return usage_error("--camera goes with stats only");
  return -1;
}

bool read_coordinate(const std::string& text, const char* axis, double& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc{} && end == text.data() + text.size() && std::isfinite(out)) return true;
  std::fprintf(stderr, "edgetap ctl: add-point: %s must be a number of source pixels, not '%s'\n", axis, text.c_str());
  return false;
}

// The request for the command in `words`, or a null json after printing why not.
json make_request(const std::vector<std::string>& words) {
  const std::string& command = words[0];
  const std::size_t args = words.size() - 1;
  if (command == "list" || command == "stats") {
    if (args == 0) return {{"cmd", command}};
    usage_error(command + " takes no arguments");
  } else if (command == "add-point") {
    if (args < 4 || (args - 1) % 3 != 0) {
      usage_error("add-point needs CAMERA and then ID X Y, once or more");
      return nullptr;
    }
    json points = json::array();
    for (std::size_t i = 2; i + 2 < words.size(); i += 3) {
      double x = 0, y = 0;
      if (!read_coordinate(words[i + 1], "X", x) || !read_coordinate(words[i + 2], "Y", y)) return nullptr;
      points.push_back({{"id", words[i]}, {"x", x}, {"y", y}});
    }
    return {{"cmd", "add_points"}, {"camera", words[1]}, {"points", points}};
  } else if (command == "remove-point") {
    const std::vector<std::string> ids(words.begin() + 2, words.end());
    if (args >= 2) return {{"cmd", "remove_points"}, {"camera", words[1]}, {"ids", ids}};
    usage_error("remove-point needs CAMERA and at least one ID");
  } else {
    usage_error("unknown command '" + command + "' (list, stats, add-point, remove-point)");
  }
  return nullptr;
}

// The control socket's path: --socket, else control.socket of --config FILE (which must
// load), else of the installed configuration when it loads, else the built-in default.
// Returns -1 to go on, else the exit status.
int resolve_socket(Options& o) {
  if (!o.socket.empty()) return -1;
  const bool named = !o.config_path.empty();
  const std::string path = named ? o.config_path : kDefaultConfigPath;
  o.socket = config::ControlConfig{}.socket_path;
  if (!named && !std::filesystem::exists(path)) return -1;
  try {
    o.socket = config::load_file(path).control.socket_path;
  } catch (const config::ConfigError& e) {
    if (!named) return -1;  // the daemon cannot have started from it either
    std::fprintf(stderr, "%s\n", e.what());
    return config::kExitBadConfig;
  }
  if (o.socket.empty()) {
    std::fprintf(stderr, "edgetap ctl: %s turns the control socket off (control.socket: \"\")\n", path.c_str());
    return 1;
  }
  return -1;
}

std::string text(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

void print_list(const json& reply) {
  std::printf("%-16s %-12s %-8s %-9s %-9s %6s  %s\n", "NAME", "STATE", "TRACKER", "MODEL", "QUERIES", "POINTS",
              "SOURCE");
  for (const json& c : reply.value("cameras", json::array())) {
    const json size = c.value("model_size", json::array({0, 0}));
    const std::string model = text(size.at(0)) + "x" + text(size.at(1));
    std::printf("%-16s %-12s %-8s %-9s %-9s %6s  %s\n", text(c.value("name", json())).c_str(),
                text(c.value("state", json())).c_str(), text(c.value("tracker", json())).c_str(), model.c_str(),
                text(c.value("queries", json())).c_str(), text(c.value("points", json())).c_str(),
                text(c.value("source", json())).c_str());
  }
}

void print_camera_stats(const json& c) {
  std::printf("%s: %s, %.1f fps, %s points, rung %s\n", text(c.value("name", json())).c_str(),
              text(c.value("state", json())).c_str(), c.value("fps", 0.0), text(c.value("points", json())).c_str(),
              text(c.value("rung", json())).c_str());
  std::printf("  frames: %s captured, %s tracked, %s dropped by the queue, %s left by the rung's stride\n",
              text(c.value("frames_captured", json())).c_str(), text(c.value("frames_tracked", json())).c_str(),
              text(c.value("queue_drops", json())).c_str(), text(c.value("frames_strided", json())).c_str());
  std::printf("  latency: mean %.1f ms, max %.1f ms, governor percentile %.1f ms; tracker mean %.1f ms\n",
              c.value("latency_ms_mean", 0.0), c.value("latency_ms_max", 0.0), c.value("latency_percentile_ms", 0.0),
              c.value("tracker_ms_mean", 0.0));
  std::printf("  tracks lost %s, pipeline restarts %s, rung changes %s, rung failures %s\n",
              text(c.value("tracks_lost", json())).c_str(), text(c.value("restarts", json())).c_str(),
              text(c.value("rung_changes", json())).c_str(), text(c.value("rung_failures", json())).c_str());
  if (!c.value("error", std::string()).empty()) std::printf("  error: %s\n", c["error"].get<std::string>().c_str());
}

// Keeps only `camera`'s entry in the reply's cameras; false (with the names there are)
// when it has none.
bool keep_camera(json& reply, const std::string& camera) {
  json kept = json::array();
  std::string names;
  for (const json& c : reply.value("cameras", json::array())) {
    names += (names.empty() ? "" : ", ") + text(c.value("name", json()));
    if (c.value("name", json()) == camera) kept.push_back(c);
  }
  if (kept.empty()) {
    std::fprintf(stderr, "edgetap ctl: no camera named '%s' (cameras: %s)\n", camera.c_str(), names.c_str());
    return false;
  }
  reply["cameras"] = kept;
  return true;
}

void print_stats(const json& reply, bool totals) {
  for (const json& c : reply.value("cameras", json::array())) print_camera_stats(c);
  if (!totals) return;
  const json s = reply.value("socket", json::object());
  std::printf("track socket: %s subscribers, %s messages, %s dropped by slow subscribers, %s refused\n",
              text(s.value("subscribers", json())).c_str(), text(s.value("messages", json())).c_str(),
              text(s.value("subscriber_drops", json())).c_str(), text(s.value("refused", json())).c_str());
  if (reply.contains("mqtt")) {
    const json& m = reply["mqtt"];
    std::printf("mqtt: %s, %s published, %s dropped, %s connects\n",
                m.value("connected", false) ? "connected" : "disconnected", text(m.value("published", json())).c_str(),
                text(m.value("dropped", json())).c_str(), text(m.value("connects", json())).c_str());
  }
}

// add_points / remove_points: what was done ("added", "removed"), then each rejection.
void print_change(const json& reply, const std::string& camera, const std::string& done_key) {
  const json done = reply.value(done_key, json::array());
  std::string ids;
  for (const json& id : done) ids += " " + text(id);
  std::printf("%s %zu point(s) %s %s%s%s\n", done_key.c_str(), done.size(), done_key == "added" ? "to" : "from",
              camera.c_str(), done.empty() ? "" : ":", ids.c_str());
  for (const json& r : reply.value("rejected", json::array())) std::printf("rejected %s\n", text(r).c_str());
}

}  // namespace

int ctl_command(int argc, char** argv) {
  Options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const json request = make_request(o.words);
  if (request.is_null()) return 2;
  if (const int status = resolve_socket(o); status >= 0) return status;

  pipeline::TrackClient client;
  std::string error;
  if (!client.connect(o.socket, error)) {
    std::fprintf(stderr, "edgetap ctl: %s\n",
                 daemon::connect_problem(o.socket, client.error_number(), "control.socket").c_str());
    return 1;
  }
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(o.timeout_s));
  const auto line = client.send_line(request.dump()) ? client.read_line(timeout) : std::nullopt;
  if (!line) {
    if (client.closed()) {
      std::fprintf(stderr, "edgetap ctl: %s closed the connection without a reply\n", o.socket.c_str());
    } else {
      std::fprintf(stderr, "edgetap ctl: no reply from %s within %g s (--timeout)\n", o.socket.c_str(), o.timeout_s);
    }
    return 1;
  }
  json reply = json::parse(*line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    std::fprintf(stderr, "edgetap ctl: the reply is not a JSON object: %s\n", line->c_str());
    return 1;
  }
  if (!reply.value("ok", false)) {
    if (o.raw) std::printf("%s\n", line->c_str());
    std::fprintf(stderr, "edgetap ctl: %s: %s\n", o.words[0].c_str(), text(reply.value("error", json("?"))).c_str());
    return 1;
  }
  if (!o.camera.empty() && !keep_camera(reply, o.camera)) return 1;
  const std::string& command = o.words[0];
  if (o.raw) {
    std::printf("%s\n", o.camera.empty() ? line->c_str() : reply.dump().c_str());
  } else if (command == "list") {
    print_list(reply);
  } else if (command == "stats") {
    print_stats(reply, o.camera.empty());
  } else {
    print_change(reply, o.words[1], command == "add-point" ? "added" : "removed");
  }
  return reply.value("rejected", json::array()).empty() ? 0 : 1;
}

}  // namespace edgetap::cli
