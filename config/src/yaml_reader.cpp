#include "yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace edgetap::config::detail {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

template <typename T>
std::string format_range(T lo, T hi) {
  std::ostringstream s;
  s << "[" << lo << ", " << hi << "]";
  return s.str();
}

bool parse_int(const std::string& text, long long& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool parse_double(const std::string& text, double& value) {
  std::istringstream in(text);
  in >> value;
  return !in.fail() && in.eof() && std::isfinite(value);
}

}  // namespace

std::string closest_key(const std::string& key, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const std::string& candidate : valid) {
    const std::size_t d = edit_distance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

void YamlReader::problem(const YAML::Node& at, const std::string& key, const std::string& message) {
  // A node for an absent key has no position and Mark() would throw: reads never throw,
  // so such a problem is still recorded, with its key but without a line.
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  problem_at(mark.is_null() ? 0 : mark.line + 1, mark.is_null() ? 0 : mark.column + 1, key, message);
}

void YamlReader::problem_at(int line, int column, const std::string& key, const std::string& message) {
  problems_.push_back({file_, line, column, key, message});
}

bool YamlReader::expect_map(const YAML::Node& map, const std::string& path,
                            const std::vector<std::string>& valid) {
  if (!map.IsMap()) {
    problem(map, path, "expected a mapping of keys (" + [&] {
      std::string list;
      for (const auto& k : valid) list += (list.empty() ? "" : ", ") + k;
      return list;
    }() + ")");
    return false;
  }
  for (const auto& entry : map) {
    const std::string key = entry.first.as<std::string>("");
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    std::string message = "unknown key '" + key + "'";
    const std::string suggestion = closest_key(key, valid);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    problem(entry.first, join(path, key), message);
  }
  return true;
}

bool YamlReader::scalar(const YAML::Node& node, const std::string& key, const char* expected) {
  if (node.IsScalar()) return true;
  problem(node, key, std::string("expected ") + expected + ", got a " +
                         (node.IsSequence() ? "list" : node.IsMap() ? "mapping" : "null value"));
  return false;
}

void YamlReader::read_int(const YAML::Node& map, const std::string& path, const char* key, int lo, int hi,
                          int& out) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  const std::string expected = "an integer in " + format_range(lo, hi);
  if (!scalar(node, where, expected.c_str())) return;
  long long value = 0;
  if (!parse_int(node.Scalar(), value) || value < lo || value > hi) {
    problem(node, where, "expected " + expected + ", got '" + node.Scalar() + "'");
    return;
  }
  out = static_cast<int>(value);
}

void YamlReader::read_double(const YAML::Node& map, const std::string& path, const char* key, double lo,
                             double hi, double& out) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  const std::string expected = "a number in " + format_range(lo, hi);
  if (!scalar(node, where, expected.c_str())) return;
  double value = 0;
  if (!parse_double(node.Scalar(), value) || value < lo || value > hi) {
    problem(node, where, "expected " + expected + ", got '" + node.Scalar() + "'");
    return;
  }
  out = value;
}

void YamlReader::read_bool(const YAML::Node& map, const std::string& path, const char* key, bool& out) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  if (!scalar(node, where, "true or false")) return;
  const std::string& text = node.Scalar();
  if (text == "true") {
    out = true;
  } else if (text == "false") {
    out = false;
  } else {
    problem(node, where, "expected true or false, got '" + text + "'");
  }
}

void YamlReader::read_string(const YAML::Node& map, const std::string& path, const char* key,
                             std::string& out, bool allow_empty) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  if (!scalar(node, where, "a string")) return;
  if (node.Scalar().empty() && !allow_empty) {
    problem(node, where, "must not be empty");
    return;
  }
  out = node.Scalar();
}

void YamlReader::read_choice(const YAML::Node& map, const std::string& path, const char* key,
                             std::initializer_list<const char*> names, int& out) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  std::string allowed;
  for (const char* name : names) allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  if (!scalar(node, where, ("one of " + allowed).c_str())) return;
  int index = 0;
  for (const char* name : names) {
    if (node.Scalar() == name) {
      out = index;
      return;
    }
    ++index;
  }
  problem(node, where, "expected one of " + allowed + ", got '" + node.Scalar() + "'");
}

void YamlReader::read_int_pair(const YAML::Node& map, const std::string& path, const char* key, int lo,
                               int hi, int& first, int& second) {
  const YAML::Node node = map[key];
  if (!node) return;
  const std::string where = join(path, key);
  const std::string expected = "a list of 2 integers each in " + format_range(lo, hi);
  long long values[2] = {0, 0};
  bool good = node.IsSequence() && node.size() == 2;
  for (std::size_t i = 0; good && i < 2; ++i) {
    good = node[i].IsScalar() && parse_int(node[i].Scalar(), values[i]) && values[i] >= lo && values[i] <= hi;
  }
  if (!good) {
    YAML::Emitter shown;
    shown << YAML::Flow << node;
    problem(node, where, "expected " + expected + ", got '" + std::string(shown.c_str()) + "'");
    return;
  }
  first = static_cast<int>(values[0]);
  second = static_cast<int>(values[1]);
}

}  // namespace edgetap::config::detail
