#include "edgetap/publish/mqtt_bridge.hpp"

#include <mosquitto.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <mutex>

namespace edgetap::pipeline {
namespace {

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
  const unsigned int initial_s = static_cast<unsigned int>(std::max(1, settings_.retry_initial_ms / 1000));
  const unsigned int max_s = static_cast<unsigned int>(std::max(1, settings_.retry_max_ms / 1000));
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_reconnect_delay_set(client_, initial_s, max_s, true);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("MQTT setup: ") + mosquitto_strerror(rc);
    return false;
  }
  // connect_async + loop_start: the first connection and every reconnection
  // happen on libmosquitto's thread, so an absent broker never blocks start-up.
  rc = mosquitto_connect_async(client_, settings_.host.c_str(), settings_.port, settings_.keepalive_s);
  if (rc != MOSQ_ERR_SUCCESS) log_->warn("MQTT connect to {}:{}: {} (will retry)", settings_.host, settings_.port, mosquitto_strerror(rc));
  rc = mosquitto_loop_start(client_);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("MQTT network thread: ") + mosquitto_strerror(rc);
    return false;
  }
  loop_running_ = true;
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
  if (loop_running_) mosquitto_loop_stop(client_, true);
  loop_running_ = false;
  mosquitto_destroy(client_);
  client_ = nullptr;
  connected_ = false;
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
