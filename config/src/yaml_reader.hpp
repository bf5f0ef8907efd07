// Typed, validating reads from yaml-cpp nodes. Every failed read records a
// Problem with the node's line and column and the dotted key path; reads never
// throw, so one pass finds every problem in a file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "edgetap/config/load.hpp"

namespace edgetap::config::detail {

// The valid key closest to `key` by edit distance, or "" when none is close.
std::string closest_key(const std::string& key, const std::vector<std::string>& valid);

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  void problem(const YAML::Node& at, const std::string& key, const std::string& message);
  void problem_at(int line, int column, const std::string& key, const std::string& message);
  const std::vector<Problem>& problems() const noexcept { return problems_; }

  // Records an error for every key of `map` not in `valid`, suggesting the closest.
  // Returns false (and records an error) when `map` is not a map.
  bool expect_map(const YAML::Node& map, const std::string& path, const std::vector<std::string>& valid);

  // Each read_* leaves `out` unchanged when the key is absent or the value bad.
  void read_int(const YAML::Node& map, const std::string& path, const char* key, int lo, int hi, int& out);
  void read_double(const YAML::Node& map, const std::string& path, const char* key, double lo, double hi,
                   double& out);
  void read_bool(const YAML::Node& map, const std::string& path, const char* key, bool& out);
  // `allow_empty`: "" is a valid value (an optional path, say).
  void read_string(const YAML::Node& map, const std::string& path, const char* key, std::string& out,
                   bool allow_empty = false);
  // Reads one of `names`; stores the index of the match.
  void read_choice(const YAML::Node& map, const std::string& path, const char* key,
                   std::initializer_list<const char*> names, int& out);
  // Reads a two-element list of integers each in [lo, hi].
  void read_int_pair(const YAML::Node& map, const std::string& path, const char* key, int lo, int hi,
                     int& first, int& second);

  // Reads a list of maps with keys from `valid` into `out`, which the list replaces whole:
  // `read_item(item, item_path, index)` returns one element. An item that is not a map or has
  // unknown keys is reported and left out; a value that is not a list is reported with
  // `expected` and leaves `out` unchanged.
  template <class T, class ReadItem>
  void read_map_list(const YAML::Node& list, const std::string& path, const std::string& expected,
                     const std::vector<std::string>& valid, std::vector<T>& out, ReadItem read_item) {
    if (!list.IsSequence()) {
      problem(list, path, expected);
      return;
    }
    std::vector<T> items;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node item = list[i];
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (expect_map(item, at, valid)) items.push_back(read_item(item, at, i));
    }
    out = std::move(items);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  bool scalar(const YAML::Node& node, const std::string& key, const char* expected);

  std::string file_;
  std::vector<Problem> problems_;
};

}  // namespace edgetap::config::detail
