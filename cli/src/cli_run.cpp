// edgetap run: tracks a configuration, a single source, or (with no arguments)
// the bundled demo clip, until the sources end, a duration passes or Ctrl-C;
// prints a per-camera summary and writes an annotated strip per camera.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "cli.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/daemon/signals.hpp"
#include "edgetap/daemon/socket_paths.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/kernels/gpu_probe.hpp"
#include "edgetap/tracking/data_files.hpp"
#include "edgetap/tracking/track_strip.hpp"
#include "edgetap/cli/command_line.hpp"

namespace edgetap::cli {
namespace {

constexpr const char* kDescription = R"(Tracks a configuration (--config FILE) or one camera (--source URI) until
every source ends (files), the duration passes, or Ctrl-C.
With neither --config nor --source it tracks the bundled demo clip
()" EDGETAP_INSTALL_DATA_DIR R"(/demo/vtest-pedestrians.avi).)";

constexpr const char* kFooter = R"(--source, --grid, --tracker, --pace: not with --config, set them in FILE.
Exit status: 0 when a camera ran, 1 when every camera failed, 2 on a bad flag,
78 on a bad configuration.)";

std::string default_socket() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return std::string(runtime && *runtime ? runtime : "/tmp") + "/edgetap-run.sock";
}

std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// A one-camera configuration, written as YAML so it is validated like any file.
std::string quick_config(const std::string& source, int grid, const std::string& pace, const std::string& tracker) {
  return "cameras:\n  - name: " + std::string(source.rfind("test:", 0) == 0 ? "test" : "demo") +
         "\n    source: " + yaml_quoted(source) + "\n    tracker: " + yaml_quoted(tracker) +
         "\n    queries: {policy: grid, grid: [" + std::to_string(grid) +
         ", " + std::to_string(grid) + "]}\n    capture: {pace: " + pace + ", at_eof: stop, queue: 8}\n";
}

// The one-camera flags, checked here so that a bad one is named as the flag it is (a
// problem found in the YAML made from them would name a file the user never wrote).
// `quick_flags` are those given among --source, --grid, --tracker and --pace.
bool check_quick_flags(const std::string& config_path, const std::string& quick_flags, const std::string& source,
                       const std::string& tracker, const std::string& pace) {
  const auto fail = [](const std::string& message) {
    std::fprintf(stderr, "edgetap run: %s\n", message.c_str());
    return false;
  };
  if (!config_path.empty() && !quick_flags.empty()) {
    return fail("--config FILE cannot go with " + quick_flags + ", which make a one-camera run (set those in FILE)");
  }
  if (!config::tracker_kind(tracker)) return fail("--tracker must be edgetap or klt, not '" + tracker + "'");
  if (pace != "fast" && pace != "realtime") return fail("--pace must be fast or realtime, not '" + pace + "'");
  if (source.empty()) return true;
  std::string error;
  const std::optional<config::Source> parsed =
      config::parse_source(source, std::filesystem::current_path().string(), error);
  if (!parsed) return fail("--source: " + error);
  if (parsed->kind == config::SourceKind::file && !std::filesystem::is_regular_file(parsed->location)) {
    return fail("--source: no file " + parsed->location);
  }
  return true;
}

}  // namespace

