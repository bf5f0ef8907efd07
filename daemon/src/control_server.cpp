#include "edgetap/daemon/control_server.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>

#include "edgetap/json_input.hpp"
#include "edgetap/publish/unix_listener.hpp"

namespace edgetap::daemon {
namespace {

constexpr std::size_t kMaxRequestBytes = 1 << 20;

bool send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      if (::poll(&pfd, 1, 1000) > 0) continue;
    }
    return false;  // the client is gone or not reading: drop it
  }
  return true;
}

}  // namespace

ControlServer::ControlServer(std::string path, Handler handler, std::shared_ptr<spdlog::logger> log,
                             std::string group)
    : path_(std::move(path)),
      group_(std::move(group)),
      handler_(std::move(handler)),
      log_(std::move(log)),
      accept_pause_("control socket", log_) {}

ControlServer::~ControlServer() { stop(); }

bool ControlServer::start(std::string& error) {
  listen_fd_ = pipeline::listen_unix(path_, 0660, group_, error);
  if (listen_fd_ < 0) return false;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  running_ = true;
  thread_ = std::thread([this] { serve(); });
  log_->info("control socket listening on {}", path_);
  return true;
}

void ControlServer::stop() {
  if (running_.exchange(false)) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink(path_.c_str());
    listen_fd_ = -1;
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

std::string ControlServer::answer(const std::string& line) {
  std::string error;
  const nlohmann::json request = parse_json_input(line, error);
  nlohmann::json reply;
  if (request.is_discarded() || !request.is_object()) {
    reply = {{"ok", false}, {"error", "a request is one JSON object on one line" + (error.empty() ? "" : ": " + error)}};
  } else {
    try {
      reply = handler_(request);
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}};
    }
    if (request.contains("id")) reply["id"] = request["id"];
  }
  // ASCII only (\uXXXX escapes): a reply echoes what the client sent, and raw bidi controls
  // or other invisible characters would reach whatever terminal or log shows it.
  return reply.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

void ControlServer::accept_clients(std::map<int, std::string>& clients) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (!pipeline::accept_error_is_transient(errno)) accept_pause_.failed(errno, std::chrono::steady_clock::now());
      return;
    }
    accept_pause_.succeeded();
    clients[fd];
  }
}

void ControlServer::serve() {
  std::map<int, std::string> clients;  // fd -> bytes of an unfinished line
  while (running_) {
    std::chrono::milliseconds wait(1000);
    const int listen_fd = accept_pause_.poll_fd(listen_fd_, std::chrono::steady_clock::now(), wait);
    std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}, {listen_fd, POLLIN, 0}};
    for (const auto& [fd, pending] : clients) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) <= 0) continue;
    if (fds[1].revents & POLLIN) accept_clients(clients);
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      std::string& pending = clients[fd];
      char buffer[4096];
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      bool keep = n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
      if (n > 0) pending.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t newline; keep && (newline = pending.find('\n')) != std::string::npos;) {
        const std::string line = pending.substr(0, newline);
        pending.erase(0, newline + 1);
        if (!line.empty()) keep = send_all(fd, answer(line));
      }
      if (keep && pending.size() > kMaxRequestBytes) {
        send_all(fd, nlohmann::json{{"ok", false}, {"error", "request longer than 1 MiB"}}.dump() + "\n");
        keep = false;
      }
      if (!keep) {
        ::close(fd);
        clients.erase(fd);
      }
    }
  }
  for (const auto& [fd, pending] : clients) ::close(fd);
}

}  // namespace edgetap::daemon
