#include "edgetap/daemon/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace edgetap::daemon {
namespace {

// Owns an fd; closes it once.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }
  bool close() {
    if (fd_ < 0) return true;
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

bool fail(const std::string& what, const std::string& path, std::string& error) {
  error = what + " " + path + ": " + std::strerror(errno);
  return false;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool replace_file_atomically(const std::string& path, const std::string& text, std::string& error) {
  const std::string temp = path + ".tmp";
  Fd file(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
  if (file.get() < 0) return fail("cannot create", temp, error);
  if (!write_all(file.get(), text) || ::fsync(file.get()) != 0 || !file.close()) {
    const int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    return fail("cannot write", temp, error);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    return fail("cannot rename " + temp + " to", path, error);
  }
  // The rename itself is durable only once the directory is on disk.
  const std::string directory = directory_of(path);
  Fd dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || ::fsync(dir.get()) != 0) return fail("cannot sync the directory", directory, error);
  return true;
}

}  // namespace edgetap::daemon
