#include "support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace edgetap::test {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, bool wait_for_line) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(wait_for_line ? out[1] : ::open("/dev/null", O_WRONLY), STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  if (!wait_for_line) {
    ::close(out[0]);
    return;
  }
  pollfd pfd{out[0], POLLIN, 0};
  char c = 0;
  while (::poll(&pfd, 1, 10000) > 0 && ::read(out[0], &c, 1) == 1 && c != '\n') first_line_ += c;
  ::close(out[0]);
  if (first_line_.empty()) {
    kill();
    throw std::runtime_error("no output from " + argv[0]);
  }
}

ChildProcess::~ChildProcess() { kill(); }

void ChildProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace edgetap::test
