// EdgeTAP configuration as plain data: parsed once, validated once, immutable
// afterwards. Every default below is the documented default of the YAML key
// named in its comment (see config/edgetap.yaml for the reference).
#pragma once

#include <string>
#include <vector>

namespace edgetap::config {

enum class SourceKind { file, rtsp, v4l2, test };

struct Source {
  SourceKind kind = SourceKind::test;
  std::string uri;       // as written in the file
  std::string location;  // file path (absolute), rtsp URL, device path, or videotestsrc pattern
  int test_width = 640;  // test: only: the pattern's size and rate, and its scroll speed
  int test_height = 480;
  int test_fps = 30;
  int test_speed = 0;    // pixels per frame, positive scrolls the image to the left
};

enum class QueryPolicy { grid, features, points };

struct ExplicitPoint {
  std::string id;
  double x = 0;  // source-image pixels
  double y = 0;
};

struct QuerySettings {                  // key: queries
  QueryPolicy policy = QueryPolicy::grid;  // policy: grid | features | points
  int grid_cols = 16;                   // grid: [cols, rows]
  int grid_rows = 16;
  int feature_count = 256;              // features.count
  double feature_min_distance = 8.0;    // features.min_distance (model pixels)
  std::vector<ExplicitPoint> points;    // points: [{id, x, y}]
  bool reseed = true;                   // reseed: lost points are replaced under new ids
};

struct KltSettings {            // key: klt
  int window = 21;              // window: search window side in pixels (odd)
  int levels = 3;               // levels: pyramid levels above the base
  double fb_threshold = 1.0;    // fb_threshold: forward-backward error (model px) above which a point is lost
};

enum class Pace { realtime, fast };
enum class AtEof { loop, stop };

struct CaptureSettings {        // key: capture
  Pace pace = Pace::realtime;   // pace: realtime | fast (files only)
  AtEof at_eof = AtEof::stop;   // at_eof: loop | stop (files only)
  int queue = 4;                // queue: frames waiting for the tracker before the oldest is dropped
};

struct PublishSettings {        // key: publish
  bool socket = true;           // socket: send this camera's tracks on the track socket
};

struct CameraConfig {
  std::string name;
  Source source;
  int model_width = 256;        // model_size: [width, height]
  int model_height = 256;
  std::string tracker = "klt";  // tracker: klt
  QuerySettings queries;
  KltSettings klt;
  double budget_ms = 100.0;     // budget_ms: capture -> publish latency budget
  CaptureSettings capture;
  PublishSettings publish;
  int line = 0;                 // where the camera is defined in the file (1-based)
};

struct PublisherConfig {                              // key: publisher
  std::string socket_path = "/run/edgetap/tracks.sock";  // socket
  int subscriber_queue = 256;                         // subscriber_queue: messages per subscriber
};

struct Config {
  std::string path;             // the file it came from ("<string>" when parsed from text)
  PublisherConfig publisher;
  std::vector<CameraConfig> cameras;
};

const char* to_string(SourceKind kind);
const char* to_string(QueryPolicy policy);

}  // namespace edgetap::config
