// Progress on stderr: on a terminal one line rewritten in place (at most ten
// times a second); otherwise only the finished lines, so logs stay readable.
#pragma once

#include <chrono>
#include <string>

namespace edgetap::eval {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const std::string& text);  // a transient status
  void finish(const std::string& text);  // a line that stays

 private:
  bool enabled_;
  bool terminal_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace edgetap::eval
