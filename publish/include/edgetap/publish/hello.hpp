// The track socket's hello: the one line a subscriber may send first,
//   {"subscribe": ["cam1", ...], "format": "ndjson" | "cbor"}
// (see publisher.hpp). Parsed apart from the socket so that it is tested and
// fuzzed on its own (fuzz/fuzz_hello.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "edgetap/publish/camera_directory.hpp"
#include "edgetap/publish/wire_format.hpp"

namespace edgetap::pipeline {

// Parses a hello line into `cameras` (added to; empty: all) and `format`; returns ""
// on success or the error to send back.
std::string parse_hello(const std::string& line, std::set<std::string>& cameras, wire::Format& format);

// The reply to a parsed hello. With the daemon's `directory`: every camera
// asked for must be in it, else `error` is set ("no camera named 'x' (cameras:
// a, b)") and the reply is {"v":1,"type":"error","error":...,"cameras":[...]};
// a good hello's reply lists each subscribed camera with what runs it:
// {"v":1,"type":"hello","subscribe":[...]|"all","format":...,
//  "cameras":[{"name","model","model_version","backend","precision","rung"}]}.
// Without a directory (a publisher on its own) the names are not checked and
// "cameras" is left out.
nlohmann::ordered_json hello_reply(const std::set<std::string>& cameras, wire::Format format,
                                   const std::optional<std::vector<CameraDirectory::Entry>>& directory,
                                   std::string& error);

}  // namespace edgetap::pipeline
