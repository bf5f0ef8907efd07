// The control socket against a running camera: what a hostile or careless client
// sends (deep nesting, too many points, ids with control characters) gets a clear
// error reply, never a crash, and the server carries on.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/control_commands.hpp"
#include "edgetap/daemon/control_server.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/point_ids.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/json_input.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/fds_exhausted.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

const config::ControlLimits kDefaults;

struct ControlFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<daemon::Runtime> runtime;
  std::unique_ptr<daemon::ControlServer> control;
  pipeline::TrackClient client;

  // The configuration: cameras(), and `control` (the section's keys) when given.
  config::Config configuration(const std::string& control_keys = "") {
    const std::string yaml = "publisher: {socket: '" + dir.file("t.sock") + "'}\n" +
                             (control_keys.empty() ? "" : "control: {" + control_keys + "}\n") + cameras();
    return config::load_string(yaml, "t.yaml", dir.path().string());
  }
  // One camera seeding 4x4 points.
  virtual std::string cameras() {
    return "cameras:\n"
           "  - {name: gate, source: 'test:pinwheel?width=160&height=120&fps=30', model_size: [80, 60],"
           " tracker: klt, queries: {grid: [4, 4]}}\n";
  }
  virtual std::string control_section() { return ""; }

  void SetUp() override {
    runtime = std::make_unique<daemon::Runtime>(configuration(control_section()));
    std::string error;
    ASSERT_TRUE(runtime->start(error)) << error;
    control = std::make_unique<daemon::ControlServer>(
        dir.file("control.sock"), [this](const json& r) { return daemon::handle_control_request(*runtime, r); },
        daemon::make_logger("control"));
    ASSERT_TRUE(control->start(error)) << error;
    ASSERT_TRUE(client.connect(dir.file("control.sock"), error)) << error;
  }
  void TearDown() override {
    if (control) control->stop();
    if (runtime) runtime->stop();
  }

  // Sends one request line; returns the reply's text (empty on no reply).
  std::string ask_text(const std::string& line) {
    if (!client.send_line(line)) return "";
    return client.read_line(5000ms).value_or("");
  }
  json ask(const json& request) {
    const std::string reply = ask_text(request.dump());
    return reply.empty() ? json() : json::parse(reply);
  }
  void wait_for_a_tracked_frame() {
    for (int i = 0; i < 200 && runtime->stats()[0].frames_tracked == 0; ++i) std::this_thread::sleep_for(25ms);
    ASSERT_GT(runtime->stats()[0].frames_tracked, 0u);
  }
  void expect_server_carries_on() {
    const json reply = ask({{"cmd", "list"}, {"id", 7}});
    EXPECT_EQ(reply.value("ok", false), true) << reply;
    EXPECT_EQ(reply.value("id", 0), 7) << reply;
  }
};

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

json point(const std::string& id, double x = 40, double y = 30) { return {{"id", id}, {"x", x}, {"y", y}}; }

}  // namespace

TEST_F(ControlFixture, ADeeplyNestedIdIsRefusedNamingTheLimit) {
  const std::string reply = ask_text(R"({"cmd": "list", "id": )" + nested_arrays(100000) + "}");
  ASSERT_FALSE(reply.empty()) << "no reply (the server crashed or closed the connection)";
  const json j = json::parse(reply);
  EXPECT_EQ(j["ok"], false);
  EXPECT_NE(j["error"].get<std::string>().find("nested more than " + std::to_string(kMaxJsonDepth)), std::string::npos)
      << reply;
  expect_server_carries_on();
}

TEST_F(ControlFixture, ADeeplyNestedPointIsRefusedNamingTheLimit) {
  const std::string reply =
      ask_text(R"({"cmd": "add_points", "camera": "gate", "points": [)" + nested_arrays(100000) + "]}");
  ASSERT_FALSE(reply.empty()) << "no reply (the server crashed or closed the connection)";
  EXPECT_NE(reply.find("nested more than " + std::to_string(kMaxJsonDepth)), std::string::npos) << reply;
  expect_server_carries_on();
}

TEST_F(ControlFixture, NestingUpToTheLimitIsAcceptedAndEchoed) {
  // The request object is one level, the arrays in its id the others.
  const std::string at_limit = nested_arrays(static_cast<std::size_t>(kMaxJsonDepth) - 1);
  const json reply = json::parse(ask_text(R"({"cmd": "list", "id": )" + at_limit + "}"));
  EXPECT_EQ(reply.value("ok", false), true) << reply;
  EXPECT_EQ(reply["id"].dump(), at_limit);
  const json over = json::parse(ask_text(R"({"cmd": "list", "id": [)" + at_limit + "]}"));
  EXPECT_EQ(over.value("ok", true), false) << over;
}

