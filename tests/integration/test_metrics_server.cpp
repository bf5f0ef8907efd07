// /metrics and /healthz beside slow HTTP clients: a client that sends its request a
// byte at a time, or nothing, must not keep probes and scrapers waiting.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/metrics_server.hpp"

using namespace edgetap;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

int connect_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the server sends until it closes or `timeout` passes.
std::string read_until_closed(int fd, std::chrono::milliseconds timeout) {
  std::string text;
  const auto deadline = Clock::now() + timeout;
  for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
    pollfd pfd{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (::poll(&pfd, 1, static_cast<int>(left.count()) + 1) <= 0) break;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

struct MetricsFixture : ::testing::Test {
  daemon::MetricsServer server{[] { return daemon::Snapshot{}; }, daemon::make_logger("metrics")};
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server.start("127.0.0.1", 0, error)) << error;
  }
};

}  // namespace

// (e) cpp-httplib's default pool has 8 threads on a 2-core host and each slow client held one:
// 8 of them and /healthz waited for as long as they kept trickling.
TEST_F(MetricsFixture, HealthzAnswersBesideEightSlowClients) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  for (int i = 0; i < 8; ++i) {
    slow.emplace_back([&, port = server.port()] {
      const int fd = connect_tcp(port);
      const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
      for (std::size_t at = 0; fd >= 0 && at < request.size() && !stop; ++at) {  // a byte every 500 ms
        if (::send(fd, request.data() + at, 1, MSG_NOSIGNAL) != 1) break;
        for (int t = 0; t < 50 && !stop; ++t) std::this_thread::sleep_for(10ms);
      }
      if (fd >= 0) ::close(fd);
    });
  }
  std::this_thread::sleep_for(300ms);  // all 8 connected and trickling
  const auto asked = Clock::now();
  const int fd = connect_tcp(server.port());
  ASSERT_GE(fd, 0);
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  const std::string reply = read_until_closed(fd, 5000ms);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - asked);
  ::close(fd);
  stop = true;
  for (auto& t : slow) t.join();
  EXPECT_EQ(reply.rfind("HTTP/1.1 ", 0), 0u) << reply;
  EXPECT_LT(took.count(), 1000) << "ms for /healthz beside 8 slow clients";
}

// A client that connects and sends nothing is disconnected within the read timeout (2 s).
TEST_F(MetricsFixture, ASilentClientIsDisconnectedSoon) {
  const int fd = connect_tcp(server.port());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  read_until_closed(fd, 10000ms);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  ::close(fd);
  EXPECT_LT(took.count(), 3500) << "ms until a silent client was disconnected";
}
