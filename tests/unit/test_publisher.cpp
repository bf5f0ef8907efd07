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
#include "edgetap/json_input.hpp"
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

// A raw subscriber socket, for binary streams and half-closes.
int connect_raw(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_text(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// Complete CBOR items in `bytes` from the start; stops at the first incomplete or non-CBOR one.
std::vector<nlohmann::json> cbor_items(const std::vector<std::uint8_t>& bytes) {
  std::vector<nlohmann::json> items;
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
  return items;
}

// Reads from `fd` until `count` CBOR items have arrived or `timeout` passes; returns the raw bytes.
std::vector<std::uint8_t> read_cbor(int fd, std::size_t count, std::chrono::milliseconds timeout) {
  std::vector<std::uint8_t> bytes;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (cbor_items(bytes).size() < count && std::chrono::steady_clock::now() < deadline) {
    std::uint8_t chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    if (n <= 0) std::this_thread::sleep_for(10ms);
  }
  return bytes;
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

TEST_F(PublisherFixture, TheHelloReplyComesBeforeMessagesQueuedWhileItWasOnItsWay) {
  start(64);
  pipeline::TrackClient client;
  connect(client);
  wait_for_subscribers(1);
  for (int i = 0; i < 3; ++i) publisher->publish("cam1", track_json("cam1", i));
  std::this_thread::sleep_for(100ms);  // the messages are queued, the hello not yet sent
  ASSERT_TRUE(client.send_line(R"({"subscribe": ["cam1"]})"));
  const auto first = client.read_line(2000ms);
  ASSERT_TRUE(first);
  EXPECT_EQ(nlohmann::json::parse(*first)["type"], "hello") << *first;
  publisher->publish("cam1", track_json("cam1", 3));
  const auto next = client.read_line(2000ms);
  ASSERT_TRUE(next);
  EXPECT_EQ(nlohmann::json::parse(*next)["seq"], 3) << *next;  // the stream starts after the reply
}

TEST_F(PublisherFixture, ACborStreamStartsWithTheHelloReplyEvenWithMessagesQueuedBeforeIt) {
  start(64);
  const int fd = connect_raw(publisher->path());
  ASSERT_GE(fd, 0);
  wait_for_subscribers(1);
  for (int i = 0; i < 3; ++i) publisher->publish("cam1", track_json("cam1", i));
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(send_text(fd, "{\"format\": \"cbor\"}\n"));
  std::this_thread::sleep_for(100ms);  // the hello is read before publishing
  publisher->publish("cam1", track_json("cam1", 3));
  const std::vector<std::uint8_t> bytes = read_cbor(fd, 2, 3000ms);
  ::close(fd);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes[0] & 0xE0, 0xA0) << "the stream does not start with a CBOR map but '" << static_cast<char>(bytes[0])
                                   << "'";
  const std::vector<nlohmann::json> items = cbor_items(bytes);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]["type"], "hello");
  EXPECT_EQ(items[1]["seq"], 3);
}

TEST_F(PublisherFixture, WithoutAHelloTheStreamStartsAfterTheWait) {
  start(64);
  pipeline::TrackClient client;
  connect(client);
  wait_for_subscribers(1);
  const auto published = std::chrono::steady_clock::now();
  publisher->publish("cam1", track_json("cam1", 0));
  const auto line = client.read_line(2000ms);
  ASSERT_TRUE(line);
  EXPECT_EQ(nlohmann::json::parse(*line)["seq"], 0);
  EXPECT_LT(std::chrono::steady_clock::now() - published, pipeline::kHelloWait + 1000ms);
}

TEST_F(PublisherFixture, ASubscriberThatHalfClosesAfterItsHelloStillReceives) {
  start(64);
  const int fd = connect_raw(publisher->path());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_text(fd, "{\"subscribe\": [\"cam1\"], \"format\": \"cbor\"}\n"));
  ASSERT_EQ(::shutdown(fd, SHUT_WR), 0);
  const std::vector<nlohmann::json> reply = cbor_items(read_cbor(fd, 1, 3000ms));
  ASSERT_EQ(reply.size(), 1u) << "no hello reply after a half-close";
  EXPECT_EQ(reply[0]["type"], "hello");
  wait_for_subscribers(1);
  for (int i = 0; i < 3; ++i) publisher->publish("cam1", track_json("cam1", i));
  const std::vector<nlohmann::json> items = cbor_items(read_cbor(fd, 3, 3000ms));
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2]["seq"], 2);
  ::close(fd);
  wait_for_subscribers(0);  // a full close is still noticed, with nothing to send
}

TEST_F(PublisherFixture, AHalfClosedUnfinishedHelloLineIsTheHello) {
  start(64);
  const int fd = connect_raw(publisher->path());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_text(fd, R"({"subscribe": ["cam2"]})"));  // no newline: the end of input ends it
  ASSERT_EQ(::shutdown(fd, SHUT_WR), 0);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (text.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) text.append(chunk, static_cast<std::size_t>(n));
    if (n <= 0) std::this_thread::sleep_for(10ms);
  }
  ::close(fd);
  ASSERT_NE(text.find('\n'), std::string::npos) << text;
  const auto reply = nlohmann::json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(reply["type"], "hello");
  EXPECT_EQ(reply["subscribe"], nlohmann::json::array({"cam2"}));
}

TEST_F(PublisherFixture, ADeeplyNestedHelloIsRefusedNamingTheLimit) {
  start(64);
  pipeline::TrackClient client;
  connect(client);
  const std::size_t depth = 30000;  // within the 64 KiB hello limit
  ASSERT_TRUE(client.send_line("{\"subscribe\": " + std::string(depth, '[') + std::string(depth, ']') + "}"));
  const auto reply = client.read_line(2000ms);
  ASSERT_TRUE(reply);
  const auto j = nlohmann::json::parse(*reply);
  EXPECT_EQ(j["type"], "error");
  EXPECT_NE(j["error"].get<std::string>().find("nested more than " + std::to_string(kMaxJsonDepth)), std::string::npos)
      << *reply;
}
