#include "edgetap/publish/mqtt_bridge.hpp"

#include <mosquitto.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>

#include "edgetap/thread_name.hpp"

namespace edgetap::pipeline {
namespace {

// How long one mosquitto_loop waits for traffic: a stop is seen within it.
constexpr int kLoopTimeoutMs = 100;
// At most this many loops flush what stop() queued before the thread ends.
constexpr int kFlushLoops = 10;

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// Reads "username:password" from the first line of `path`.
bool read_credentials(const std::string& path, std::string& user, std::string& password, std::string& error) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    error = "cannot read MQTT credentials from " + path;
    return false;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    error = path + ": the first line must be username:password";
    return false;
  }
  user = line.substr(0, colon);
  password = line.substr(colon + 1);
  return true;
}

}  // namespace

MqttBridge::MqttBridge(const config::MqttConfig& settings, std::shared_ptr<spdlog::logger> log)
    : settings_(settings),
      log_(std::move(log)),
      client_id_(settings.client_id.empty() ? "edgetap-" + host_name() : settings.client_id) {}

MqttBridge::~MqttBridge() { stop(); }

bool MqttBridge::start(std::string& error) {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
  client_ = mosquitto_new(client_id_.c_str(), true, this);
  if (client_ == nullptr) {
    error = "mosquitto_new failed";
    return false;
  }
  mosquitto_connect_callback_set(client_, &MqttBridge::on_connect);
  mosquitto_disconnect_callback_set(client_, &MqttBridge::on_disconnect);
  const std::string status = status_topic();
  int rc = mosquitto_will_set(client_, status.c_str(), 7, "offline", 1, true);
  if (rc == MOSQ_ERR_SUCCESS && !settings_.credentials_file.empty()) {
    std::string user, password;
    if (!read_credentials(settings_.credentials_file, user, password, error)) return false;
    rc = mosquitto_username_pw_set(client_, user.c_str(), password.c_str());
  }
  if (rc == MOSQ_ERR_SUCCESS && !settings_.ca_file.empty()) {
    rc = mosquitto_tls_set(client_, settings_.ca_file.c_str(), nullptr,
                           settings_.cert_file.empty() ? nullptr : settings_.cert_file.c_str(),
                           settings_.key_file.empty() ? nullptr : settings_.key_file.c_str(), nullptr);
  }
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_threaded_set(client_, true);  // our thread runs its loop
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("MQTT setup: ") + mosquitto_strerror(rc);
    return false;
  }
  // connect_async + the network thread: the first connection and every reconnection
  // happen there, so an absent broker never blocks start-up.
  rc = mosquitto_connect_async(client_, settings_.host.c_str(), settings_.port, settings_.keepalive_s);
  if (rc != MOSQ_ERR_SUCCESS) log_->warn("MQTT connect to {}:{}: {} (will retry)", settings_.host, settings_.port, mosquitto_strerror(rc));
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = false;
  }
  network_ = std::thread([this] { run_network(); });
  log_->info("MQTT bridge to {}:{} as '{}', tracks on {}", settings_.host, settings_.port, client_id_,
             tracks_topic("<camera>"));
  return true;
}

void MqttBridge::stop() {
  if (client_ == nullptr) return;
  if (connected_) {
    mosquitto_publish(client_, nullptr, status_topic().c_str(), 7, "offline", 1, true);
    mosquitto_disconnect(client_);
  }
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_wake_.notify_all();
  if (network_.joinable()) network_.join();
  mosquitto_destroy(client_);
  client_ = nullptr;
  connected_ = false;
}

void MqttBridge::run_network() {
  name_this_thread("mqtt");
  const auto initial = std::chrono::milliseconds(std::max(1, settings_.retry_initial_ms));
  const auto longest = std::max(initial, std::chrono::milliseconds(settings_.retry_max_ms));
  auto delay = initial;
  for (;;) {
    bool stopping = false;
    {
      std::lock_guard lock(stop_mutex_);
      stopping = stopping_;
    }
    if (stopping) {
      for (int i = 0; i < kFlushLoops && mosquitto_want_write(client_); ++i) mosquitto_loop(client_, kLoopTimeoutMs, 1);
      return;
    }
    if (mosquitto_loop(client_, kLoopTimeoutMs, 1) == MOSQ_ERR_SUCCESS) {
      if (connected_) delay = initial;
      continue;
    }
    // Not connected (not yet, lost, or refused): the back-off, then a reconnection,
    // whose failure the next loop reports.
    std::unique_lock lock(stop_mutex_);
    if (stop_wake_.wait_for(lock, delay, [&] { return stopping_; })) continue;
    lock.unlock();
    delay = std::min(delay * 2, longest);
    mosquitto_reconnect_async(client_);  // connects without blocking: a stop is never held up by it
  }
}

void MqttBridge::on_connect(mosquitto* client, void* self_ptr, int rc) {
  auto* self = static_cast<MqttBridge*>(self_ptr);
  if (rc != 0) {
    self->log_->warn("MQTT broker refused the connection: {}", mosquitto_connack_string(rc));
    return;
  }
  self->connected_ = true;
  ++self->connects_;
  self->log_->info("MQTT connected to {}:{}", self->settings_.host, self->settings_.port);
  mosquitto_publish(client, nullptr, self->status_topic().c_str(), 6, "online", 1, true);
}

void MqttBridge::on_disconnect(mosquitto*, void* self_ptr, int rc) {
  auto* self = static_cast<MqttBridge*>(self_ptr);
  self->connected_ = false;
  if (rc != 0) self->log_->warn("MQTT connection lost ({}); reconnecting with backoff", mosquitto_strerror(rc));
}

void MqttBridge::publish(const std::string& camera, const std::string& json) {
  if (client_ == nullptr || !connected_) {
    ++dropped_;
    return;
  }
  const std::string topic = tracks_topic(camera);
  const int rc = mosquitto_publish(client_, nullptr, topic.c_str(), static_cast<int>(json.size()), json.data(),
                                   settings_.qos, false);
  if (rc == MOSQ_ERR_SUCCESS) {
    ++published_;
  } else {
    ++dropped_;
  }
}

void MqttBridge::publish_stats(const std::string& json) {
  if (client_ == nullptr || !connected_) return;
  mosquitto_publish(client_, nullptr, stats_topic().c_str(), static_cast<int>(json.size()), json.data(), settings_.qos,
                    true);
}

MqttStats MqttBridge::stats() const { return {connected_.load(), published_.load(), dropped_.load(), connects_.load()}; }

}  // namespace edgetap::pipeline
