// A helper program run by a test: started with fork/exec, its first line of
// stdout read back, and killed (SIGKILL) when the object goes away.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace edgetap::test {

class ChildProcess {
 public:
  // Starts `argv[0]`; when `wait_for_line`, waits up to 10 s for its first line of stdout.
  explicit ChildProcess(const std::vector<std::string>& argv, bool wait_for_line = true);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& first_line() const noexcept { return first_line_; }
  void kill();

 private:
  pid_t pid_ = -1;
  std::string first_line_;
};

}  // namespace edgetap::test
