// The track socket with real Unix-socket subscribers.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/daemon/logging.hpp"
#include "edgetap/json_input.hpp"
#include "edgetap/publish/publisher.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/fds_exhausted.hpp"
#include "support/temp_dir.hpp"
#include "support/thread_cpu.hpp"

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

  void start(std::size_t capacity, pipeline::PublisherOptions options = {}) {
    publisher = std::make_unique<pipeline::Publisher>(dir.file("tracks.sock"), capacity, daemon::make_logger("publisher"),
                                                      std::move(options));
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

// (h) The I/O thread used to read a subscriber's bytes in a loop, holding the lock that
// publish() takes, until the subscriber stopped sending: one flooding subscriber held up
// every camera's publish() and everyone's messages.
TEST_F(PublisherFixture, AFloodingSubscriberDelaysNobodyAndIsDropped) {
  start(64);
  const int flooder = connect_raw(publisher->path());
  ASSERT_GE(flooder, 0);
  ASSERT_TRUE(send_text(flooder, "{\"subscribe\": [\"cam1\"]}\n"));
  pipeline::TrackClient reader;
  connect(reader);
  ASSERT_TRUE(reader.send_line(R"({"subscribe": ["cam1"]})"));  // streaming at once, not after kHelloWait
  ASSERT_TRUE(reader.read_line(2000ms));
  wait_for_subscribers(2);
  std::atomic<bool> stop{false};
  std::atomic<bool> dropped{false};
  std::thread flood([&] {
    const std::string junk(64 * 1024, 'x');
    const auto deadline = std::chrono::steady_clock::now() + 4s;
    while (!stop && std::chrono::steady_clock::now() < deadline) {
      if (::send(flooder, junk.data(), junk.size(), MSG_NOSIGNAL) < 0 && errno != EINTR) {
        dropped = true;  // EPIPE or ECONNRESET: the publisher closed it
        break;
      }
    }
  });
  std::this_thread::sleep_for(100ms);  // the flood is under way
  auto worst = 0ms;
  for (int i = 0; i < 20; ++i) {
    const auto sent = std::chrono::steady_clock::now();
    publisher->publish("cam1", track_json("cam1", i));
    const auto line = reader.read_line(5000ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
    ASSERT_TRUE(line) << "message " << i;
    EXPECT_EQ(nlohmann::json::parse(*line)["seq"], i);
    worst = std::max(worst, took);
    std::this_thread::sleep_for(20ms);
  }
  stop = true;
  flood.join();
  ::close(flooder);
  EXPECT_LT(worst.count(), 300) << "slowest publish-to-receive (ms) beside a flooding subscriber";
  EXPECT_TRUE(dropped) << "the flooding subscriber was not dropped";
  wait_for_subscribers(1);
}

// (d) accept() failing with EMFILE left the listening socket readable, and the I/O thread
// polled it again at once: a core spun until fds freed up.
TEST_F(PublisherFixture, AcceptFailingForWantOfFdsBacksOffAndRecovers) {
  const std::set<long> others = test::thread_ids();
  start(64);
  const test::ThreadCpu publisher_threads(others);
  ASSERT_GT(publisher_threads.threads(), 0u);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);  // made while fds remain
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, publisher->path().c_str());
  double used = 0;
  {
    test::FdsExhausted exhausted;
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);  // queued: accept fails
    const double before = publisher_threads.seconds();
    std::this_thread::sleep_for(1s);
    used = publisher_threads.seconds() - before;
  }
  EXPECT_LT(used, 0.05) << "CPU seconds used in 1 s while accept() failed with EMFILE";
  wait_for_subscribers(1);  // fds are free again: the waiting subscriber is served
  publisher->publish("cam1", track_json("cam1", 0));
  char buffer[256];
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 3000), 1);
  EXPECT_GT(::recv(fd, buffer, sizeof(buffer), 0), 0);
  ::close(fd);
}

