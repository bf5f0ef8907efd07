// The track socket with real Unix-socket subscribers.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "edgetap/daemon/logging.hpp"
#include "edgetap/pipeline/publisher.hpp"
#include "edgetap/pipeline/track_client.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

std::string track_json(const std::string& camera, int seq, std::size_t padding = 0) {
  return nlohmann::json{{"v", 1}, {"type", "tracks"}, {"camera", camera}, {"seq", seq}, {"pad", std::string(padding, 'x')}}
      .dump();
}

struct PublisherFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<pipeline::Publisher> publisher;

  void start(std::size_t capacity) {
    publisher = std::make_unique<pipeline::Publisher>(dir.file("tracks.sock"), capacity, daemon::make_logger("publisher"));
    std::string error;
    ASSERT_TRUE(publisher->start(error)) << error;
  }
  void connect(pipeline::TrackClient& client) {
    std::string error;
    ASSERT_TRUE(client.connect(publisher->path(), error)) << error;
  }
  void wait_for_subscribers(std::size_t n) {
    for (int i = 0; i < 1000 && publisher->stats().subscribers != n; ++i) std::this_thread::sleep_for(5ms);
    ASSERT_EQ(publisher->stats().subscribers, n);
  }
};

}  // namespace

TEST_F(PublisherFixture, TwoSubscribersBothReceiveWellFormedMessages) {
  start(64);
  pipeline::TrackClient a, b;
  connect(a);
  connect(b);
  wait_for_subscribers(2);
  for (int i = 0; i < 10; ++i) publisher->publish("cam1", track_json("cam1", i));
  for (pipeline::TrackClient* client : {&a, &b}) {
    for (int i = 0; i < 10; ++i) {
      const auto line = client->read_line(2000ms);
      ASSERT_TRUE(line) << "message " << i;
      const auto j = nlohmann::json::parse(*line);
      EXPECT_EQ(j["seq"], i);
      EXPECT_EQ(j["dropped"], 0);
      EXPECT_EQ(j["camera"], "cam1");
    }
  }
}

TEST_F(PublisherFixture, StalledSubscriberDropsWhileTheOtherGetsEverything) {
  start(1024);
  pipeline::TrackClient reader, stalled;
  connect(stalled);
  connect(reader);
  wait_for_subscribers(2);
  constexpr int kMessages = 6000;
  std::atomic<int> received = 0;
  bool in_order = true;
  std::thread consume([&] {
    while (received.load() < kMessages) {
      const auto line = reader.read_line(5000ms);
      if (!line) break;
      const auto j = nlohmann::json::parse(*line);
      in_order = in_order && j["seq"] == received.load() && j["dropped"] == 0;
      ++received;
    }
  });
  for (int i = 0; i < kMessages; ++i) {
    // Never more than a quarter of its queue ahead of the reader, so the reader
    // must get everything however slow this machine is; the stalled one cannot.
    while (i - received.load() > 256) std::this_thread::sleep_for(1ms);
    publisher->publish("cam1", track_json("cam1", i, 2048));
  }
  consume.join();
  EXPECT_EQ(received, kMessages);
  EXPECT_TRUE(in_order);
  // 12 MB were sent; the stalled subscriber's socket and its queue hold far less.
  EXPECT_GT(publisher->stats().subscriber_drops, 1000u);

  // When the stalled subscriber reads again, the gap is reported in "dropped".
  std::uint64_t reported = 0;
  while (const auto line = stalled.read_line(500ms)) {
    reported += nlohmann::json::parse(*line)["dropped"].get<std::uint64_t>();
  }
  EXPECT_EQ(reported, publisher->stats().subscriber_drops);
}

TEST_F(PublisherFixture, HelloSelectsCameras) {
  start(64);
  pipeline::TrackClient client;
  connect(client);
  ASSERT_TRUE(client.send_line(R"({"subscribe": ["cam2"], "format": "ndjson"})"));
  const auto ack = client.read_line(2000ms);
  ASSERT_TRUE(ack);
  EXPECT_EQ(nlohmann::json::parse(*ack)["type"], "hello");
  for (int i = 0; i < 4; ++i) {
    publisher->publish("cam1", track_json("cam1", i));
    publisher->publish("cam2", track_json("cam2", i));
  }
  for (int i = 0; i < 4; ++i) {
    const auto line = client.read_line(2000ms);
    ASSERT_TRUE(line);
    EXPECT_EQ(nlohmann::json::parse(*line)["camera"], "cam2");
  }
  EXPECT_FALSE(client.read_line(100ms));
}

