// CPU time of some of this process's threads, for tests that bound what a
// component's own threads use while others (libraries' workers) run beside them.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace edgetap::test {

// The threads of this process now (their ids, from /proc/self/task).
inline std::set<long> thread_ids() {
  std::set<long> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ids.insert(std::stol(entry.path().filename()));
  return ids;
}

// CPU seconds (user + system) used by the threads of this process that are not in `before`:
// the publisher's own, when `before` was taken just ahead of its start. Counting the whole
// process also counted other threads that happen to run in the window (OpenBLAS's workers spin
// with sched_yield for a while after they start), which made a quiet publisher look busy.
// The threads' stat files are opened at construction, so reading them needs no new fd (the
// test reads them while every fd is in use).
class ThreadCpu {
 public:
  explicit ThreadCpu(const std::set<long>& before) {
    for (long id : thread_ids()) {
      if (before.count(id) != 0) continue;
      const int fd = ::open(("/proc/self/task/" + std::to_string(id) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds_.push_back(fd);
    }
  }
  ThreadCpu(const ThreadCpu&) = delete;
  ThreadCpu& operator=(const ThreadCpu&) = delete;
  ~ThreadCpu() {
    for (int fd : fds_) ::close(fd);
  }
  std::size_t threads() const { return fds_.size(); }

  double seconds() const {
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    double total = 0;
    for (int fd : fds_) {
      char text[1024];
      const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
      if (n <= 0) continue;  // the thread ended
      text[n] = '\0';
      const char* after_name = std::strrchr(text, ')');
      if (after_name == nullptr) continue;
      // Fields 14 and 15: utime, stime (ticks); field 3 follows the name's ')'. Read without
      // streams: under UBSan a stream's dynamic type check needs a pipe, which a process out
      // of fds cannot make, and the stream is then reported as a bad object.
      const char* cursor = after_name + 1;
      for (int field = 3; field < 14; ++field) {
        while (*cursor == ' ') ++cursor;
        while (*cursor != ' ' && *cursor != '\0') ++cursor;
      }
      char* end = nullptr;
      const unsigned long long utime = std::strtoull(cursor, &end, 10);
      const unsigned long long stime = std::strtoull(end, nullptr, 10);
      total += static_cast<double>(utime + stime) / tick;
    }
    return total;
  }

 private:
  std::vector<int> fds_;
};

}  // namespace edgetap::test
