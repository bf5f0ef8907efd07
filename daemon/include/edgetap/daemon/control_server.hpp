// The control socket: JSON lines in, one JSON line out per request, on a Unix
// stream socket served by its own thread. What each request does is the
// handler's business (see control_commands.hpp); a malformed line gets an
// error reply, never a crash.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "edgetap/publish/accept_pause.hpp"

namespace spdlog { class logger; }

namespace edgetap::daemon {

class ControlServer {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  // `group`: the socket file's group (control.group; "" = the daemon's).
  ControlServer(std::string path, Handler handler, std::shared_ptr<spdlog::logger> log, std::string group = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  bool start(std::string& error);
  void stop();
  // The reply line (newline included) to one request line: what serve() sends back.
  // Public so that the control protocol is fuzzed without a socket (fuzz/fuzz_control.cpp).
  std::string answer(const std::string& line);

 private:
  void serve();
  void accept_clients(std::map<int, std::string>& clients);  // fd -> bytes of an unfinished line

  const std::string path_;
  const std::string group_;
  Handler handler_;
  std::shared_ptr<spdlog::logger> log_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> running_{false};
  std::thread thread_;
  pipeline::AcceptPause accept_pause_;  // the serving thread's
};

}  // namespace edgetap::daemon
