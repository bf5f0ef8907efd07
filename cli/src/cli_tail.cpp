// edgetap tail: subscribes to a track socket and prints what arrives.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "edgetap/publish/track_client.hpp"
#include "edgetap/cli/command_line.hpp"
#include "edgetap/daemon/socket_paths.hpp"

namespace edgetap::cli {
namespace {

constexpr const char* kDescription = "Subscribes to the track socket and prints one line per message.";

constexpr const char* kFooter = R"(The socket is open to the daemon's group (edgetap for the packaged service):
join it with `sudo adduser $USER edgetap` and log in again. A connection that
fails says why and what to do.
Exit status: 0 after --count messages or when the daemon closes the socket; 1 when
it cannot be reached or sends an error; 2 on a bad flag.)";

std::string summarise(const nlohmann::json& m) {
  if (m.value("type", "") != "tracks") return m.dump();
  int visible = 0;
  const auto& points = m["points"];
  for (const auto& p : points) visible += p.value("visible", false) ? 1 : 0;
  char line[256];
  std::snprintf(line, sizeof(line), "%-12s seq=%-6llu frame=%-6llu points=%-5zu visible=%-5d latency=%.1fms rung=%s dropped=%llu",
                m.value("camera", "?").c_str(), m.value("seq", 0ULL), m.value("frame", 0ULL), points.size(), visible,
                m.value("latency_ms", 0.0), m.value("rung", "?").c_str(), m.value("dropped", 0ULL));
  return line;
}

}  // namespace

int tail_command(int argc, char** argv) {
  std::string socket_path = "/run/edgetap/tracks.sock";
  std::vector<std::string> cameras;
  long count = -1;
  bool raw = false;
  double wait_seconds = 0;
  CLI::App app(kDescription, "edgetap tail");
  configure_app(app, kDescription, kFooter);
  app.add_option("--socket", socket_path, "track socket (default /run/edgetap/tracks.sock)")->type_name("PATH");
  app.add_option("--camera", cameras, "only this camera (repeatable; default all)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_int_option(app, "--count", "exit after N track messages", 1L, 1000000000L, count)->type_name("N");
  app.add_flag("--raw", raw, "print the JSON lines as received");
  add_seconds_option(app, "--wait", "keep trying to connect for up to SEC seconds (default 0)", 0.0, 1e9, wait_seconds)
      ->type_name("SEC");
  if (const int status = parse_command_line(app, argc, argv); status >= 0) return status;
  pipeline::TrackClient client;
  std::string error;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  while (!client.connect(socket_path, error)) {
    if (std::chrono::steady_clock::now() >= give_up) {
      std::fprintf(stderr, "edgetap tail: %s\n",
                   daemon::connect_problem(socket_path, client.error_number(), "publisher.socket").c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!cameras.empty()) client.send_line(nlohmann::json{{"subscribe", cameras}}.dump());
  long received = 0;
  while (count < 0 || received < count) {
    const auto line = client.read_line(std::chrono::milliseconds(1000));
    if (!line) {
      if (client.closed()) break;
      continue;
    }
    const nlohmann::json message = nlohmann::json::parse(*line, nullptr, false);
    if (message.is_discarded()) {
      std::fprintf(stderr, "edgetap tail: malformed line: %s\n", line->c_str());
      continue;
    }
    std::printf("%s\n", raw ? line->c_str() : summarise(message).c_str());
    std::fflush(stdout);
    if (message.value("type", "") == "tracks") ++received;
    if (message.value("type", "") == "error") return 1;
  }
  return 0;
}

}  // namespace edgetap::cli
