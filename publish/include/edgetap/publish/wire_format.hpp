// The two encodings of the track socket. A track message is encoded once per
// frame; each subscriber's copy gets its own "dropped" count as the first
// field at send time, by splicing rather than re-encoding.
#pragma once

#include <cstdint>
#include <string>

namespace edgetap::pipeline::wire {

enum class Format { ndjson, cbor };

// `json` is one JSON object: the NDJSON line with "dropped" first.
std::string ndjson_with_dropped(const std::string& json, std::uint64_t dropped);
// The CBOR encoding of one JSON object (a CBOR map), done once per message.
std::string cbor_of(const std::string& json);
// `cbor_map` from cbor_of(): the same map with "dropped" as its first entry.
std::string cbor_with_dropped(const std::string& cbor_map, std::uint64_t dropped);

}  // namespace edgetap::pipeline::wire