int run_command(int argc, char** argv) {
  std::string config_path, source, socket_path, pace = "fast", out_dir = "out", tracker = "edgetap";
  int grid = 16;
  double duration = 0;
  CLI::App app(kDescription, "edgetap run");
  configure_app(app, kDescription, kFooter);
  app.add_option("--config", config_path, "a configuration file (the annotated example: /etc/edgetap/edgetap.yaml)")
      ->type_name("FILE");
  app.add_option("--source", source, "one camera: file://PATH, rtsp://URL, v4l2:///dev/videoN, test:PATTERN")
      ->type_name("URI");
  add_int_option(app, "--grid", "for --source: an N x N grid of query points, 1..256 (default 16)", 1, 256, grid)
      ->type_name("N");
  app.add_option("--tracker", tracker, "for --source: edgetap (default: the network, bundled model) or klt")
      ->type_name("NAME");
  app.add_option("--pace", pace, "for --source files: fast (default) or realtime")->type_name("MODE");
  app.add_option("--socket", socket_path, "track socket (default: the file's, or $XDG_RUNTIME_DIR/edgetap-run.sock)")
      ->type_name("PATH");
  app.add_option("--out", out_dir, "where the annotated strips go (default ./out)")->type_name("DIR");
  add_seconds_option(app, "--duration", "stop after SEC seconds", 0.0, 1e9, duration)->type_name("SEC");
  add_log_level_option(app, "trace, debug, info (default), warn, error", daemon::set_log_level);
  if (const int status = parse_command_line(app, argc, argv); status >= 0) return status;
  std::string quick_flags;  // those given of --source, --grid, --tracker, --pace, in the order given
  for (const CLI::Option* option : app.parse_order()) {
    const std::string name = option->get_name();
    const bool quick = name == "--source" || name == "--grid" || name == "--tracker" || name == "--pace";
    if (quick && quick_flags.find(name) == std::string::npos) quick_flags += (quick_flags.empty() ? "" : ", ") + name;
  }

  if (!check_quick_flags(config_path, quick_flags, source, tracker, pace)) return 2;

  daemon::SignalWaiter signals({SIGINT, SIGTERM});
  config::Config config;
  try {
    if (!config_path.empty()) {
      config = config::load_file(config_path);
    } else {
      if (source.empty()) {
        source = "file://" + pipeline::find_data_file("demo/vtest-pedestrians.avi", "assets/demo/vtest-pedestrians.avi");
      }
      config = config::load_string(quick_config(source, grid, pace, tracker), "--source",
                                   std::filesystem::current_path().string());
    }
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return config::kExitBadConfig;
  }
  if (!socket_path.empty()) {
    config.publisher.socket_path = socket_path;
  } else if (config_path.empty()) {
    config.publisher.socket_path = default_socket();
  }

  // The file's socket is often the service's, in /run/edgetap, which exists under systemd only.
  const std::string problem =
      socket_path.empty() && !config_path.empty()
          ? daemon::socket_directory_problem(config.publisher.socket_path, "publisher.socket", "--socket", config_path)
          : "";
  if (!problem.empty()) {
    std::fprintf(stderr, "edgetap run: %s\n", problem.c_str());
    return 1;
  }

  auto log = daemon::make_logger("run");
  log->info("{}", kernels::describe_backend_choice(backend::probe_gpus()));
  std::map<std::string, pipeline::TrackStrip> strips;
  for (const auto& camera : config.cameras) strips.emplace(camera.name, pipeline::TrackStrip());
  daemon::Runtime runtime(config, [&](const config::CameraConfig& camera) -> daemon::FrameObserver {
    pipeline::TrackStrip& strip = strips.at(camera.name);
    return [&strip](const pipeline::Frame& frame, const std::vector<TrackPoint>& points) { strip.add(frame, points); };
  });
  std::string error;
  if (!runtime.start(error)) {
    log->critical("{}", error);
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  while (!runtime.all_finished()) {
    const int signal = signals.wait(std::chrono::milliseconds(100));
    if (signal != 0) break;
    if (duration > 0 && std::chrono::steady_clock::now() - started > std::chrono::duration<double>(duration)) break;
  }
  runtime.stop();

  const auto stats = runtime.stats();
  const pipeline::PublisherStats published = runtime.publisher_stats();
  std::printf("\n%s", daemon::format_summary(stats).c_str());
  std::printf("published %llu messages on %s\n", static_cast<unsigned long long>(published.messages),
              config.publisher.socket_path.c_str());
  std::filesystem::create_directories(out_dir);
  int failed = 0;
  for (const auto& s : stats) {
    failed += s.state == daemon::CameraState::failed ? 1 : 0;
    const std::string path = out_dir + "/" + s.name + "-tracks.png";
    if (strips.at(s.name).write_png(path, error)) {
      std::printf("wrote %s (%zu panels)\n", path.c_str(), strips.at(s.name).panels());
    } else {
      std::printf("no strip for %s: %s\n", s.name.c_str(), error.c_str());
    }
  }
  return failed == static_cast<int>(stats.size()) ? 1 : 0;
}

}  // namespace edgetap::cli