TEST_F(ControlFixture, IdsWithControlCharactersOrBidiControlsAreRejectedOneByOne) {
  wait_for_a_tracked_frame();
  const json request = {{"cmd", "add_points"},
                        {"camera", "gate"},
                        {"points",
                         {point("door"), point(std::string("nul\0byte", 8), 41), point("new\nline", 42),
                          point("abc\u202Egpj.exe", 43), point(std::string(kDefaults.max_id_bytes + 1, 'x'), 44),
                          point("", 45), point("esc\x1b[31m", 46)}}};
  const std::string text = ask_text(request.dump());
  ASSERT_FALSE(text.empty());
  for (const unsigned char c : text) ASSERT_LT(c, 0x80) << "the reply is not ASCII: " << text;
  const json reply = json::parse(text);
  ASSERT_EQ(reply.value("ok", false), true) << reply;
  EXPECT_EQ(reply["added"], json::array({"door"})) << reply;
  const std::vector<std::string> rejected = reply["rejected"].get<std::vector<std::string>>();
  const std::vector<std::string> expected = {
      "points[1]: the id holds the control character U+0000",
      "points[2]: the id holds the control character U+000A",
      "points[3]: the id holds the bidirectional-text control U+202E",
      "points[4]: the id is 65 bytes, more than 64 (control.max_id_bytes)",
      "points[5]: the id is empty",
      "points[6]: the id holds the control character U+001B",
  };
  EXPECT_EQ(rejected, expected) << reply;
}

TEST_F(ControlFixture, APointCountOverThePerRequestCapIsRefused) {
  wait_for_a_tracked_frame();
  json points = json::array();
  const int cap = kDefaults.max_points_per_request;
  for (int i = 0; i <= cap; ++i) points.push_back(point("p" + std::to_string(i)));
  const json reply = ask({{"cmd", "add_points"}, {"camera", "gate"}, {"points", points}});
  EXPECT_EQ(reply.value("ok", true), false) << reply.dump().substr(0, 300);
  EXPECT_EQ(reply.value("error", ""), "at most " + std::to_string(cap) +
                                          " points per request (control.max_points_per_request), got " +
                                          std::to_string(cap + 1));
  EXPECT_EQ(runtime->stats()[0].state, daemon::CameraState::running);
}

TEST_F(ControlFixture, AddPointsStopsAtThePerCameraCap) {
  wait_for_a_tracked_frame();
  std::size_t added = 0, refused_for_the_cap = 0;
  const auto per_request = static_cast<std::size_t>(kDefaults.max_points_per_request);
  const auto per_camera = static_cast<std::size_t>(kDefaults.max_points_per_camera);
  for (std::size_t request = 0; request * per_request <= per_camera; ++request) {
    json points = json::array();
    for (std::size_t i = 0; i < per_request; ++i) {
      const std::size_t n = request * per_request + i;
      points.push_back(point("p" + std::to_string(n), 20 + static_cast<double>(n % 120), 15 + static_cast<double>(n / 120 % 90)));
    }
    const std::size_t frames = runtime->stats()[0].frames_tracked;
    const json reply = ask({{"cmd", "add_points"}, {"camera", "gate"}, {"points", points}});
    ASSERT_EQ(reply.value("ok", false), true) << reply.dump().substr(0, 300);
    added += reply["added"].size();
    for (const auto& r : reply["rejected"]) {
      if (r.get<std::string>().find("more than " + std::to_string(per_camera)) != std::string::npos) {
        ++refused_for_the_cap;
      }
    }
    // The count the cap reads is the live tracks after a frame: let one pass.
    for (int i = 0; i < 200 && runtime->stats()[0].frames_tracked <= frames + 1; ++i) std::this_thread::sleep_for(10ms);
  }
  EXPECT_GT(refused_for_the_cap, 0u);
  EXPECT_LE(runtime->stats()[0].points, per_camera);
  EXPECT_GT(added, 0u);
}

