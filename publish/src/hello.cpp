#include "edgetap/publish/hello.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "edgetap/json_input.hpp"

namespace edgetap::pipeline {

std::string parse_hello(const std::string& line, std::set<std::string>& cameras, wire::Format& format) {
  std::string error;
  const nlohmann::json hello = parse_json_input(line, error);
  if (hello.is_discarded() || !hello.is_object()) {
    return "hello must be one JSON object on one line" + (error.empty() ? "" : ": " + error);
  }
  for (const auto& [key, value] : hello.items()) {
    if (key == "subscribe") {
      if (!value.is_array()) return "'subscribe' must be a list of camera names";
      for (const auto& name : value) {
        if (!name.is_string()) return "'subscribe' must be a list of camera names";
        cameras.insert(name.get<std::string>());
      }
    } else if (key == "format") {
      const std::string name = value.is_string() ? value.get<std::string>() : "";
      if (name != "ndjson" && name != "cbor") return "unsupported 'format' (supported: \"ndjson\", \"cbor\")";
      format = name == "cbor" ? wire::Format::cbor : wire::Format::ndjson;
    } else {
      return "unknown hello key '" + key + "' (allowed: subscribe, format)";
    }
  }
  return "";
}

namespace {

std::string joined(const std::vector<CameraDirectory::Entry>& entries) {
  std::string out;
  for (const auto& e : entries) out += (out.empty() ? "" : ", ") + e.name;
  return out.empty() ? "none" : out;
}

}  // namespace

nlohmann::ordered_json hello_reply(const std::set<std::string>& cameras, wire::Format format,
                                   const std::optional<std::vector<CameraDirectory::Entry>>& directory,
                                   std::string& error) {
  nlohmann::ordered_json reply;
  reply["v"] = 1;
  if (directory) {
    std::vector<std::string> unknown;
    for (const std::string& name : cameras) {
      const bool known = std::any_of(directory->begin(), directory->end(), [&](const auto& e) { return e.name == name; });
      if (!known) unknown.push_back(name);
    }
    if (!unknown.empty()) {
      error = std::string(unknown.size() == 1 ? "no camera named " : "no cameras named ");
      for (std::size_t i = 0; i < unknown.size(); ++i) error += (i ? ", '" : "'") + unknown[i] + "'";
      error += " (cameras: " + joined(*directory) + ")";
      reply["type"] = "error";
      reply["error"] = error;
      reply["cameras"] = nlohmann::ordered_json::array();
      for (const auto& e : *directory) reply["cameras"].push_back(e.name);
      return reply;
    }
  }
  reply["type"] = "hello";
  reply["subscribe"] = cameras.empty() ? nlohmann::ordered_json("all") : nlohmann::ordered_json(cameras);
  reply["format"] = format == wire::Format::cbor ? "cbor" : "ndjson";
  if (!directory) return reply;
  reply["cameras"] = nlohmann::ordered_json::array();
  for (const auto& e : *directory) {
    if (!cameras.empty() && cameras.count(e.name) == 0) continue;
    nlohmann::ordered_json camera;
    camera["name"] = e.name;
    if (e.engine) {
      const nlohmann::json engine = engine_json(*e.engine);
      for (auto it = engine.begin(); it != engine.end(); ++it) camera[it.key()] = *it;
    }
    reply["cameras"].push_back(std::move(camera));
  }
  return reply;
}

}  // namespace edgetap::pipeline
