// EdgeTAP's C++ client: subscribe to edgetapd's track socket and drive its
// control socket. Header-only; needs nlohmann/json (pkg-config: edgetap-client).
// Schema version 1 (README "Versions and compatibility"); the JSON Schemas are
// in /usr/share/edgetap/schema.
//
//   edgetap::client::Subscriber tracks("/run/edgetap/tracks.sock", {"gate"});
//   while (auto message = tracks.next()) std::cout << message->seq << "\n";
//
//   edgetap::client::ControlClient control("/run/edgetap/control.sock");
//   control.add_points("gate", {{"door", 412, 230}});
//
// Errors (a socket that cannot be reached, a refused subscription, an error
// reply) throw edgetap::client::Error naming the socket and the reason.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace edgetap::client {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kDefaultTrackSocket = "/run/edgetap/tracks.sock";
inline constexpr const char* kDefaultControlSocket = "/run/edgetap/control.sock";

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Point {
  std::string id;
  double x = 0, y = 0;  // source-image pixels, pixel centres at integer coordinates
  bool visible = false;
  double confidence = 0;
  bool lost = false;
};

struct TrackMessage {
  std::string camera;
  std::uint64_t seq = 0, frame = 0;
  std::int64_t capture_us = 0, publish_us = 0;
  double latency_ms = 0, tracker_ms = 0;
  std::string rung;
  std::uint64_t queue_drops = 0, dropped = 0;
  int width = 0, height = 0;
  std::vector<Point> points;
};

// The reply to add_points (applied: added) or remove_points (applied: removed).
struct PointsChange {
  std::vector<std::string> applied, rejected;
};

struct NewPoint {
  std::string id;
  double x = 0, y = 0;
};

namespace detail {

// A connected Unix stream socket that reads lines; owns its fd.
class LineSocket {
 public:
  explicit LineSocket(const std::string& path) : path_(path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) throw Error(path + ": the socket path is too long");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw Error(path + ": socket: " + std::strerror(errno));
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      const int e = errno;
      ::close(fd_);
      const char* hint = e == ENOENT ? " (does edgetapd run, and is this the socket its configuration names?)"
                         : e == EACCES ? " (join the socket's group, the service's: edgetap, and log in again)"
                         : e == ECONNREFUSED ? " (nothing listens on it any more)"
                                             : "";
      throw Error(path + ": " + std::strerror(e) + hint);
    }
  }
  ~LineSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  LineSocket(const LineSocket&) = delete;
  LineSocket& operator=(const LineSocket&) = delete;

  void send_line(const std::string& line) {
    const std::string out = line + "\n";
    std::size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(path_ + ": send: " + std::strerror(errno));
      sent += static_cast<std::size_t>(n);
    }
  }

  // The next line without its newline; nullopt at the end of the stream.
  std::optional<std::string> read_line() {
    for (;;) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(path_ + ": recv: " + std::strerror(errno));
      if (n == 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  std::optional<nlohmann::json> read_json() {
    const auto line = read_line();
    if (!line) return std::nullopt;
    try {
      return nlohmann::json::parse(*line);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(path_ + ": not a JSON line (" + e.what() + "): " + line->substr(0, 200));
    }
  }

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::string buffer_;
};

inline TrackMessage parse_tracks(const nlohmann::json& m, const std::string& path) {
  try {
    if (m.at("v").get<int>() != kSchemaVersion) {
      throw Error(path + ": schema version " + m.at("v").dump() + ", this client reads " + std::to_string(kSchemaVersion));
    }
    TrackMessage t;
    t.camera = m.at("camera").get<std::string>();
    t.seq = m.at("seq").get<std::uint64_t>();
    t.frame = m.at("frame").get<std::uint64_t>();
    t.capture_us = m.at("capture_us").get<std::int64_t>();
    t.publish_us = m.at("publish_us").get<std::int64_t>();
    t.latency_ms = m.at("latency_ms").get<double>();
    t.tracker_ms = m.at("tracker_ms").get<double>();
    t.rung = m.at("rung").get<std::string>();
    t.queue_drops = m.at("queue_drops").get<std::uint64_t>();
    t.dropped = m.value("dropped", std::uint64_t{0});
    t.width = m.at("size").at(0).get<int>();
    t.height = m.at("size").at(1).get<int>();
    for (const auto& p : m.at("points")) {
      t.points.push_back({p.at("id").get<std::string>(), p.at("x").get<double>(), p.at("y").get<double>(),
                          p.at("visible").get<bool>(), p.at("confidence").get<double>(), p.at("lost").get<bool>()});
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": a tracks message this client cannot read (" + e.what() + "): " + m.dump().substr(0, 200));
  }
}

}  // namespace detail

// A subscription to the track socket: the hello is sent and its reply checked
// in the constructor; next() returns each tracks message, nullopt at the end.
class Subscriber {
 public:
  explicit Subscriber(const std::string& path = kDefaultTrackSocket, const std::vector<std::string>& cameras = {})
      : socket_(path) {
    socket_.send_line(nlohmann::json{{"subscribe", cameras}, {"format", "ndjson"}}.dump());
    const auto reply = socket_.read_json();
    if (!reply) throw Error(path + ": the connection closed before the hello reply");
    if (reply->value("type", "") != "hello") throw Error(path + ": " + reply->value("error", reply->dump()));
    hello_ = *reply;
  }

  // The server's hello reply ({"v":1,"type":"hello","subscribe":[...],"format":"ndjson"}).
  const nlohmann::json& hello() const noexcept { return hello_; }

  std::optional<TrackMessage> next() {
    while (const auto message = socket_.read_json()) {
      const std::string type = message->value("type", "");
      if (type == "error") throw Error(socket_.path() + ": " + message->value("error", ""));
      if (type == "tracks") return detail::parse_tracks(*message, socket_.path());
    }
    return std::nullopt;
  }

 private:
  detail::LineSocket socket_;
  nlohmann::json hello_;
};

// One connection to the control socket; requests are answered in order.
class ControlClient {
 public:
  explicit ControlClient(const std::string& path = kDefaultControlSocket) : socket_(path) {}

  // Sends `request`; returns the reply, or throws Error with the daemon's error.
  nlohmann::json request(const nlohmann::json& request) {
    socket_.send_line(request.dump());
    const auto reply = socket_.read_json();
    if (!reply) throw Error(socket_.path() + ": the connection closed without a reply");
    if (!reply->value("ok", false)) throw Error(reply->value("error", reply->dump()));
    return *reply;
  }

  nlohmann::json list() { return request({{"cmd", "list"}}).at("cameras"); }
  nlohmann::json stats() { return request({{"cmd", "stats"}}); }

  // Points in source pixels of the camera's latest frame.
  PointsChange add_points(const std::string& camera, const std::vector<NewPoint>& points) {
    nlohmann::json list = nlohmann::json::array();
    for (const NewPoint& p : points) list.push_back({{"id", p.id}, {"x", p.x}, {"y", p.y}});
    const auto reply = request({{"cmd", "add_points"}, {"camera", camera}, {"points", list}});
    return {reply.at("added").get<std::vector<std::string>>(), reply.at("rejected").get<std::vector<std::string>>()};
  }

  PointsChange remove_points(const std::string& camera, const std::vector<std::string>& ids) {
    const auto reply = request({{"cmd", "remove_points"}, {"camera", camera}, {"ids", ids}});
    return {reply.at("removed").get<std::vector<std::string>>(), reply.at("rejected").get<std::vector<std::string>>()};
  }

 private:
  detail::LineSocket socket_;
};

}  // namespace edgetap::client
