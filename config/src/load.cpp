// The configuration schema: which keys exist, their ranges, and how a camera's
// settings override the global `defaults` (maps merge, scalars and lists replace).
#include "edgetap/config/load.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "edgetap/engine/model_config.hpp"
#include "service_sections.hpp"
#include "source_uri.hpp"
#include "yaml_reader.hpp"

namespace edgetap::config {
namespace {

using detail::YamlReader;

const std::vector<std::string> kSettingKeys = {"model_size", "tracker", "queries", "klt",     "edgetap",
                                               "budget_ms",  "ladder",  "governor", "capture", "publish",
                                               "mqtt"};

void read_points(YamlReader& r, const YAML::Node& list, const std::string& path, std::vector<ExplicitPoint>& out) {
  r.read_map_list(list, path, "expected a list of points {id, x, y}", {"id", "x", "y"}, out,
                  [&r](const YAML::Node& item, const std::string& at, std::size_t i) {
                    ExplicitPoint point;
                    point.id = "q" + std::to_string(i);
                    r.read_string(item, at, "id", point.id);
                    if (!item["x"] || !item["y"]) r.problem(item, at, "a point needs both x and y (source-image pixels)");
                    r.read_double(item, at, "x", 0.0, 100000.0, point.x);
                    r.read_double(item, at, "y", 0.0, 100000.0, point.y);
                    return point;
                  });
}

void read_queries(YamlReader& r, const YAML::Node& node, const std::string& path, QuerySettings& q) {
  if (!r.expect_map(node, path, {"policy", "grid", "features", "points", "reseed"})) return;
  int policy = static_cast<int>(q.policy);
  r.read_choice(node, path, "policy", {"grid", "features", "points"}, policy);
  q.policy = static_cast<QueryPolicy>(policy);
  r.read_int_pair(node, path, "grid", 1, 128, q.grid_cols, q.grid_rows);
  if (const YAML::Node features = node["features"]) {
    const std::string at = YamlReader::join(path, "features");
    if (r.expect_map(features, at, {"count", "min_distance"})) {
      r.read_int(features, at, "count", 1, 16384, q.feature_count);
      r.read_double(features, at, "min_distance", 1.0, 256.0, q.feature_min_distance);
    }
  }
  if (const YAML::Node points = node["points"]) read_points(r, points, YamlReader::join(path, "points"), q.points);
  r.read_bool(node, path, "reseed", q.reseed);
}

void read_ladder(YamlReader& r, const YAML::Node& list, const std::string& path, std::vector<Rung>& out) {
  r.read_map_list(
      list, path,
      "expected a list of rungs {tracker, model, precision, size, iters, max_points, stride, template_refinement} "
      "([] = the default ladder)",
      {"tracker", "model", "precision", "size", "iters", "max_points", "stride", "template_refinement"}, out,
      [&r, &list](const YAML::Node& item, const std::string& at, std::size_t i) {
        Rung rung;
        int tracker = static_cast<int>(rung.tracker), precision = static_cast<int>(rung.precision);
        r.read_choice(item, at, "tracker", {"edgetap", "klt"}, tracker);
        r.read_choice(item, at, "precision", {"fp32", "fp16"}, precision);
        rung.tracker = static_cast<TrackerKind>(tracker);
        rung.precision = static_cast<Precision>(precision);
        r.read_int_pair(item, at, "size", 32, 2048, rung.width, rung.height);
        r.read_int(item, at, "iters", 1, 16, rung.iters);
        r.read_int(item, at, "max_points", 1, 16384, rung.max_points);
        r.read_int(item, at, "stride", 1, 30, rung.stride);
        r.read_string(item, at, "model", rung.model, true);
        if (item["template_refinement"]) {
          bool refine = true;
          r.read_bool(item, at, "template_refinement", refine);
          rung.template_refinement = refine;
        }
        if (rung.tracker == TrackerKind::klt && i + 1 != list.size()) {
          r.problem(item, at, "a klt rung can only be the last rung");
        }
        if (rung.tracker == TrackerKind::klt && !rung.model.empty()) {
          r.problem(item["model"], YamlReader::join(at, "model"), "a klt rung has no model: 'model' names edgetap weights");
        }
        return rung;
      });
}

void read_governor(YamlReader& r, const YAML::Node& node, const std::string& path, GovernorSettings& g) {
  if (!r.expect_map(node, path,
                    {"percentile", "window", "down_after", "up_after", "headroom", "min_dwell_s", "warmup_frames"})) {
    return;
  }
  r.read_int(node, path, "percentile", 50, 100, g.percentile);
  r.read_int(node, path, "window", 5, 1000, g.window);
  r.read_int(node, path, "down_after", 1, 1000, g.down_after);
  r.read_int(node, path, "up_after", 1, 10000, g.up_after);
  r.read_double(node, path, "headroom", 0.01, 0.99, g.headroom);
  r.read_double(node, path, "min_dwell_s", 0.0, 3600.0, g.min_dwell_s);
  r.read_int(node, path, "warmup_frames", 0, 1000, g.warmup_frames);
}

void read_klt(YamlReader& r, const YAML::Node& node, const std::string& path, KltSettings& k) {
  if (!r.expect_map(node, path, {"window", "levels", "fb_threshold"})) return;
  // Only a window written here is checked here: an inherited one was checked (and
  // reported, at its own line) where `defaults` set it.
  if (const YAML::Node window = node["window"]) {
    r.read_int(node, path, "window", 5, 63, k.window);
    if (k.window % 2 == 0) r.problem(window, YamlReader::join(path, "window"), "must be odd (5, 7, ..., 63)");
  }
  r.read_int(node, path, "levels", 0, 6, k.levels);
  r.read_double(node, path, "fb_threshold", 0.01, 100.0, k.fb_threshold);
}

void read_capture(YamlReader& r, const YAML::Node& node, const std::string& path, CaptureSettings& c) {
  if (!r.expect_map(node, path, {"pace", "at_eof", "queue", "retry", "stall_timeout_s"})) return;
  int pace = static_cast<int>(c.pace);
  r.read_choice(node, path, "pace", {"realtime", "fast"}, pace);
  c.pace = static_cast<Pace>(pace);
  int at_eof = static_cast<int>(c.at_eof);
  r.read_choice(node, path, "at_eof", {"loop", "stop"}, at_eof);
  c.at_eof = static_cast<AtEof>(at_eof);
  r.read_int(node, path, "queue", 1, 64, c.queue);
  if (const YAML::Node retry = node["retry"]) {
    const std::string at = YamlReader::join(path, "retry");
    if (r.expect_map(retry, at, {"initial_ms", "max_ms"})) {
      r.read_int(retry, at, "initial_ms", 10, 600000, c.retry_initial_ms);
      r.read_int(retry, at, "max_ms", 10, 3600000, c.retry_max_ms);
      if (c.retry_max_ms < c.retry_initial_ms) r.problem(retry, at, "max_ms must be >= initial_ms");
    }
  }
  r.read_double(node, path, "stall_timeout_s", 0.0, 3600.0, c.stall_timeout_s);
}

// Applies the setting keys present in `node` onto `cam`; absent keys keep their value.
void apply_settings(YamlReader& r, const YAML::Node& node, const std::string& path, CameraConfig& cam) {
  r.read_int_pair(node, path, "model_size", 32, 2048, cam.model_width, cam.model_height);
  int tracker = cam.tracker == TrackerKind::edgetap ? 1 : 0;  // offered klt first, unlike the enum
  r.read_choice(node, path, "tracker", {"klt", "edgetap"}, tracker);
  cam.tracker = tracker == 1 ? TrackerKind::edgetap : TrackerKind::klt;
  if (const YAML::Node e = node["edgetap"]) {
    const std::string at = YamlReader::join(path, "edgetap");
    if (r.expect_map(e, at, {"model", "visible_threshold", "template_refinement", "support_grid"})) {
      r.read_string(e, at, "model", cam.edgetap.model, true);
      r.read_bool(e, at, "template_refinement", cam.edgetap.template_refinement);
      if (e["support_grid"]) {
        int side = cam.edgetap.support_grid.value_or(0);
        r.read_int(e, at, "support_grid", 0, engine::kMaxSupportGrid, side);
        cam.edgetap.support_grid = side;
      }
      if (e["visible_threshold"]) {
        double threshold = cam.edgetap.visible_threshold.value_or(0.5);
        r.read_double(e, at, "visible_threshold", 0.0, 1.0, threshold);
        cam.edgetap.visible_threshold = threshold;
      }
    }
  }
  if (const YAML::Node q = node["queries"]) read_queries(r, q, YamlReader::join(path, "queries"), cam.queries);
  if (const YAML::Node k = node["klt"]) read_klt(r, k, YamlReader::join(path, "klt"), cam.klt);
  r.read_double(node, path, "budget_ms", 1.0, 60000.0, cam.budget_ms);
  if (const YAML::Node l = node["ladder"]) read_ladder(r, l, YamlReader::join(path, "ladder"), cam.ladder);
  if (const YAML::Node g = node["governor"]) read_governor(r, g, YamlReader::join(path, "governor"), cam.governor);
  if (const YAML::Node c = node["capture"]) read_capture(r, c, YamlReader::join(path, "capture"), cam.capture);
  if (const YAML::Node p = node["publish"]) {
    const std::string at = YamlReader::join(path, "publish");
    if (r.expect_map(p, at, {"socket", "mqtt"})) {
      r.read_bool(p, at, "socket", cam.publish.socket);
      r.read_bool(p, at, "mqtt", cam.publish.mqtt);
    }
  }
  if (const YAML::Node m = node["mqtt"]) {
    const std::string at = YamlReader::join(path, "mqtt");
    if (r.expect_map(m, at, {"every_n", "max_rate_hz"})) {
      r.read_int(m, at, "every_n", 1, 10000, cam.mqtt.every_n);
      r.read_double(m, at, "max_rate_hz", 0.0, 1000.0, cam.mqtt.max_rate_hz);
    }
  }
}

// A model file named relative to the configuration file's folder, made absolute.
void resolve_model_path(const std::string& base_dir, std::string& model) {
  if (!model.empty() && std::filesystem::path(model).is_relative()) {
    model = (std::filesystem::path(base_dir) / model).lexically_normal().string();
  }
}

// The node at keys [key, end) under `map`, or an undefined node when any key on the way is
// absent. Recursive rather than a loop: assigning a yaml-cpp node overwrites what it refers to.
YAML::Node find_path(const YAML::Node& map, const char* const* key, const char* const* end) {
  if (key == end) return map;
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node child = map[*key];  // const: a lookup must not add the key
  if (!child) return YAML::Node(YAML::NodeType::Undefined);
  return find_path(child, key + 1, end);
}

// Where the camera's setting at `keys` was written: in the camera's own map, else in
// `defaults` (the camera inherits it), else the camera itself (a built-in default).
YAML::Node written_at(const YAML::Node& camera, const YAML::Node& defaults, std::initializer_list<const char*> keys) {
  if (const YAML::Node own = find_path(camera, keys.begin(), keys.end())) return own;
  if (const YAML::Node inherited = find_path(defaults, keys.begin(), keys.end())) return inherited;
  return camera;
}

// A rung larger than model_size, reported at the rung's `size` wherever the ladder was written.
void check_rung_sizes(YamlReader& r, const YAML::Node& node, const YAML::Node& defaults, const std::string& where,
                      const CameraConfig& cam) {
  const YAML::Node ladder = written_at(node, defaults, {"ladder"});
  const bool inherited = !node["ladder"];
  for (std::size_t i = 0; i < cam.ladder.size(); ++i) {
    const Rung& rung = cam.ladder[i];
    if (rung.width <= cam.model_width && rung.height <= cam.model_height) continue;
    const YAML::Node size = ladder.IsSequence() && i < ladder.size() ? ladder[i]["size"] : YAML::Node();
    r.problem(size ? size : node, YamlReader::join(where, "ladder[" + std::to_string(i) + "].size"),
              "a rung's size must not exceed model_size " + std::to_string(cam.model_width) + "x" +
                  std::to_string(cam.model_height) + " (frames are captured at model_size)" +
                  (inherited ? "; the ladder is inherited from defaults" : ""));
  }
}

WrittenAt position_of(const YAML::Node& node, std::string key) {
  const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  return {mark.is_null() ? 0 : mark.line + 1, mark.is_null() ? 0 : mark.column + 1, std::move(key)};
}

// Records in `out` where camera `index`'s model and size settings were written (see Config::written).
void note_written(const YAML::Node& camera, const YAML::Node& defaults, const std::string& where, std::size_t index,
                  const CameraConfig& cam, std::map<std::string, WrittenAt>& out) {
  const std::string prefix = "cameras[" + std::to_string(index) + "].";
  const auto note = [&](const std::string& key, std::initializer_list<const char*> keys) {
    if (const YAML::Node own = find_path(camera, keys.begin(), keys.end())) {
      out[prefix + key] = position_of(own, where + "." + key);
    } else if (const YAML::Node inherited = find_path(defaults, keys.begin(), keys.end())) {
      out[prefix + key] = position_of(inherited, "defaults." + key);
    } else {
      out[prefix + key] = position_of(camera, where + "." + key);
    }
  };
  note("model_size", {"model_size"});
  note("edgetap.model", {"edgetap", "model"});
  const char* const ladder_key[] = {"ladder"};
  const bool own_ladder = static_cast<bool>(camera["ladder"]);
  const YAML::Node ladder = find_path(own_ladder ? camera : defaults, ladder_key, ladder_key + 1);
  for (std::size_t j = 0; j < cam.ladder.size() && ladder.IsSequence() && j < ladder.size(); ++j) {
    const std::string rung_key = "ladder[" + std::to_string(j) + "].";
    for (const std::string key : {"size", "model"}) {
      const YAML::Node node = ladder[j][key];
      const std::string shown = (own_ladder ? where : "defaults") + "." + rung_key + key;
      if (node) out[prefix + rung_key + key] = position_of(node, shown);
    }
  }
}

void read_camera(YamlReader& r, const YAML::Node& node, const YAML::Node& defaults, const std::string& path,
                 const std::string& base_dir, CameraConfig& cam) {
  std::vector<std::string> keys = kSettingKeys;
  keys.insert(keys.end(), {"name", "source"});
  if (!r.expect_map(node, path, keys)) return;
  if (!node["name"]) r.problem(node, path, "a camera needs a 'name'");
  r.read_string(node, path, "name", cam.name);
  static const std::regex kName("[A-Za-z0-9_-]{1,64}");
  if (!cam.name.empty() && !std::regex_match(cam.name, kName)) {
    r.problem(node["name"], YamlReader::join(path, "name"),
              "must be 1-64 characters of letters, digits, '_' or '-', got '" + cam.name + "'");
  }
  const std::string where = cam.name.empty() ? path : path + " (camera '" + cam.name + "')";
  if (!node["source"]) {
    r.problem(node, where, "missing 'source' (file://PATH, rtsp://URL, v4l2:///dev/videoN or test:PATTERN)");
  } else {
    std::string uri;
    r.read_string(node, path, "source", uri);
    std::string error;
    if (!uri.empty()) {
      if (auto source = detail::parse_source(uri, base_dir, error)) {
        cam.source = *source;
      } else {
        r.problem(node["source"], YamlReader::join(where, "source"), error);
      }
    }
  }
  apply_settings(r, node, where, cam);
  resolve_model_path(base_dir, cam.edgetap.model);
  for (Rung& rung : cam.ladder) resolve_model_path(base_dir, rung.model);
  check_rung_sizes(r, node, defaults, where, cam);
  if (cam.queries.policy == QueryPolicy::points && cam.queries.points.empty()) {
    r.problem(written_at(node, defaults, {"queries", "policy"}), YamlReader::join(where, "queries.points"),
              "policy 'points' needs at least one point");
  }
}

Config parse(const YAML::Node& root, YamlReader& r, const std::string& name, const std::string& base_dir) {
  Config config;
  config.path = name;
  if (!root || root.IsNull()) {
    r.problem_at(1, 1, "", "the file is empty: it needs at least a 'cameras' list");
    return config;
  }
  if (!r.expect_map(root, "", {"version", "publisher", "control", "metrics", "mqtt", "defaults", "cameras"})) {
    return config;
  }
  if (const YAML::Node c = root["control"]) detail::read_control(r, c, config.control);
  if (const YAML::Node m = root["metrics"]) detail::read_metrics(r, m, config.metrics);
  if (const YAML::Node q = root["mqtt"]) detail::read_mqtt(r, q, config.mqtt);
  int version = 1;
  r.read_int(root, "", "version", 1, 1, version);
  if (const YAML::Node p = root["publisher"]) detail::read_publisher(r, p, config.publisher);
  CameraConfig defaults;
  YAML::Node defaults_node;
  if (const YAML::Node d = root["defaults"]) {
    if (r.expect_map(d, "defaults", kSettingKeys)) {
      apply_settings(r, d, "defaults", defaults);
      defaults_node = d;
    }
  }
  const YAML::Node cameras = root["cameras"];
  // An empty list is a valid file: the daemon starts, says what to edit, and a reload adds cameras.
  if (!cameras || !cameras.IsSequence()) {
    r.problem(cameras ? cameras : root, "cameras", "expected a list of cameras ('cameras: []' for none yet)");
    return config;
  }
  std::map<std::string, int> lines_by_name;
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    CameraConfig cam = defaults;
    cam.line = cameras[i].Mark().line + 1;
    read_camera(r, cameras[i], defaults_node, "cameras[" + std::to_string(i) + "]", base_dir, cam);
    if (cam.name.empty()) continue;
    auto [it, inserted] = lines_by_name.emplace(cam.name, cam.line);
    if (!inserted) {
      r.problem(cameras[i]["name"], "cameras[" + std::to_string(i) + "].name",
                "duplicate camera name '" + cam.name + "' (first defined on line " + std::to_string(it->second) + ")");
    }
    const std::string where = "cameras[" + std::to_string(i) + "] (camera '" + cam.name + "')";
    note_written(cameras[i], defaults_node, where, config.cameras.size(), cam, config.written);
    config.cameras.push_back(std::move(cam));
  }
  return config;
}

}  // namespace

