// Parses a camera's `source` string into a Source.
//   file://PATH            a video file (relative paths resolve against base_dir);
//                          percent-escapes are decoded (my%20clip.avi is "my clip.avi")
//   rtsp://... rtsps://... an RTSP stream
//   v4l2:///dev/videoN or /dev/videoN   a V4L2 device
//   test:PATTERN[?width=W&height=H&fps=F&speed=S]   a videotestsrc pattern
#pragma once

#include <optional>
#include <string>

#include "edgetap/config/config.hpp"

namespace edgetap::config::detail {

// Returns the source, or nullopt with `error` describing what is wrong.
std::optional<Source> parse_source(const std::string& uri, const std::string& base_dir, std::string& error);

}  // namespace edgetap::config::detail
