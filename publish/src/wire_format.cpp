#include "edgetap/publish/wire_format.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace edgetap::pipeline::wire {
namespace {

// A CBOR map header (major type 5) for `entries` entries.
std::string map_header(std::uint64_t entries) {
  std::string h;
  if (entries < 24) {
    h.push_back(static_cast<char>(0xA0 | entries));
  } else if (entries < 256) {
    h.push_back(static_cast<char>(0xB8));
    h.push_back(static_cast<char>(entries));
  } else {
    throw std::invalid_argument("track messages have fewer than 256 fields");
  }
  return h;
}

}  // namespace

std::string ndjson_with_dropped(const std::string& json, std::uint64_t dropped) {
  return "{\"dropped\":" + std::to_string(dropped) + "," + json.substr(1) + "\n";
}

std::string cbor_of(const std::string& json) {
  const std::vector<std::uint8_t> bytes = nlohmann::ordered_json::to_cbor(nlohmann::ordered_json::parse(json));
  return std::string(bytes.begin(), bytes.end());
}

std::string cbor_with_dropped(const std::string& cbor_map, std::uint64_t dropped) {
  const auto first = static_cast<std::uint8_t>(cbor_map.at(0));
  const std::uint64_t info = first & 0x1F;
  const std::size_t header = info < 24 ? 1 : 2;
  const std::uint64_t entries = info < 24 ? info : static_cast<std::uint8_t>(cbor_map.at(1));
  const auto key = nlohmann::json::to_cbor("dropped");
  const auto value = nlohmann::json::to_cbor(dropped);
  std::string out = map_header(entries + 1);
  out.append(key.begin(), key.end());
  out.append(value.begin(), value.end());
  out.append(cbor_map, header, std::string::npos);
  return out;
}

}  // namespace edgetap::pipeline::wire
