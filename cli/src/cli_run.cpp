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
#include "edgetap/cli/option_numbers.hpp"

namespace edgetap::cli {
namespace {

constexpr const char* kUsage = R"(usage: edgetap run [--config FILE | --source URI] [options]

Tracks until every source ends (files), the duration passes, or Ctrl-C.
With neither --config nor --source it tracks the bundled demo clip
()" EDGETAP_INSTALL_DATA_DIR R"(/demo/vtest-pedestrians.avi).
  --config FILE       a configuration file (the annotated example: /etc/edgetap/edgetap.yaml)
  --source URI        one camera: file://PATH, rtsp://URL, v4l2:///dev/videoN, test:PATTERN
  --grid N            for --source: an N x N grid of query points, 1..256 (default 16)
  --tracker NAME      for --source: edgetap (default: the network, bundled model) or klt
  --pace MODE         for --source files: fast (default) or realtime
                      (--source, --grid, --tracker, --pace: not with --config, set them in FILE)
  --socket PATH       track socket (default: the file's, or $XDG_RUNTIME_DIR/edgetap-run.sock)
  --out DIR           where the annotated strips go (default ./out)
  --duration SEC      stop after SEC seconds
  --log-level LEVEL   trace, debug, info (default), warn, error
Exit status: 0 when a camera ran, 1 when every camera failed, 2 on a bad flag,
78 on a bad configuration.
)";

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
  std::string quick_flags;  // those given of --source, --grid, --tracker, --pace
  int grid = 16;
  double duration = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (has_value && (arg == "--source" || arg == "--grid" || arg == "--tracker" || arg == "--pace")) {
      quick_flags += (quick_flags.empty() ? "" : ", ") + arg;
    }
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--config" && has_value) {
      config_path = argv[++i];
    } else if (arg == "--source" && has_value) {
      source = argv[++i];
    } else if (arg == "--grid" && has_value) {
      if (!daemon::read_int_option("edgetap run", arg, argv[++i], 1, 256, grid)) return 2;
    } else if (arg == "--tracker" && has_value) {
      tracker = argv[++i];
    } else if (arg == "--pace" && has_value) {
      pace = argv[++i];
    } else if (arg == "--socket" && has_value) {
      socket_path = argv[++i];
    } else if (arg == "--out" && has_value) {
      out_dir = argv[++i];
    } else if (arg == "--duration" && has_value) {
      if (!daemon::read_seconds_option("edgetap run", arg, argv[++i], 0.0, 1e9, duration)) return 2;
    } else if (arg == "--log-level" && has_value) {
      if (!daemon::set_log_level(argv[++i])) {
        std::fprintf(stderr, "edgetap run: unknown log level '%s'\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "edgetap run: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
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
