// The MQTT bridge: the track socket's messages on <prefix>/<camera>/tracks,
// and an availability topic <prefix>/<client_id>/status ("online", retained;
// the broker publishes "offline" as the last will when the connection drops),
// and the daemon's statistics, retained, on <prefix>/<client_id>/stats.
// A thread of the bridge's runs libmosquitto's network loop and reconnects
// with exponential backoff (not libmosquitto's own thread: it ends inside the
// uninstrumented library, and ThreadSanitizer then stops the process); messages
// published while disconnected are dropped and counted, never queued without bound.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "edgetap/config/config.hpp"
#include "edgetap/publish/message_sink.hpp"

struct mosquitto;
namespace spdlog { class logger; }

namespace edgetap::pipeline {

struct MqttStats {
  bool connected = false;
  std::uint64_t published = 0;
  std::uint64_t dropped = 0;     // not sent: disconnected or rejected by the client library
  std::uint64_t connects = 0;    // successful connections, first one included
  std::uint64_t throttled = 0;   // held back by the cameras' `mqtt` throttles (counted by the daemon's router)
};

class MqttBridge final : public MessageSink {
 public:
  MqttBridge(const config::MqttConfig& settings, std::shared_ptr<spdlog::logger> log);
  ~MqttBridge() override;
  MqttBridge(const MqttBridge&) = delete;
  MqttBridge& operator=(const MqttBridge&) = delete;

  // Sets up TLS, credentials and the last will, then connects in the background.
  bool start(std::string& error);
  void stop();
  void publish(const std::string& camera, const std::string& json) override;
  // `json` on <prefix>/<client_id>/stats, retained, so a fleet dashboard that
  // connects later still sees each daemon's last statistics. Dropped while disconnected.
  void publish_stats(const std::string& json);
  MqttStats stats() const;

  const std::string& client_id() const noexcept { return client_id_; }
  std::string status_topic() const { return settings_.topic_prefix + "/" + client_id_ + "/status"; }
  std::string stats_topic() const { return settings_.topic_prefix + "/" + client_id_ + "/stats"; }
  std::string tracks_topic(const std::string& camera) const { return settings_.topic_prefix + "/" + camera + "/tracks"; }

 private:
  static void on_connect(mosquitto* client, void* self, int rc);
  static void on_disconnect(mosquitto* client, void* self, int rc);
  // The network loop: mosquitto_loop while connected; otherwise the back-off, then a
  // reconnection. On stop, what stop() queued (the offline status, the DISCONNECT) is
  // flushed for a moment at most.
  void run_network();

  const config::MqttConfig settings_;
  std::shared_ptr<spdlog::logger> log_;
  std::string client_id_;
  mosquitto* client_ = nullptr;
  std::thread network_;
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;  // under stop_mutex_
  std::atomic<bool> connected_{false};
  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> connects_{0};
};

}  // namespace edgetap::pipeline
