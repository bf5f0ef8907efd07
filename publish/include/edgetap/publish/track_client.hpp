// A subscriber of the track socket: connect, optionally send the hello line,
// read one JSON line at a time. Used by `edgetap tail`, `edgetap ctl` (the
// control socket speaks JSON lines too) and the tests.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace edgetap::pipeline {

class TrackClient {
 public:
  TrackClient() = default;
  ~TrackClient();
  TrackClient(const TrackClient&) = delete;
  TrackClient& operator=(const TrackClient&) = delete;

  bool connect(const std::string& socket_path, std::string& error);
  // The errno of the last failed connect() (0 when none failed).
  int error_number() const noexcept { return error_number_; }
  bool send_line(const std::string& line);
  // The next line (without newline), or nullopt on timeout or when the server closed.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  bool closed() const noexcept { return closed_; }
  void close();

 private:
  int fd_ = -1;
  bool closed_ = false;
  int error_number_ = 0;
  std::string buffer_;
};

}  // namespace edgetap::pipeline