// The socket file is created with its mode: chmod() after bind() left a moment where it had
// the umask's mode (0777 under umask 0). inotify reports any later change of its attributes.
TEST_F(PublisherFixture, TheSocketFileIsCreatedWithItsModeAndNeverChanged) {
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir.path().c_str(), IN_CREATE | IN_ATTRIB), 0);
  const mode_t saved = ::umask(0);
  start(64);
  ::umask(saved);
  struct stat st{};
  ASSERT_EQ(::stat(publisher->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  alignas(inotify_event) char events[4096];
  const ssize_t n = ::read(watch, events, sizeof(events));
  ::close(watch);
  ASSERT_GT(n, 0);
  bool created = false, changed = false;
  for (ssize_t at = 0; at < n;) {
    const auto* e = reinterpret_cast<const inotify_event*>(events + at);
    if (e->len > 0 && std::string(e->name) == "tracks.sock") {
      created = created || (e->mask & IN_CREATE) != 0;
      changed = changed || (e->mask & IN_ATTRIB) != 0;
    }
    at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
  }
  EXPECT_TRUE(created);
  EXPECT_FALSE(changed) << "the socket file's mode or owner changed after it was created";
}

// --- needs the publisher's options (max_subscribers, group) ---

// (c) Subscribers were unlimited: 5,000 idle ones took the daemon from 44 to 288 MB.
TEST_F(PublisherFixture, SubscribersOverTheLimitAreRefusedWithAReason) {
  start(64, {.max_subscribers = 2, .group = {}});
  auto a = std::make_unique<pipeline::TrackClient>();
  pipeline::TrackClient b, extra;
  connect(*a);
  connect(b);
  wait_for_subscribers(2);
  connect(extra);
  const auto reply = extra.read_line(2000ms);
  ASSERT_TRUE(reply);
  const auto j = nlohmann::json::parse(*reply);
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["error"], "too many subscribers (publisher.max_subscribers is 2)");
  EXPECT_FALSE(extra.read_line(500ms));
  EXPECT_TRUE(extra.closed());
  EXPECT_EQ(publisher->stats().refused, 1u);
  EXPECT_EQ(publisher->stats().subscribers, 2u);
  a.reset();  // one leaves: a newcomer is served
  wait_for_subscribers(1);
  pipeline::TrackClient later;
  connect(later);
  wait_for_subscribers(2);
  publisher->publish("cam1", track_json("cam1", 0));
  EXPECT_TRUE(later.read_line(2000ms));
}

// The track socket can have its own group, so that reading tracks does not grant the control socket.
TEST_F(PublisherFixture, TheSocketFileGetsItsConfiguredGroup) {
  const group* other = ::getgrnam("daemon");
  if (other == nullptr || (::geteuid() != 0 && other->gr_gid != ::getegid())) {
    GTEST_SKIP() << "needs group 'daemon' and root to give a file to it";
  }
  const gid_t gid = other->gr_gid;
  start(64, {.max_subscribers = 64, .group = "daemon"});
  struct stat st{};
  ASSERT_EQ(::stat(publisher->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, gid);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  pipeline::Publisher unknown(dir.file("other.sock"), 8, daemon::make_logger("publisher"),
                              {.max_subscribers = 8, .group = "no-such-group-h58"});
  std::string error;
  EXPECT_FALSE(unknown.start(error));
  EXPECT_NE(error.find("no group 'no-such-group-h58'"), std::string::npos) << error;
}

// With the daemon's camera directory: a subscribe to a camera that does not run is
// answered with an error that lists the cameras, and the connection closes; a good
// hello lists what runs each subscribed camera.
TEST_F(PublisherFixture, HelloForAnUnknownCameraGetsAnErrorListingTheCameras) {
  pipeline::CameraDirectory directory;
  directory.set_cameras({"north", "south"});
  pipeline::EngineInfo engine;
  engine.model = "edgetap-small";
  engine.model_version = "edgetap-v5";
  engine.rung = "edgetap-fp32-256x256";
  directory.set_engine("south", engine);
  pipeline::PublisherOptions options;
  options.directory = &directory;
  start(64, options);

  pipeline::TrackClient bad;
  connect(bad);
  ASSERT_TRUE(bad.send_line(R"({"subscribe": ["gate", "south"]})"));
  const auto reply = bad.read_line(2000ms);
  ASSERT_TRUE(reply);
  const auto j = nlohmann::json::parse(*reply);
  EXPECT_EQ(j["type"], "error") << *reply;
  EXPECT_EQ(j["error"], "no camera named 'gate' (cameras: north, south)") << *reply;
  EXPECT_EQ(j["cameras"], nlohmann::json({"north", "south"})) << *reply;
  EXPECT_FALSE(bad.read_line(1000ms));
  EXPECT_TRUE(bad.closed());

  pipeline::TrackClient good;
  connect(good);
  ASSERT_TRUE(good.send_line(R"({"subscribe": ["south"]})"));
  const auto ack = good.read_line(2000ms);
  ASSERT_TRUE(ack);
  const auto hello = nlohmann::json::parse(*ack);
  EXPECT_EQ(hello["type"], "hello") << *ack;
  ASSERT_EQ(hello["cameras"].size(), 1u) << *ack;
  EXPECT_EQ(hello["cameras"][0]["name"], "south");
  EXPECT_EQ(hello["cameras"][0]["model"], "edgetap-small");
  EXPECT_EQ(hello["cameras"][0]["model_version"], "edgetap-v5");
  EXPECT_EQ(hello["cameras"][0]["backend"], "cpu");
  EXPECT_EQ(hello["cameras"][0]["precision"], "fp32");
  EXPECT_EQ(hello["cameras"][0]["rung"], "edgetap-fp32-256x256");
}
