// EdgeTAP configuration as plain data: parsed once, validated once, immutable
// afterwards. Every default below is the documented default of the YAML key
// named in its comment (see config/edgetap.yaml for the reference).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  bool operator==(const Source&) const = default;
};

enum class QueryPolicy { grid, features, points };

enum class TrackerKind { edgetap, klt };  // edgetap: the network; klt: OpenCV's pyramidal Lucas-Kanade
enum class Precision { fp32, fp16 };      // the network's storage on the GPU (fp16 needs a CUDA device)

struct ExplicitPoint {
  std::string id;
  double x = 0;  // source-image pixels
  double y = 0;
  bool operator==(const ExplicitPoint&) const = default;
};

struct QuerySettings {                  // key: queries
  QueryPolicy policy = QueryPolicy::grid;  // policy: grid | features | points
  int grid_cols = 16;                   // grid: [cols, rows]
  int grid_rows = 16;
  int feature_count = 256;              // features.count
  double feature_min_distance = 8.0;    // features.min_distance (model pixels)
  std::vector<ExplicitPoint> points;    // points: [{id, x, y}]
  bool reseed = true;                   // reseed: lost points are replaced under new ids
  bool operator==(const QuerySettings&) const = default;
};

struct KltSettings {            // key: klt
  int window = 21;              // window: search window side in pixels (odd)
  int levels = 3;               // levels: pyramid levels above the base
  double fb_threshold = 1.0;    // fb_threshold: forward-backward error (model px) above which a point is lost
  bool operator==(const KltSettings&) const = default;
};

struct EdgeTapSettings {             // key: edgetap (the network tracker)
  std::string model{};               // model: the .safetensors file ("" = the bundled model);
                                     //   its configuration is the .json of the same name
  std::optional<double> visible_threshold{};  // visible_threshold: the model's visible score at or above which a
                                            //   point is visible (unset = the model's own, from its JSON)
  bool template_refinement = true;   // template_refinement: align published positions against each point's
                                     //   query patch where the model's JSON declares it (false: the network's)
  std::optional<int> support_grid{};  // support_grid: side of the grid of unpublished support tracks started at the
                                     //   first frame (unset = the model's own, from its JSON; 0 = none)
  int iters = 0;                     // refinement iterations, 0 = the model's own (set by a ladder rung, not a key)
  Precision precision = Precision::fp32;  // fp32 | fp16 storage on the GPU (set by a ladder rung, not a key)
  bool operator==(const EdgeTapSettings&) const = default;
};

// One rung of the degradation ladder: a tracker setting cheaper than the one above it.
struct Rung {                        // key: ladder[i]
  TrackerKind tracker = TrackerKind::edgetap;  // tracker: edgetap | klt (klt ends a ladder)
  Precision precision = Precision::fp32;       // precision: fp32 | fp16 (fp16 needs a CUDA device; skipped without one)
  int width = 0, height = 0;         // size: [width, height] (0 = the camera's model_size; at most model_size)
  int iters = 0;                     // iters: refinement iterations (0 = the model's own)
  int max_points = 0;                // max_points: cap on live tracks (0 = no cap)
  int stride = 1;                    // stride: track every stride-th frame
  std::string model;                 // model: edgetap weights for this rung (.safetensors, its .json beside;
                                     //   "" = the camera's edgetap.model)
  std::optional<bool> template_refinement;  // template_refinement: this rung's (unset = the camera's
                                            //   edgetap.template_refinement); false makes a cheaper rung
  bool operator==(const Rung&) const = default;
};

struct GovernorSettings {            // key: governor
  int percentile = 90;               // percentile of capture -> publish latency compared with budget_ms [50, 100]
  int window = 30;                   // window: frames the percentile is taken over [5, 1000]
  int down_after = 10;               // down_after: frames over budget in a row before stepping down [1, 1000]
  int up_after = 60;                 // up_after: frames with headroom in a row before stepping up [1, 10000]
  double headroom = 0.6;             // headroom: percentile below headroom * budget counts as headroom (0, 1)
  double min_dwell_s = 3;            // min_dwell_s: least time on a rung before the next change [0, 3600]
  int warmup_frames = 30;            // warmup_frames: frames after a start or a rung change that are not judged
                                     // (a new rung's set-up: buffers, plans, graph captures) [0, 1000]
  bool operator==(const GovernorSettings&) const = default;
};

enum class Pace { realtime, fast };
enum class AtEof { loop, stop };

struct CaptureSettings {        // key: capture
  Pace pace = Pace::realtime;   // pace: realtime | fast (files only)
  AtEof at_eof = AtEof::stop;   // at_eof: loop | stop (files only)
  int queue = 4;                // queue: frames waiting for the tracker before the oldest is dropped
  // Live sources (rtsp, v4l2, test) restart after an error or a stall, waiting
  // retry_initial_ms, doubling up to retry_max_ms, each wait with +-20% jitter.
  int retry_initial_ms = 500;   // retry.initial_ms
  int retry_max_ms = 30000;     // retry.max_ms
  double stall_timeout_s = 10;  // stall_timeout_s: no frame for this long restarts the pipeline (0 = never)
  bool operator==(const CaptureSettings&) const = default;
};

struct PublishSettings {        // key: publish
  bool socket = true;           // socket: send this camera's tracks on the track socket
  bool mqtt = true;             // mqtt: and to the MQTT broker (when mqtt.enabled)
  bool operator==(const PublishSettings&) const = default;
};

