#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vector>

namespace edgetap::test {

// Uses up every fd this process may open (the soft limit lowered to a little above what is
// open, then filled), until it goes out of scope.
struct FdsExhausted {
  rlimit saved{};
  std::vector<int> held;
  FdsExhausted() {
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(::open("/dev/null", O_RDONLY | O_CLOEXEC)) + 64;
    held.push_back(static_cast<int>(low.rlim_cur) - 64);
    ::setrlimit(RLIMIT_NOFILE, &low);
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held.push_back(fd);
  }
  ~FdsExhausted() {
    for (const int fd : held) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved);
  }
};

}  // namespace edgetap::test
