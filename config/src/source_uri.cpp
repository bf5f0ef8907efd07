#include "source_uri.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <string_view>

namespace edgetap::config::detail {
namespace {

// The videotestsrc patterns (GStreamer 1.22 nicks).
constexpr std::array<std::string_view, 25> kTestPatterns = {
    "smpte",  "snow",    "black",    "white",       "red",       "green",     "blue",
    "checkers-1", "checkers-2", "checkers-4", "checkers-8", "circular", "blink", "smpte75",
    "zone-plate", "gamut", "chroma-zone-plate", "solid-color", "ball", "smpte100", "bar",
    "pinwheel", "spokes", "gradient", "colors"};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool parse_option(std::string_view key, std::string_view value, Source& source, std::string& error) {
  int number = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    error = "test source option '" + std::string(key) + "' needs an integer, got '" + std::string(value) + "'";
    return false;
  }
  struct Range { std::string_view name; int lo, hi; int Source::*field; };
  const std::array<Range, 4> options = {{{"width", 16, 4096, &Source::test_width},
                                         {"height", 16, 4096, &Source::test_height},
                                         {"fps", 1, 240, &Source::test_fps},
                                         {"speed", -256, 256, &Source::test_speed}}};
  for (const Range& option : options) {
    if (option.name != key) continue;
    if (number < option.lo || number > option.hi) {
      error = "test source option '" + std::string(key) + "' must be in [" + std::to_string(option.lo) + ", " +
              std::to_string(option.hi) + "], got " + std::to_string(number);
      return false;
    }
    source.*option.field = number;
    return true;
  }
  error = "unknown test source option '" + std::string(key) + "' (allowed: width, height, fps, speed)";
  return false;
}

bool parse_test(std::string_view spec, Source& source, std::string& error) {
  const std::size_t question = spec.find('?');
  const std::string_view pattern = spec.substr(0, question);
  if (std::find(kTestPatterns.begin(), kTestPatterns.end(), pattern) == kTestPatterns.end()) {
    error = "unknown test pattern '" + std::string(pattern) + "' (e.g. ball, snow, pinwheel, checkers-8, smpte)";
    return false;
  }
  source.location = std::string(pattern);
  std::string_view options = question == std::string_view::npos ? "" : spec.substr(question + 1);
  while (!options.empty()) {
    const std::size_t amp = options.find('&');
    const std::string_view item = options.substr(0, amp);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      error = "test source option '" + std::string(item) + "' needs the form key=value";
      return false;
    }
    if (!parse_option(item.substr(0, eq), item.substr(eq + 1), source, error)) return false;
    options = amp == std::string_view::npos ? "" : options.substr(amp + 1);
  }
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A file URI's path with its percent-escapes decoded (RFC 3986: "%20" is a space,
// "%25" a '%'); nullopt with `error` for a '%' not followed by two hex digits, or
// for "%00" (no file name holds a NUL byte).
std::optional<std::string> percent_decoded(std::string_view text, std::string& error) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const int high = i + 1 < text.size() ? hex_digit(text[i + 1]) : -1;
    const int low = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
    if (high < 0 || low < 0) {
      error = "malformed percent-escape '" + std::string(text.substr(i, 3)) +
              "' in the file:// path: '%' starts an escape of two hex digits, such as %20 for a space; "
              "write %25 for a '%' itself";
      return std::nullopt;
    }
    if (high == 0 && low == 0) {
      error = "the file:// path holds %00, a NUL byte, which no file name can hold";
      return std::nullopt;
    }
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

}  // namespace

std::optional<Source> parse_source(const std::string& uri, const std::string& base_dir, std::string& error) {
  Source source;
  source.uri = uri;
  if (starts_with(uri, "file://")) {
    const std::optional<std::string> decoded = percent_decoded(std::string_view(uri).substr(7), error);
    if (!decoded) return std::nullopt;
    std::filesystem::path path(*decoded);
    if (path.empty()) {
      error = "file:// needs a path";
      return std::nullopt;
    }
    if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
    source.kind = SourceKind::file;
    source.location = path.lexically_normal().string();
  } else if (starts_with(uri, "rtsp://") || starts_with(uri, "rtsps://")) {
    if (uri.find("://") + 3 >= uri.size()) {
      error = "RTSP URL needs a host";
      return std::nullopt;
    }
    source.kind = SourceKind::rtsp;
    source.location = uri;
  } else if (starts_with(uri, "v4l2://") || starts_with(uri, "/dev/video")) {
    source.kind = SourceKind::v4l2;
    source.location = starts_with(uri, "v4l2://") ? uri.substr(7) : uri;
    if (!starts_with(source.location, "/dev/")) {
      error = "V4L2 source needs a device path such as v4l2:///dev/video0";
      return std::nullopt;
    }
  } else if (starts_with(uri, "test:")) {
    source.kind = SourceKind::test;
    if (!parse_test(std::string_view(uri).substr(5), source, error)) return std::nullopt;
  } else {
    error = "unsupported source '" + uri +
            "' (expected file://PATH, rtsp://URL, v4l2:///dev/videoN, /dev/videoN or test:PATTERN)";
    return std::nullopt;
  }
  return source;
}

}  // namespace edgetap::config::detail
