#include "edgetap/daemon/socket_paths.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace edgetap::daemon {
namespace {

std::string directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string user_name() {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  ::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found);
  return found != nullptr ? found->pw_name : std::to_string(::geteuid());
}

bool in_group(gid_t gid) {
  if (::getegid() == gid) return true;
  std::vector<gid_t> groups(static_cast<std::size_t>(std::max(0, ::getgroups(0, nullptr))));
  const int n = ::getgroups(static_cast<int>(groups.size()), groups.data());
  return std::find(groups.begin(), groups.begin() + std::max(0, n), gid) != groups.begin() + std::max(0, n);
}

// Whose group `gid` is, and whether `user` is listed as a member in the group
// database (e.g. added by adduser after this login began).
std::string group_name(gid_t gid, const std::string& user, bool& listed) {
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(65536);
  ::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found);
  listed = false;
  if (found == nullptr) return std::to_string(gid);
  for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member) listed |= user == *member;
  return found->gr_name;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// EACCES: the socket file (or, when that cannot even be looked at, its directory)
// is gated by a group; say which and how to join it.
std::string permission_hint(const std::string& path, const std::string& config_key) {
  struct stat st{};
  std::string gated = path;
  if (::stat(path.c_str(), &st) != 0) {
    gated = directory_of(path);
    if (::stat(gated.c_str(), &st) != 0) return "";
  }
  const std::string user = user_name();
  bool listed = false;
  const std::string group = group_name(st.st_gid, user, listed);
  if (in_group(st.st_gid)) {
    return "you are in group '" + group + "', but " + gated + " (mode " + octal_mode(st.st_mode) +
           ") does not let the group in (the daemon makes its sockets 0660, group " +
           config_key.substr(0, config_key.find('.')) + ".group or its own)";
  }
  if (listed) {
    return "user '" + user + "' was added to group '" + group + "' after this login began: log out and back in, " +
           "or run `newgrp " + group + "` in this shell";
  }
  return gated + " is open to members of group '" + group + "', and user '" + user + "' is not one: " +
         "`sudo adduser $USER " + group + "`, then log out and back in (or run `newgrp " + group + "`)";
}

std::string missing_hint(const std::string& path, const std::string& config_key) {
  const std::string dir = directory_of(path);
  struct stat st{};
  const std::string where = ::stat(dir.c_str(), &st) != 0
                                ? "its directory " + dir + " does not exist either (systemd creates it when it "
                                                           "starts the edgetapd service)"
                                : "no socket file there";
  return where + ": is edgetapd running? (`systemctl status edgetapd`); the daemon listens where " + config_key +
         " of its configuration says; pass --socket PATH to use another";
}

}  // namespace

void SocketOverrides::apply(config::Config& config) const {
  if (!track_socket.empty()) config.publisher.socket_path = track_socket;
  if (!control_socket.empty()) config.control.socket_path = control_socket;
}

std::string connect_problem(const std::string& path, int error_number, const std::string& config_key) {
  std::string message = "cannot connect to " + path + ": " + std::strerror(error_number);
  std::string hint;
  if (error_number == EACCES || error_number == EPERM) hint = permission_hint(path, config_key);
  if (error_number == ENOENT) hint = missing_hint(path, config_key);
  if (error_number == ECONNREFUSED) {
    hint = "the socket file is there but nothing listens on it: edgetapd stopped or crashed "
           "(`systemctl status edgetapd`, `journalctl -u edgetapd`)";
  }
  return hint.empty() ? message : message + ": " + hint;
}

std::string socket_directory_problem(const std::string& path, const std::string& config_key, const std::string& flag,
                                     const std::string& config_path) {
  if (path.empty()) return "";
  const std::string dir = directory_of(path);
  struct stat st{};
  std::string problem;
  if (::stat(dir.c_str(), &st) != 0) {
    const int stat_errno = errno;
    problem = "its directory " + dir + (stat_errno == ENOENT ? " does not exist" : " cannot be looked at: ") +
              (stat_errno == ENOENT ? "" : std::strerror(stat_errno));
    if (dir == "/run/edgetap") problem += " (systemd makes it for the edgetapd service: RuntimeDirectory=edgetap)";
  } else if (!S_ISDIR(st.st_mode)) {
    problem = dir + " is not a directory";
  } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    problem = "user '" + user_name() + "' cannot create files in " + dir + " (" + std::strerror(errno) + ")";
  } else {
    return "";
  }
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string writable = runtime != nullptr && *runtime != '\0' ? runtime : "/tmp";
  return "cannot create the socket " + path + " (" + config_key + "): " + problem +
         "; to run outside the service, pass " + flag + " " + writable + "/" +
         std::filesystem::path(path).filename().string() + " (or set " + config_key + " in " + config_path +
         ") for a directory you can write";
}

std::vector<std::string> socket_directory_problems(const config::Config& config) {
  std::vector<std::string> problems;
  for (const std::string& problem :
       {socket_directory_problem(config.publisher.socket_path, "publisher.socket", "--socket", config.path),
        socket_directory_problem(config.control.socket_path, "control.socket", "--control-socket", config.path)}) {
    if (!problem.empty()) problems.push_back(problem);
  }
  return problems;
}

}  // namespace edgetap::daemon
