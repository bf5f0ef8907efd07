// The C++ client header edgetap/client.hpp (package edgetap-dev) against a
// running edgetapd started by the test: subscribe with typed messages, the
// control requests, and the errors for a missing socket and an error reply.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "edgetap/client.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

using namespace std::chrono_literals;
namespace client = edgetap::client;

namespace {

class ClientFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string config = dir_.write(
        "edgetap.yaml", "publisher: {socket: '" + tracks() + "'}\ncontrol: {socket: '" + control() +
                            "'}\nmetrics: {listen: ''}\n"
                            "cameras:\n  - {name: north, tracker: klt, model_size: [128, 96], queries: {grid: [4, 3]},"
                            " source: 'test:pinwheel?width=320&height=240&fps=20'}\n");
    // edgetapd refuses to run as root unless told to; CI containers often are root.
    daemon_ = std::make_unique<edgetap::test::ChildProcess>(
        std::vector<std::string>{EDGETAP_DAEMON, "--config", config, "--allow-root"}, false);
    for (int i = 0; i < 300; ++i) {
      try {
        client::ControlClient probe(control());
        if (probe.stats().at("cameras").at(0).at("frames_tracked").get<int>() > 0) return;
      } catch (const client::Error&) {
        // not up yet
      }
      std::this_thread::sleep_for(100ms);
    }
    FAIL() << "edgetapd did not track a frame within 30 s";
  }

  std::string tracks() const { return dir_.file("tracks.sock"); }
  std::string control() const { return dir_.file("control.sock"); }

  edgetap::test::TempDir dir_;
  std::unique_ptr<edgetap::test::ChildProcess> daemon_;
};

}  // namespace

TEST_F(ClientFixture, SubscribeReadsTypedMessages) {
  client::Subscriber subscription(tracks(), {"north"});
  EXPECT_EQ(subscription.hello().at("format"), "ndjson");
  const auto first = subscription.next();
  ASSERT_TRUE(first.has_value());
  const auto second = subscription.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(first->camera, "north");
  EXPECT_EQ(second->seq, first->seq + 1);
  EXPECT_EQ(first->width, 320);
  EXPECT_EQ(first->height, 240);
  // The 4 x 3 grid; a point klt gives up is reported once more, lost, beside its replacement.
  EXPECT_EQ(std::count_if(first->points.begin(), first->points.end(), [](const client::Point& p) { return !p.lost; }), 12);
  EXPECT_EQ(first->rung, "klt");
}

TEST_F(ClientFixture, ControlRequests) {
  client::ControlClient control(this->control());
  const auto cameras = control.list();
  ASSERT_EQ(cameras.size(), 1u);
  EXPECT_EQ(cameras[0].at("name"), "north");
  const client::PointsChange added = control.add_points("north", {{"door", 100, 80}, {"", 1, 1}});
  EXPECT_EQ(added.applied, std::vector<std::string>{"door"});
  ASSERT_EQ(added.rejected.size(), 1u);
  EXPECT_NE(added.rejected[0].find("points[1]"), std::string::npos) << added.rejected[0];
  const client::PointsChange removed = control.remove_points("north", {"door"});
  EXPECT_EQ(removed.applied, std::vector<std::string>{"door"});
  try {
    control.remove_points("east", {"door"});
    FAIL() << "no error for an unknown camera";
  } catch (const client::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no camera named 'east'"), std::string::npos) << e.what();
  }
}

TEST(Client, AMissingSocketSaysWhatToCheck) {
  edgetap::test::TempDir dir;
  try {
    client::ControlClient control(dir.file("nothing.sock"));
    FAIL() << "connected to a missing socket";
  } catch (const client::Error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing.sock: No such file or directory (does edgetapd run"), std::string::npos)
        << e.what();
  }
}
