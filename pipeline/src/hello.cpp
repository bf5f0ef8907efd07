#include "edgetap/pipeline/hello.hpp"

#include <nlohmann/json.hpp>

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

}  // namespace edgetap::pipeline