const char* to_string(SourceKind kind) {
  switch (kind) {
    case SourceKind::file: return "file";
    case SourceKind::rtsp: return "rtsp";
    case SourceKind::v4l2: return "v4l2";
    case SourceKind::test: return "test";
  }
  return "?";
}

const char* to_string(QueryPolicy policy) {
  switch (policy) {
    case QueryPolicy::grid: return "grid";
    case QueryPolicy::features: return "features";
    case QueryPolicy::points: return "points";
  }
  return "?";
}

const char* to_string(TrackerKind tracker) {
  switch (tracker) {
    case TrackerKind::edgetap: return "edgetap";
    case TrackerKind::klt: return "klt";
  }
  return "?";
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

std::optional<TrackerKind> tracker_kind(std::string_view name) {
  for (const TrackerKind kind : {TrackerKind::edgetap, TrackerKind::klt}) {
    if (name == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::string Problem::to_string() const {
  std::ostringstream s;
  s << file;
  if (line > 0) s << ":" << line << ":" << column;
  s << ": ";
  if (!key.empty()) s << key << ": ";
  s << message;
  return s.str();
}

ConfigError::ConfigError(std::vector<Problem> problems)
    : std::runtime_error([&] {
        std::string text;
        for (const Problem& p : problems) text += (text.empty() ? "" : "\n") + p.to_string();
        return text;
      }()),
      problems_(std::move(problems)) {}

Config load_string(const std::string& text, const std::string& name, const std::string& base_dir) {
  YamlReader reader(name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    reader.problem_at(e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg);
    throw ConfigError(reader.problems());
  }
  Config config;
  try {
    config = parse(root, reader, name, base_dir);
  } catch (const YAML::Exception& e) {
    // The reads record problems and never throw; should yaml-cpp throw anyway, the file
    // is still rejected as a configuration error (exit 78), never an abort.
    reader.problem_at(e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
                      "cannot read the configuration: " + e.msg);
  }
  if (!reader.problems().empty()) throw ConfigError(reader.problems());
  return config;
}

std::optional<Source> parse_source(const std::string& uri, const std::string& base_dir, std::string& error) {
  return detail::parse_source(uri, base_dir, error);
}

Config load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError({{path, 0, 0, "", "cannot read the file (missing or not readable)"}});
  std::ostringstream text;
  text << in.rdbuf();
  const std::filesystem::path absolute = std::filesystem::absolute(path);
  return load_string(text.str(), path, absolute.parent_path().string());
}

}  // namespace edgetap::config
