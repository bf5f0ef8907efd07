// Result of an operation on the per-frame path: a code plus a human message.
// The per-frame path is noexcept and returns Status; exceptions are for start-up.
#pragma once

#include <string>
#include <utility>

namespace edgetap {

class Status {
 public:
  enum class Code { ok, invalid_argument, bad_frame, internal };

  Status() = default;
  static Status ok() { return {}; }
  static Status error(Code code, std::string message) { return Status(code, std::move(message)); }

  bool is_ok() const noexcept { return code_ == Code::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  Code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::ok;
  std::string message_;
};

}  // namespace edgetap
