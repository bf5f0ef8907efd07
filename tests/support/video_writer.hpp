// Encodes frames into a video file with a real GStreamer pipeline
// (appsrc ! videoconvert ! jpegenc ! avimux ! filesink).
#pragma once

#include <string>
#include <vector>

#include "edgetap/capture/frame.hpp"

namespace edgetap::test {

// Returns "" on success, else the GStreamer error.
std::string write_mjpeg_avi(const std::string& path, const std::vector<pipeline::Frame>& frames, int fps);

}  // namespace edgetap::test
