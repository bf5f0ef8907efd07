// The MQTT bridge against a real mosquitto broker that the test starts on
// loopback: track messages on <prefix>/<camera>/tracks, the retained
// availability topic, the last will when the daemon dies, reconnection after
// the broker restarts, and credentials from a file.
#include <gtest/gtest.h>
#include <mosquitto.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// True as soon as `condition` holds, false if it still does not after `limit`.
template <typename Condition>
bool eventually(Condition condition, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A mosquitto broker process on 127.0.0.1:port, with an optional extra config.
std::unique_ptr<test::ChildProcess> start_broker(const test::TempDir& dir, int port, const std::string& extra = "") {
  const std::string conf = dir.write("mosquitto-" + std::to_string(port) + ".conf",
                                     "listener " + std::to_string(port) + " 127.0.0.1\n" +
                                         // As root, mosquitto would switch to its own user, who cannot read our temp files.
                                         (::getuid() == 0 ? "user root\n" : "") +
                                         (extra.empty() ? "allow_anonymous true\n" : extra));
  auto broker = std::make_unique<test::ChildProcess>(std::vector<std::string>{"/usr/sbin/mosquitto", "-c", conf}, false);
  // Ready when it accepts connections.
  for (int i = 0; i < 100; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (up) return broker;
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "mosquitto did not start on port " << port;
  return broker;
}

// A test client's network loop on a thread of the test's: mosquitto_loop_start's
// own thread ends inside the uninstrumented library, which stops ThreadSanitizer.
class ClientLoop {
 public:
  explicit ClientLoop(mosquitto* client) : client_(client) {
    mosquitto_threaded_set(client_, true);
    thread_ = std::thread([this] {
      while (!stop_) {
        if (mosquitto_loop(client_, 100, 1) == MOSQ_ERR_SUCCESS) continue;
        std::this_thread::sleep_for(100ms);
        mosquitto_reconnect_async(client_);
      }
    });
  }
  ~ClientLoop() {
    stop_ = true;
    thread_.join();
  }
  ClientLoop(const ClientLoop&) = delete;
  ClientLoop& operator=(const ClientLoop&) = delete;

 private:
  mosquitto* client_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A subscriber that records the last payload and a count per topic.
class Subscriber {
 public:
  Subscriber(int port, const std::string& user = "", const std::string& password = "") {
    mosquitto_lib_init();
    client_ = mosquitto_new(nullptr, true, this);
    if (!user.empty()) mosquitto_username_pw_set(client_, user.c_str(), password.c_str());
    mosquitto_message_callback_set(client_, [](mosquitto*, void* self, const mosquitto_message* m) {
      auto* s = static_cast<Subscriber*>(self);
      std::lock_guard lock(s->mutex_);
      s->last_[m->topic] = std::string(static_cast<const char*>(m->payload), static_cast<std::size_t>(m->payloadlen));
      ++s->count_[m->topic];
    });
    mosquitto_connect_callback_set(client_, [](mosquitto* c, void*, int) { mosquitto_subscribe(c, nullptr, "#", 1); });
    mosquitto_connect(client_, "127.0.0.1", port, 30);
    loop_ = std::make_unique<ClientLoop>(client_);
  }
  ~Subscriber() {
    mosquitto_disconnect(client_);
    loop_.reset();
    mosquitto_destroy(client_);
  }
  std::string last(const std::string& topic) {
    std::lock_guard lock(mutex_);
    return last_[topic];
  }
  int count(const std::string& topic) {
    std::lock_guard lock(mutex_);
    return count_[topic];
  }
  bool wait_for(const std::string& topic, const std::string& payload, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (payload.empty() ? count(topic) > 0 : last(topic) == payload) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  mosquitto* client_ = nullptr;
  std::unique_ptr<ClientLoop> loop_;
  std::mutex mutex_;
  std::map<std::string, std::string> last_;
  std::map<std::string, int> count_;
};

std::string config_yaml(const test::TempDir& dir, int port, const std::string& mqtt_extra = "") {
  return "publisher: {socket: '" + dir.file("t.sock") + "'}\n" +
         "mqtt: {enabled: true, host: 127.0.0.1, port: " + std::to_string(port) +
         ", client_id: box1, retry: {initial_ms: 200, max_ms: 1000}" + mqtt_extra + "}\n" +
         "defaults: {model_size: [80, 60], queries: {grid: [3, 3]}}\n"
         "cameras:\n  - {name: yard, tracker: klt, source: 'test:pinwheel?width=160&height=120&fps=30'}\n"
         "  - {name: quiet, tracker: klt, source: 'test:ball?width=160&height=120&fps=30', publish: {mqtt: false}}\n";
}

}  // namespace

TEST(Mqtt, TracksAndAvailabilityReachTheBrokerAndSurviveARestart) {
  test::TempDir dir;
  const int port = free_port();
  auto broker = start_broker(dir, port);
  daemon::Runtime runtime(config::load_string(config_yaml(dir, port), "t.yaml", dir.path().string()));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  {
    Subscriber sub(port);
    ASSERT_TRUE(sub.wait_for("edgetap/box1/status", "online", 10s));
    ASSERT_TRUE(sub.wait_for("edgetap/yard/tracks", "", 10s));
    const auto message = nlohmann::json::parse(sub.last("edgetap/yard/tracks"));
    EXPECT_EQ(message["camera"], "yard");
    EXPECT_EQ(message["type"], "tracks");
    EXPECT_EQ(message["points"].size(), 9u);
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(sub.count("edgetap/quiet/tracks"), 0) << "publish.mqtt: false was ignored";
  }
  broker.reset();  // the broker dies; tracking goes on, MQTT messages are dropped and counted
  ASSERT_TRUE(runtime.snapshot().mqtt.has_value());
  // Polled rather than slept for: on a loaded machine the bridge and the camera may need longer.
  EXPECT_TRUE(eventually([&] { return !runtime.snapshot().mqtt->connected; }, 10s)) << "the bridge never saw the broker go";
  const auto dropped = runtime.snapshot().mqtt->dropped;
  EXPECT_TRUE(eventually([&] { return runtime.snapshot().mqtt->dropped > dropped; }, 10s))
      << "tracks published while the broker was down were not counted as dropped";

  broker = start_broker(dir, port);
  Subscriber sub(port);
  ASSERT_TRUE(sub.wait_for("edgetap/yard/tracks", "", 20s)) << "the bridge did not reconnect";
  EXPECT_EQ(sub.last("edgetap/box1/status"), "online");
  EXPECT_GE(runtime.snapshot().mqtt->connects, 2u);
  runtime.stop();
  EXPECT_TRUE(sub.wait_for("edgetap/box1/status", "offline", 5s)) << "a clean stop announces offline";
}

TEST(Mqtt, LastWillSaysOfflineWhenTheDaemonDies) {
  test::TempDir dir;
  const int port = free_port();
  auto broker = start_broker(dir, port);
  const std::string config = dir.write("edgetap.yaml", config_yaml(dir, port) + "control: {socket: ''}\nmetrics: {listen: ''}\n");
  Subscriber sub(port);
  {
    // edgetapd refuses to run as root unless told to; CI containers often are root.
    test::ChildProcess daemon({EDGETAP_DAEMON, "--config", config, "--allow-root"}, false);
    ASSERT_TRUE(sub.wait_for("edgetap/box1/status", "online", 10s));
    daemon.kill();  // SIGKILL: no clean goodbye
  }
  EXPECT_TRUE(sub.wait_for("edgetap/box1/status", "offline", 10s)) << "the broker did not publish the last will";
}

TEST(Mqtt, CredentialsFromAFile) {
  test::TempDir dir;
  const int port = free_port();
  const std::string passwords = dir.write("passwd", "");
  ASSERT_EQ(std::system(("mosquitto_passwd -b " + passwords + " edge s3cret").c_str()), 0);
  auto broker = start_broker(dir, port, "allow_anonymous false\npassword_file " + passwords + "\n");
  const std::string good = dir.write("good.cred", "edge:s3cret\n");
  const std::string bad = dir.write("bad.cred", "edge:wrong\n");
  Subscriber sub(port, "edge", "s3cret");
  {
    daemon::Runtime runtime(config::load_string(config_yaml(dir, port, ", credentials_file: '" + bad + "'"), "t.yaml", "/"));
    std::string error;
    ASSERT_TRUE(runtime.start(error)) << error;
    std::this_thread::sleep_for(1500ms);
    EXPECT_FALSE(runtime.snapshot().mqtt->connected);
    EXPECT_EQ(sub.count("edgetap/yard/tracks"), 0);
  }
  daemon::Runtime runtime(config::load_string(config_yaml(dir, port, ", credentials_file: '" + good + "'"), "t.yaml", "/"));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  EXPECT_TRUE(sub.wait_for("edgetap/yard/tracks", "", 10s));
}

TEST(Mqtt, TlsWithTheBrokersCertificateAuthority) {
  // A throwaway CA and a broker certificate for 127.0.0.1, made with openssl.
  test::TempDir dir;
  const std::string d = dir.path().string();
  const std::string make_certs =
      "cd '" + d + "' && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=edgetap-test-ca "
      "-keyout ca.key -out ca.crt 2>/dev/null && openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 "
      "-keyout server.key -out server.csr 2>/dev/null && printf 'subjectAltName=IP:127.0.0.1\n' > san.ext && "
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext "
      "-out server.crt 2>/dev/null";
  ASSERT_EQ(std::system(make_certs.c_str()), 0) << "openssl failed";
  const int port = free_port();
  auto broker = start_broker(dir, port,
                             "allow_anonymous true\ncafile " + d + "/ca.crt\ncertfile " + d + "/server.crt\nkeyfile " +
                                 d + "/server.key\n");
  // A subscriber over TLS too: the broker only speaks TLS on this port.
  mosquitto_lib_init();
  mosquitto* sub = mosquitto_new(nullptr, true, nullptr);
  ASSERT_EQ(mosquitto_tls_set(sub, (d + "/ca.crt").c_str(), nullptr, nullptr, nullptr, nullptr), MOSQ_ERR_SUCCESS);
  std::atomic<int> messages{0};
  mosquitto_user_data_set(sub, &messages);
  mosquitto_message_callback_set(sub, [](mosquitto*, void* count, const mosquitto_message*) {
    ++*static_cast<std::atomic<int>*>(count);
  });
  mosquitto_connect_callback_set(sub, [](mosquitto* c, void*, int) { mosquitto_subscribe(c, nullptr, "edgetap/yard/tracks", 0); });
  ASSERT_EQ(mosquitto_connect(sub, "127.0.0.1", port, 30), MOSQ_ERR_SUCCESS);
  auto sub_loop = std::make_unique<ClientLoop>(sub);

  daemon::Runtime runtime(config::load_string(config_yaml(dir, port, ", tls: {ca_file: '" + d + "/ca.crt'}"), "t.yaml", "/"));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  for (int i = 0; i < 200 && messages < 3; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_GE(messages.load(), 3) << "no tracks over TLS";
  EXPECT_TRUE(runtime.snapshot().mqtt->connected);
  runtime.stop();
  mosquitto_disconnect(sub);
  sub_loop.reset();
  mosquitto_destroy(sub);
}

TEST(Mqtt, UnreadableCredentialsFileIsAClearStartError) {
  test::TempDir dir;
  daemon::Runtime runtime(config::load_string(config_yaml(dir, 1883, ", credentials_file: '/nonexistent/cred'"), "t.yaml", "/"));
  std::string error;
  EXPECT_FALSE(runtime.start(error));
  EXPECT_NE(error.find("/nonexistent/cred"), std::string::npos) << error;
}

namespace {

// The `seq` of every message on `topic`, in arrival order (a subscriber on that one topic).
class SeqRecorder {
 public:
  SeqRecorder(int port, const std::string& topic) : topic_(topic) {
    mosquitto_lib_init();
    client_ = mosquitto_new(nullptr, true, this);
    mosquitto_message_callback_set(client_, [](mosquitto*, void* self, const mosquitto_message* m) {
      auto* r = static_cast<SeqRecorder*>(self);
      const auto message = nlohmann::json::parse(
          std::string(static_cast<const char*>(m->payload), static_cast<std::size_t>(m->payloadlen)));
      std::lock_guard lock(r->mutex_);
      r->seqs_.push_back(message["seq"].get<std::uint64_t>());
    });
    mosquitto_connect_callback_set(client_, [](mosquitto* c, void* self, int) {
      mosquitto_subscribe(c, nullptr, static_cast<SeqRecorder*>(self)->topic_.c_str(), 1);
    });
    mosquitto_connect(client_, "127.0.0.1", port, 30);
    loop_ = std::make_unique<ClientLoop>(client_);
  }
  ~SeqRecorder() {
    mosquitto_disconnect(client_);
    loop_.reset();
    mosquitto_destroy(client_);
  }
  std::vector<std::uint64_t> seqs() {
    std::lock_guard lock(mutex_);
    return seqs_;
  }

 private:
  std::string topic_;
  mosquitto* client_ = nullptr;
  std::unique_ptr<ClientLoop> loop_;
  std::mutex mutex_;
  std::vector<std::uint64_t> seqs_;
};

}  // namespace

TEST(Mqtt, EveryNthAndMaxRateThrottlePerCamera) {
  test::TempDir dir;
  const int port = free_port();
  auto broker = start_broker(dir, port);
  const std::string yaml =
      "publisher: {socket: '" + dir.file("t.sock") + "'}\ncontrol: {socket: ''}\nmetrics: {listen: ''}\n" +
      "mqtt: {enabled: true, host: 127.0.0.1, port: " + std::to_string(port) + ", client_id: box1}\n" +
      "defaults: {model_size: [80, 60], queries: {grid: [2, 2]}, tracker: klt}\n"
      "cameras:\n  - {name: nth, source: 'test:ball?width=160&height=120&fps=30', mqtt: {every_n: 4}}\n"
      "  - {name: slow, source: 'test:ball?width=160&height=120&fps=30', mqtt: {max_rate_hz: 2}}\n";
  SeqRecorder nth(port, "edgetap/nth/tracks");
  SeqRecorder slow(port, "edgetap/slow/tracks");
  daemon::Runtime runtime(config::load_string(yaml, "t.yaml", dir.path().string()));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  ASSERT_TRUE(eventually([&] { return nth.seqs().size() >= 5 && slow.seqs().size() >= 3; }, 30s))
      << "every_n 4 sent " << nth.seqs().size() << ", max_rate_hz 2 sent " << slow.seqs().size();
  runtime.stop();
  // every_n: consecutive messages 4 frames apart (QoS 0 on loopback loses none).
  const auto n = nth.seqs();
  for (std::size_t i = 1; i < n.size(); ++i) EXPECT_EQ(n[i] - n[i - 1], 4u) << "message " << i;
  // max_rate_hz at 30 fps: frames are held back between messages (the unit test checks the spacing).
  const auto s = slow.seqs();
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i] - s[i - 1], 1u) << "message " << i;
  const auto stats = runtime.snapshot().mqtt;
  ASSERT_TRUE(stats.has_value());
  EXPECT_GT(stats->throttled, 0u);
}

TEST(Mqtt, RetainedStatsFromTheDaemon) {
  test::TempDir dir;
  const int port = free_port();
  auto broker = start_broker(dir, port);
  const std::string config = dir.write(
      "edgetap.yaml", config_yaml(dir, port, ", stats_every_s: 1") + "control: {socket: ''}\nmetrics: {listen: ''}\n");
  {
    test::ChildProcess daemon({EDGETAP_DAEMON, "--config", config, "--allow-root"}, false);
    Subscriber first(port);
    ASSERT_TRUE(first.wait_for("edgetap/box1/stats", "", 20s)) << "no stats message";
  }
  // The daemon is gone: a subscriber that connects now gets its last stats from the broker (retained).
  Subscriber later(port);
  ASSERT_TRUE(later.wait_for("edgetap/box1/stats", "", 5s)) << "the stats message is not retained";
  const auto stats = nlohmann::json::parse(later.last("edgetap/box1/stats"));
  EXPECT_EQ(stats["v"], 1);
  EXPECT_EQ(stats["type"], "stats");
  EXPECT_FALSE(stats.contains("ok"));
  ASSERT_EQ(stats["cameras"].size(), 2u) << stats.dump();
  EXPECT_EQ(stats["cameras"][0]["name"], "yard");
  EXPECT_TRUE(stats["mqtt"]["connected"].get<bool>());
}
