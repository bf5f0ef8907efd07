#include "edgetap/cli/option_numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace edgetap::daemon {

namespace {

template <typename T>
bool parse_whole(const char* text, T& value) {
  const char* end = text + std::strlen(text);
  const auto [stop, ec] = std::from_chars(text, end, value);
  return ec == std::errc{} && stop == end && stop != text;
}

}  // namespace

bool read_int_option(const char* command, const std::string& option, const char* text, long lo, long hi, long& out) {
  long value = 0;
  if (!parse_whole(text, value) || value < lo || value > hi) {
    std::fprintf(stderr, "%s: %s must be an integer %ld..%ld, not '%s'\n", command, option.c_str(), lo, hi, text);
    return false;
  }
  out = value;
  return true;
}

bool read_int_option(const char* command, const std::string& option, const char* text, int lo, int hi, int& out) {
  long value = 0;
  if (!read_int_option(command, option, text, static_cast<long>(lo), static_cast<long>(hi), value)) return false;
  out = static_cast<int>(value);
  return true;
}

namespace {

// A finite number of `what` (e.g. "seconds ") within [lo, hi].
bool read_finite_option(const char* command, const std::string& option, const char* text, double lo, double hi,
                        const char* what, double& out) {
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value) || value < lo || value > hi) {
    std::fprintf(stderr, "%s: %s must be %s%g..%g, not '%s'\n", command, option.c_str(), what, lo, hi, text);
    return false;
  }
  out = value;
  return true;
}

}  // namespace

bool read_real_option(const char* command, const std::string& option, const char* text, double lo, double hi,
                      double& out) {
  return read_finite_option(command, option, text, lo, hi, "a number ", out);
}

bool read_seconds_option(const char* command, const std::string& option, const char* text, double lo, double hi,
                         double& out) {
  return read_finite_option(command, option, text, lo, hi, "seconds ", out);
}

}  // namespace edgetap::daemon