// The caps of control.max_* as configured, and a reload's new ones in force at the next request.
struct ConfiguredCapsFixture : ControlFixture {
  std::string control_section() override {
    return "max_points_per_request: 3, max_points_per_camera: 18, max_id_bytes: 8";
  }
  json add(const std::vector<std::string>& ids) {
    json points = json::array();
    for (std::size_t i = 0; i < ids.size(); ++i) points.push_back(point(ids[i], 30 + 10 * static_cast<double>(i)));
    return ask({{"cmd", "add_points"}, {"camera", "gate"}, {"points", points}});
  }
};

TEST_F(ConfiguredCapsFixture, TheConfiguredCapsAreTheOnesEnforced) {
  wait_for_a_tracked_frame();
  const json too_many = add({"a", "b", "c", "d"});
  EXPECT_EQ(too_many.value("error", ""),
            "at most 3 points per request (control.max_points_per_request), got 4") << too_many;
  const json ids = ask({{"cmd", "remove_points"}, {"camera", "gate"}, {"ids", {"a", "b", "c", "d"}}});
  EXPECT_EQ(ids.value("error", ""), "at most 3 ids per request (control.max_points_per_request), got 4") << ids;

  const json long_id = add({"12345678", "123456789"});
  ASSERT_EQ(long_id.value("ok", false), true) << long_id;
  EXPECT_EQ(long_id["added"], json::array({"12345678"})) << long_id;
  EXPECT_EQ(long_id["rejected"], json::array({"points[1]: the id is 9 bytes, more than 8 (control.max_id_bytes)"}))
      << long_id;

  // The grid seeds up to 16 live tracks: 30 more reach the cap of 18 whatever the pinwheel lost.
  std::size_t refused_for_the_cap = 0;
  for (int request = 0; request < 10; ++request) {
    const std::string n = std::to_string(request);
    const json reply = add({"x" + n, "y" + n, "z" + n});
    ASSERT_EQ(reply.value("ok", false), true) << reply;
    for (const auto& r : reply["rejected"]) {
      EXPECT_NE(r.get<std::string>().find(": the camera would track more than 18 points"), std::string::npos) << r;
      ++refused_for_the_cap;
    }
  }
  EXPECT_GT(refused_for_the_cap, 0u);
}

TEST_F(ConfiguredCapsFixture, AReloadsCapsApplyToTheNextRequestWithTheCameraKept) {
  wait_for_a_tracked_frame();
  EXPECT_EQ(add({"a", "b", "c", "d"}).value("ok", true), false);
  daemon::ReloadSummary summary;
  std::string error;
  ASSERT_TRUE(runtime->apply(configuration("max_points_per_request: 4"), summary, error)) << error;
  EXPECT_EQ(summary.kept, std::vector<std::string>{"gate"});
  const json reply = add({"a", "b", "c", "d"});
  ASSERT_EQ(reply.value("ok", false), true) << reply;
  EXPECT_EQ(reply["added"].size(), 4u) << reply;
}

// (d) accept() failing with EMFILE left the listening socket readable and the server's loop
// spun on it; it now waits, and serves the queued client once fds are free.
// No camera: the CPU time measured is the control server's and nothing else's (a camera's
// GStreamer threads, failing for want of fds too, cost many times more under a sanitizer).
struct NoCameraControlFixture : ControlFixture {
  std::string cameras() override { return "cameras: []\n"; }
};

TEST_F(NoCameraControlFixture, AcceptFailingForWantOfFdsBacksOffAndRecovers) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);  // made while fds remain
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, dir.file("control.sock").c_str());
  rusage before{}, after{};
  {
    test::FdsExhausted exhausted;
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);  // queued: accept fails
    ::getrusage(RUSAGE_SELF, &before);
    std::this_thread::sleep_for(1s);
    ::getrusage(RUSAGE_SELF, &after);
  }
  const auto seconds = [](const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  // The spinning accept loop used 0.3 CPU seconds in that second (with a camera beside it, which used 0.03).
  EXPECT_LT(seconds(after) - seconds(before), 0.15) << "CPU seconds used in 1 s while accept() failed with EMFILE";
  const std::string request = "{\"cmd\": \"list\", \"id\": 3}\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char reply[4096];
  const ssize_t n = ::recv(fd, reply, sizeof(reply), 0);
  ::close(fd);
  ASSERT_GT(n, 0) << "no reply once fds were free";
  EXPECT_EQ(json::parse(std::string(reply, static_cast<std::size_t>(n))).value("id", 0), 3);
}
