// The track socket's hello: the one line a subscriber may send first,
//   {"subscribe": ["cam1", ...], "format": "ndjson" | "cbor"}
// (see publisher.hpp). Parsed apart from the socket so that it is tested and
// fuzzed on its own (fuzz/fuzz_hello.cpp).
#pragma once

#include <set>
#include <string>

#include "edgetap/pipeline/wire_format.hpp"

namespace edgetap::pipeline {

// Parses a hello line into `cameras` (added to; empty: all) and `format`; returns ""
// on success or the error to send back.
std::string parse_hello(const std::string& line, std::set<std::string>& cameras, wire::Format& format);

}  // namespace edgetap::pipeline
