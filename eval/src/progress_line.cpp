#include "edgetap/eval/progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace edgetap::eval {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), terminal_(isatty(STDERR_FILENO) == 1) {}

void ProgressLine::update(const std::string& text) {
  if (!enabled_ || !terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (dirty_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  dirty_ = true;
}

void ProgressLine::finish(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s%s\n", terminal_ ? "\r\033[K" : "", text.c_str());
  std::fflush(stderr);
  dirty_ = false;
}

}  // namespace edgetap::eval