// A camera's own `mqtt` key: how many of its messages go to the broker (the
// top-level `mqtt` section is the broker connection). A message is sent when
// both limits let it through; the track socket always gets every message.
struct MqttThrottleSettings {   // key: mqtt (in defaults or a camera)
  int every_n = 1;              // every_n: send every n-th processed frame's message [1, 10000]
  double max_rate_hz = 0;       // max_rate_hz: at most this many messages a second (0 = no limit) [0, 1000]
  bool operator==(const MqttThrottleSettings&) const = default;
};

struct CameraConfig {
  std::string name;
  Source source;
  int model_width = 256;        // model_size: [width, height]
  int model_height = 256;
  TrackerKind tracker = TrackerKind::edgetap;  // tracker: edgetap (the network) | klt
  QuerySettings queries;
  KltSettings klt;
  EdgeTapSettings edgetap;
  double budget_ms = 100.0;     // budget_ms: capture -> publish latency budget
  std::vector<Rung> ladder;     // ladder: rungs from best to cheapest (empty = the default for `tracker`)
  GovernorSettings governor;
  CaptureSettings capture;
  PublishSettings publish;
  MqttThrottleSettings mqtt;
  int line = 0;                 // where the camera is defined in the file (1-based)
  bool operator==(const CameraConfig&) const = default;
};

struct PublisherConfig {                              // key: publisher
  std::string socket_path = "/run/edgetap/tracks.sock";  // socket
  int subscriber_queue = 256;                         // subscriber_queue: messages per subscriber
  int max_subscribers = 64;                           // max_subscribers: more are refused
  std::string group;                                  // group: the socket file's group ("" = the daemon's)
  bool operator==(const PublisherConfig&) const = default;
};

// What one control request may do (keys of `control`). A reload applies them
// to the next request without reopening the socket.
// The most control.max_id_bytes may be set to: every id the daemon can ever accept fits.
inline constexpr int kLongestIdBytes = 1024;

struct ControlLimits {
  int max_points_per_request = 1000;  // max_points_per_request: points (add_points) or ids (remove_points) [1, 100000]
  int max_points_per_camera = 4096;   // max_points_per_camera: live tracks add_points brings a camera to [1, 100000]
  int max_id_bytes = 64;              // max_id_bytes: the longest track id, in bytes of UTF-8 [1, 1024]
  bool operator==(const ControlLimits&) const = default;
};

struct ControlConfig {                                // key: control
  std::string socket_path = "/run/edgetap/control.sock";  // socket: JSON-lines control socket ("" = off)
  std::string group;                                  // group: the socket file's group ("" = the daemon's)
  // state_file: where points added at run time are kept across restarts and reloads
  // (an absolute path, e.g. /var/lib/edgetap/points.json; "" = not kept, the default).
  std::string state_file;
  ControlLimits limits;
  bool operator==(const ControlConfig&) const = default;
  // The socket itself (path and group): what a reload must reopen it for.
  bool same_endpoint(const ControlConfig& o) const { return socket_path == o.socket_path && group == o.group; }
};

struct MetricsConfig {                // key: metrics
  std::string address = "127.0.0.1"; // listen: "HOST:PORT" for /metrics and /healthz ("" = off)
  int port = 9464;
  bool enabled = true;
  bool operator==(const MetricsConfig&) const = default;
};

struct MqttConfig {                         // key: mqtt
  bool enabled = false;                     // enabled
  std::string host = "localhost";           // host
  int port = 1883;                          // port
  std::string client_id;                    // client_id ("" = edgetap-<hostname>)
  std::string topic_prefix = "edgetap";     // topic_prefix: tracks on <prefix>/<camera>/tracks
  int keepalive_s = 30;                     // keepalive_s
  int qos = 0;                              // qos: 0 | 1
  std::string credentials_file;             // credentials_file: "username:password" on its first line
  std::string ca_file;                      // tls.ca_file: enables TLS
  std::string cert_file;                    // tls.cert_file
  std::string key_file;                     // tls.key_file
  int retry_initial_ms = 500;               // retry.initial_ms
  int retry_max_ms = 30000;                 // retry.max_ms
  int stats_every_s = 5;                    // stats_every_s: retained <prefix>/<client_id>/stats this often (0 = never)
  bool operator==(const MqttConfig&) const = default;
};

// Where a setting was written, for the checks made after loading (edgetap
// check-config's model checks), so that they too name file, line and key.
struct WrittenAt {
  int line = 0;     // 1-based; 0: unknown
  int column = 0;   // 1-based
  std::string key;  // as messages name it: "cameras[0] (camera 'gate').edgetap.model", "defaults.model_size"
};

struct Config {
  std::string path;             // the file it came from ("<string>" when parsed from text)
  // By "cameras[I].KEY", for KEY model_size, edgetap.model, ladder[J].size and ladder[J].model:
  // in the camera, else in defaults (inherited); model_size and edgetap.model always (a
  // built-in default: the camera's own line), a rung's keys where the rung has them.
  std::map<std::string, WrittenAt> written;
  PublisherConfig publisher;
  ControlConfig control;
  MetricsConfig metrics;
  MqttConfig mqtt;
  std::vector<CameraConfig> cameras;
};

const char* to_string(SourceKind kind);
const char* to_string(QueryPolicy policy);
const char* to_string(TrackerKind tracker);  // as the YAML spells it: "edgetap", "klt"
const char* to_string(Precision precision);  // "fp32", "fp16"
// The tracker `name` spells as to_string does, or nullopt (for names given on a command line).
std::optional<TrackerKind> tracker_kind(std::string_view name);

}  // namespace edgetap::config