TEST_F(PublisherFixture, MalformedHelloGetsAnErrorAndTheServerCarriesOn) {
  start(64);
  for (const std::string hello : {"{not json", R"({"subscribe": "cam1"})", R"({"format": "cbor-ish"})",
                                  R"({"subscribe": ["a"], "colour": 1})"}) {
    pipeline::TrackClient bad;
    connect(bad);
    ASSERT_TRUE(bad.send_line(hello));
    const auto reply = bad.read_line(2000ms);
    ASSERT_TRUE(reply) << hello;
    const auto j = nlohmann::json::parse(*reply);
    EXPECT_EQ(j["type"], "error") << hello;
    EXPECT_FALSE(j["error"].get<std::string>().empty());
    EXPECT_FALSE(bad.read_line(1000ms));  // the server closes the connection
    EXPECT_TRUE(bad.closed()) << hello;
  }
  pipeline::TrackClient good;
  connect(good);
  wait_for_subscribers(1);
  publisher->publish("cam1", track_json("cam1", 0));
  EXPECT_TRUE(good.read_line(2000ms));
}

TEST_F(PublisherFixture, VanishedSubscriberIsForgotten) {
  start(64);
  {
    pipeline::TrackClient gone;
    connect(gone);
    wait_for_subscribers(1);
  }
  for (int i = 0; i < 3; ++i) publisher->publish("cam1", track_json("cam1", i));
  wait_for_subscribers(0);
}

TEST(Publisher, RefusesASocketAnotherProcessServes) {
  test::TempDir dir;
  pipeline::Publisher first(dir.file("t.sock"), 8, daemon::make_logger("publisher"));
  pipeline::Publisher second(dir.file("t.sock"), 8, daemon::make_logger("publisher"));
  std::string error;
  ASSERT_TRUE(first.start(error)) << error;
  EXPECT_FALSE(second.start(error));
  EXPECT_NE(error.find("already serving"), std::string::npos) << error;
}

TEST_F(PublisherFixture, CborSubscribersGetCborMapsWithTheSameFields) {
  start(64);
  pipeline::TrackClient json_client;
  connect(json_client);
  // A raw socket for the binary stream.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, publisher->path().c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string hello = "{\"subscribe\": [\"cam1\"], \"format\": \"cbor\"}\n";
  ASSERT_EQ(::send(fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  wait_for_subscribers(2);
  std::this_thread::sleep_for(200ms);  // the hello is read before publishing
  for (int i = 0; i < 3; ++i) publisher->publish("cam1", track_json("cam1", i));

  std::vector<std::uint8_t> bytes;
  std::vector<nlohmann::json> items;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (items.size() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::uint8_t chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    // Decode as many complete CBOR items as the bytes hold.
    items.clear();
    std::size_t offset = 0;
    while (offset < bytes.size()) {
      std::size_t used = 0;
      nlohmann::json item;
      bool complete = false;
      for (std::size_t end = offset + 1; end <= bytes.size() && !complete; ++end) {
        item = nlohmann::json::from_cbor(bytes.begin() + offset, bytes.begin() + end, true, false);
        complete = !item.is_discarded();
        used = end - offset;
      }
      if (!complete) break;
      items.push_back(item);
      offset += used;
    }
    std::this_thread::sleep_for(10ms);
  }
  ::close(fd);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0]["type"], "hello");
  EXPECT_EQ(items[0]["format"], "cbor");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(items[i + 1]["seq"], i);
    EXPECT_EQ(items[i + 1]["dropped"], 0);
    EXPECT_EQ(items[i + 1]["camera"], "cam1");
  }
  // The NDJSON subscriber still gets text.
  const auto line = json_client.read_line(2000ms);
  ASSERT_TRUE(line);
  EXPECT_EQ(nlohmann::json::parse(*line)["seq"], 0);
}
