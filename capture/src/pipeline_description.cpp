// gst-launch descriptions per source kind.
#include <sstream>

#include "edgetap/capture/capture.hpp"

namespace edgetap::pipeline {
namespace {

// Quotes a property value for gst_parse_launch.
std::string quoted(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string source_part(const config::Source& source) {
  std::ostringstream s;
  switch (source.kind) {
    case config::SourceKind::file:
      s << "filesrc location=" << quoted(source.location) << " ! decodebin";
      break;
    case config::SourceKind::rtsp:
      s << "rtspsrc location=" << quoted(source.location) << " latency=100 ! decodebin";
      break;
    case config::SourceKind::v4l2:
      s << "v4l2src device=" << quoted(source.location) << " ! decodebin";
      break;
    case config::SourceKind::test:
      s << "videotestsrc is-live=true pattern=" << source.location << " horizontal-speed=" << source.test_speed
        << " ! video/x-raw,width=" << source.test_width << ",height=" << source.test_height
        << ",framerate=" << source.test_fps << "/1";
      break;
  }
  return s.str();
}

}  // namespace

std::string pipeline_description(const config::CameraConfig& camera) {
  const bool file = camera.source.kind == config::SourceKind::file;
  // Live sources are paced by the camera; files by the clock only when asked.
  const bool sync = !file || camera.capture.pace == config::Pace::realtime;
  std::ostringstream s;
  s << source_part(camera.source) << " ! videoconvert name=convert ! videoscale add-borders=false"
    << " ! video/x-raw,format=RGB,width=" << camera.model_width << ",height=" << camera.model_height
    << ",pixel-aspect-ratio=1/1"
    << " ! appsink name=sink max-buffers=1 drop=false sync=" << (sync ? "true" : "false");
  return s.str();
}

}  // namespace edgetap::pipeline
