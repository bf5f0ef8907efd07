#include "edgetap/eval/gt_json.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "edgetap/eval/query_sampling.hpp"
#include "edgetap/json_input.hpp"

namespace edgetap::eval {
namespace {

using nlohmann::json;

// Validation helpers: each failure names the file and the key path.
struct Checker {
  const std::string& origin;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw DatasetError(origin + ": " + key + " " + what);
  }
  const json& member(const json& object, const char* name, const std::string& key) const {
    const auto it = object.find(name);
    if (it == object.end()) fail(key + name, "is missing");
    return *it;
  }
  double number(const json& value, const std::string& key) const {
    if (!value.is_number()) fail(key, "must be a number, found " + value.dump());
    const double v = value.get<double>();
    if (!std::isfinite(v)) fail(key, "must be finite");
    return v;
  }
  int integer(const json& value, const std::string& key, int min, int max) const {
    const double v = number(value, key);
    if (v != std::floor(v) || v < min || v > max) {
      fail(key, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], found " +
                    value.dump());
    }
    return static_cast<int>(v);
  }
  const json& array(const json& value, const std::string& key, std::size_t size) const {
    if (!value.is_array()) fail(key, "must be an array");
    if (value.size() != size) {
      fail(key, "has " + std::to_string(value.size()) + " entries, expected " + std::to_string(size));
    }
    return value;
  }
};

GtPoint parse_point(const Checker& check, const json& p, const std::string& key, int num_frames) {
  if (!p.is_object()) check.fail(key, "must be an object");
  GtPoint point;
  const auto id = p.find("id");
  point.id = id != p.end() && id->is_string() ? id->get<std::string>() : key;
  const json& xy = check.array(check.member(p, "xy", key + "."), key + ".xy", static_cast<std::size_t>(num_frames));
  const json& visible =
      check.array(check.member(p, "visible", key + "."), key + ".visible", static_cast<std::size_t>(num_frames));
  for (int t = 0; t < num_frames; ++t) {
    const auto i = static_cast<std::size_t>(t);
    const std::string at = "[" + std::to_string(t) + "]";
    GtSample s;
    if (!xy[i].is_null()) {
      check.array(xy[i], key + ".xy" + at, 2);
      s.x = check.number(xy[i][0], key + ".xy" + at + "[0]");
      s.y = check.number(xy[i][1], key + ".xy" + at + "[1]");
      s.has_xy = true;
    }
    if (!visible[i].is_null()) {
      if (!visible[i].is_boolean()) check.fail(key + ".visible" + at, "must be true, false or null");
      s.known = true;
      s.visible = visible[i].get<bool>();
      if (s.visible && !s.has_xy) check.fail(key + ".xy" + at, "is null but the point is visible");
    }
    point.frames.push_back(s);
  }
  if (const auto layer = p.find("layer"); layer != p.end()) {
    point.layer = check.integer(*layer, key + ".layer", 0, 1 << 20);
  }
  if (const auto query = p.find("query"); query != p.end()) {
    check.array(*query, key + ".query", 3);
    point.query_frame = check.integer((*query)[0], key + ".query[0]", 0, num_frames - 1);
    point.query_x = check.number((*query)[1], key + ".query[1]");
    point.query_y = check.number((*query)[2], key + ".query[2]");
  } else {
    const auto first = first_visible_frame(point);
    if (!first) check.fail(key, "has no query and is visible in no frame");
    const GtSample& s = point.frames[static_cast<std::size_t>(*first)];
    point.query_frame = *first;
    point.query_x = s.x;
    point.query_y = s.y;
  }
  return point;
}

}  // namespace

Sequence parse_ground_truth(const std::string& text, const std::string& origin) {
  std::string error;
  const json root = parse_json_input(text, error);
  if (root.is_discarded()) throw DatasetError(origin + ": not valid JSON (" + error + ")");
  const Checker check{origin};
  if (!root.is_object()) check.fail("the top level", "must be an object");
  Sequence seq;
  const json& size = check.array(check.member(root, "size", ""), "size", 2);
  seq.width = check.integer(size[0], "size[0]", 1, 1 << 16);
  seq.height = check.integer(size[1], "size[1]", 1, 1 << 16);
  seq.num_frames = check.integer(check.member(root, "num_frames", ""), "num_frames", 1, 1 << 20);
  const json& points = check.member(root, "points", "");
  if (!points.is_array()) check.fail("points", "must be an array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    seq.points.push_back(parse_point(check, points[i], "points[" + std::to_string(i) + "]", seq.num_frames));
  }
  if (const auto area = root.find("mask_area"); area != root.end() && !area->is_null()) {
    check.array(*area, "mask_area", static_cast<std::size_t>(seq.num_frames));
    for (std::size_t t = 0; t < area->size(); ++t) {
      const json& a = (*area)[t];
      seq.mask_area.push_back(a.is_null() ? 0.0 : check.number(a, "mask_area[" + std::to_string(t) + "]"));
    }
  }
  if (const auto source = root.find("source"); source != root.end() && source->is_string()) {
    seq.source = source->get<std::string>();
  }
  return seq;
}

Sequence read_ground_truth(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "gt.json";
  std::ifstream in(path);
  if (!in) throw DatasetError(path.string() + ": cannot be opened (is " + dir.string() + " a sequence folder?)");
  std::ostringstream text;
  text << in.rdbuf();
  Sequence seq = parse_ground_truth(text.str(), path.string());
  seq.dir = dir;
  seq.name = dir.filename().string();
  if (seq.name.empty()) seq.name = dir.parent_path().filename().string();  // "path/seq/"
  return seq;
}

std::string format_ground_truth(const Sequence& sequence) {
  auto rounded = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  json root;
  root["size"] = {sequence.width, sequence.height};
  root["num_frames"] = sequence.num_frames;
  if (!sequence.source.empty()) root["source"] = sequence.source;
  json points = json::array();
  for (const GtPoint& p : sequence.points) {
    json xy = json::array(), visible = json::array();
    for (const GtSample& s : p.frames) {
      xy.push_back(s.has_xy ? json{rounded(s.x), rounded(s.y)} : json(nullptr));
      visible.push_back(s.known ? json(s.visible) : json(nullptr));
    }
    json point = {{"id", p.id}, {"query", {p.query_frame, rounded(p.query_x), rounded(p.query_y)}}, {"xy", xy},
                  {"visible", visible}};
    if (p.layer >= 0) point["layer"] = p.layer;
    points.push_back(std::move(point));
  }
  root["points"] = std::move(points);
  if (!sequence.mask_area.empty()) root["mask_area"] = sequence.mask_area;
  return root.dump() + "\n";
}

}  // namespace edgetap::eval
