#include "edgetap/publish/unix_listener.hpp"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace edgetap::pipeline {
namespace {

bool group_id(const std::string& name, gid_t& gid, std::string& error) {
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  const int rc = ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    error = "no group '" + name + "'" + (rc != 0 ? std::string(": ") + std::strerror(rc) : "");
    return false;
  }
  gid = entry.gr_gid;
  return true;
}

// bind() with the umask that leaves exactly `mode`, whatever umask the process
// was started with. The umask belongs to the whole process: the mutex keeps two
// listeners from interleaving; a file another thread created during this one
// call would get the stricter mask too (it only ever removes permissions).
int bind_with_mode(int fd, const sockaddr_un& addr, unsigned mode) {
  static std::mutex umask_mutex;
  std::lock_guard lock(umask_mutex);
  const mode_t saved = ::umask(static_cast<mode_t>(~mode & 0777));
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  ::umask(saved);
  errno = bind_errno;
  return rc;
}

}  // namespace

int listen_unix(const std::string& path, unsigned mode, const std::string& group, std::string& error) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    error = "socket path too long (max " + std::to_string(sizeof(addr.sun_path) - 1) + " bytes): " + path;
    return -1;
  }
  gid_t gid = 0;
  if (!group.empty() && !group_id(group, gid, error)) {
    error = "cannot listen on " + path + ": " + error;
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool taken = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(probe);
    if (taken) {
      error = "another process is already serving " + path;
      return -1;
    }
    ::unlink(path.c_str());
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket(): ") + std::strerror(errno);
    return -1;
  }
  if (bind_with_mode(fd, addr, mode) != 0) {
    error = "cannot listen on " + path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!group.empty() && ::chown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    error = "cannot give " + path + " to group '" + group + "': " + std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return -1;
  }
  if (::listen(fd, 64) != 0) {
    error = "cannot listen on " + path + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return -1;
  }
  return fd;
}

}  // namespace edgetap::pipeline
