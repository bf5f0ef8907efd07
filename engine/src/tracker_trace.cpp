#include "edgetap/tracker_trace.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "edgetap/json_input.hpp"

namespace edgetap::trace {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;  // writes "pass" and "op" first, as documented

constexpr int kMaxPasses = 1'000'000;  // bounds what a bad line can make us allocate
constexpr int kMaxFrameSide = 65536;

const json& member(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw TraceError(std::string("missing \"") + key + "\"");
  return *it;
}

int integer(const json& j, const char* key, int lo, int hi) {
  const json& v = member(j, key);
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
    throw TraceError(std::string("\"") + key + "\" must be an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], not " + v.dump());
  }
  return static_cast<int>(v.get<long long>());
}

// A float written by format_call: a number, or null for a non-finite one.
float number(const json& j, const char* key) {
  const json& v = member(j, key);
  if (v.is_null()) return std::numeric_limits<float>::quiet_NaN();
  const double d = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number() || std::abs(d) > std::numeric_limits<float>::max()) {
    throw TraceError(std::string("\"") + key + "\" must be a float, not " + v.dump());
  }
  return static_cast<float>(d);
}

std::string text(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_string()) throw TraceError(std::string("\"") + key + "\" must be a string, not " + v.dump());
  return v.get<std::string>();
}

bool flag(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_boolean()) throw TraceError(std::string("\"") + key + "\" must be true or false, not " + v.dump());
  return v.get<bool>();
}

const json& array(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_array()) throw TraceError(std::string("\"") + key + "\" must be an array");
  return v;
}

// Finite numbers as themselves (nlohmann writes the shortest round-trip form); others null.
ordered float_value(float v) { return std::isfinite(v) ? ordered(v) : ordered(nullptr); }

// A frame file stays inside the trace's folder.
bool contained(const std::string& file) {
  const std::filesystem::path p(file);
  if (file.empty() || p.is_absolute()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

Op op_named(const std::string& name) {
  if (name == "add_queries") return Op::add_queries;
  if (name == "remove_queries") return Op::remove_queries;
  if (name == "push_frame") return Op::push_frame;
  throw TraceError("unknown \"op\" \"" + name + "\"");
}

TrackPoint parse_point(const json& p) {
  if (!p.is_object()) throw TraceError("a point must be an object");
  return {text(p, "id"), number(p, "x"), number(p, "y"), flag(p, "visible"), number(p, "confidence"), flag(p, "lost")};
}

void parse_push(const json& j, Call& c) {
  c.frame = integer(j, "frame", 0, std::numeric_limits<int>::max());
  c.file = text(j, "file");
  if (!contained(c.file)) throw TraceError("\"file\" must be a path inside the trace's folder, not '" + c.file + "'");
  c.width = integer(j, "width", 1, kMaxFrameSide);
  c.height = integer(j, "height", 1, kMaxFrameSide);
  if (j.contains("points")) {
    std::vector<TrackPoint> points;
    for (const json& p : array(j, "points")) points.push_back(parse_point(p));
    c.points = std::move(points);
  }
}

}  // namespace

const char* to_string(Op op) noexcept {
  switch (op) {
    case Op::add_queries: return "add_queries";
    case Op::remove_queries: return "remove_queries";
    case Op::push_frame: return "push_frame";
  }
  return "?";
}

std::string format_call(const Call& call) {
  ordered j = {{"pass", call.pass}, {"op", to_string(call.op)}};
  switch (call.op) {
    case Op::add_queries: {
      ordered queries = ordered::array();
      for (const Query& q : call.queries) queries.push_back({{"id", q.id}, {"x", float_value(q.x)}, {"y", float_value(q.y)}});
      j["queries"] = std::move(queries);
      break;
    }
    case Op::remove_queries:
      j["ids"] = call.ids;
      break;
    case Op::push_frame:
      j["frame"] = call.frame;
      j["file"] = call.file;
      j["width"] = call.width;
      j["height"] = call.height;
      if (call.points) {
        ordered points = ordered::array();
        for (const TrackPoint& p : *call.points) {
          points.push_back({{"id", p.id}, {"x", float_value(p.x)}, {"y", float_value(p.y)}, {"visible", p.visible},
                            {"confidence", float_value(p.confidence)}, {"lost", p.lost}});
        }
        j["points"] = std::move(points);
      }
      break;
  }
  // Ids come from the caller: replace invalid UTF-8 rather than throw.
  return j.dump(-1, ' ', false, ordered::error_handler_t::replace);
}

Call parse_call(std::string_view line) {
  std::string error;
  const json j = parse_json_input(line, error);
  if (j.is_discarded()) throw TraceError("not a JSON line (" + error + ")");
  if (!j.is_object()) throw TraceError("a line must be a JSON object");
  Call c;
  c.pass = integer(j, "pass", 0, kMaxPasses - 1);
  c.op = op_named(text(j, "op"));
  switch (c.op) {
    case Op::add_queries:
      for (const json& q : array(j, "queries")) {
        if (!q.is_object()) throw TraceError("a query must be an object");
        c.queries.push_back({text(q, "id"), number(q, "x"), number(q, "y")});
      }
      break;
    case Op::remove_queries:
      for (const json& id : array(j, "ids")) {
        if (!id.is_string()) throw TraceError("\"ids\" must hold strings, not " + id.dump());
        c.ids.push_back(id.get<std::string>());
      }
      break;
    case Op::push_frame:
      parse_push(j, c);
      break;
  }
  return c;
}

std::string where(const Trace& trace, const Call& call) {
  return trace.file.string() + ":" + std::to_string(call.line) + ": pass " + std::to_string(call.pass) + ": ";
}

Trace read_trace(const std::filesystem::path& file, bool answered) {
  std::ifstream in(file);
  if (!in) throw TraceError(file.string() + ": cannot read the trace");
  Trace trace{file, {}};
  std::vector<int> pushes;  // per pass
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Call call;
    try {
      call = parse_call(line);
    } catch (const TraceError& e) {
      throw TraceError(file.string() + ":" + std::to_string(number) + ": " + e.what());
    }
    call.line = number;
    const auto p = static_cast<std::size_t>(call.pass);
    if (p >= trace.passes.size()) {
      trace.passes.resize(p + 1);
      pushes.resize(p + 1, 0);
    }
    if (call.op == Op::push_frame) {
      if (call.frame != pushes[p]) {
        throw TraceError(where(trace, call) + "push_frame \"frame\" " + std::to_string(call.frame) + ", expected " +
                         std::to_string(pushes[p]));
      }
      if (answered && !call.points) {
        throw TraceError(where(trace, call) + "push_frame without \"points\": not an answered trace "
                                              "(edgetap-trace-run writes those)");
      }
      ++pushes[p];
    }
    trace.passes[p].push_back(std::move(call));
  }
  if (in.bad()) throw TraceError(file.string() + ": read error");
  return trace;
}

}  // namespace edgetap::trace
