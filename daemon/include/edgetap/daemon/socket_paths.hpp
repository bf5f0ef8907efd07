// Where the daemon's sockets are, and what to do when one cannot be reached or
// created: the messages an operator sees from `edgetap tail`/`edgetap ctl`
// (connect) and from edgetapd started by hand (listen), naming the group to
// join, the configuration key and the command-line flag that set the path.
#pragma once

#include <string>
#include <vector>

#include "edgetap/config/config.hpp"

namespace edgetap::daemon {

// Socket paths given on the command line (edgetapd --socket, --control-socket).
// They win over the file's at start and on every reload.
struct SocketOverrides {
  std::string track_socket;    // publisher.socket ("" = the file's)
  std::string control_socket;  // control.socket ("" = the file's)

  void apply(config::Config& config) const;
};

// Why a connect() to `path` failed with `error_number` (errno) and what to do,
// e.g. "cannot connect to PATH: Permission denied: the socket is open to group
// 'edgetap' ...". `config_key` names the setting the path comes from
// ("publisher.socket", "control.socket").
std::string connect_problem(const std::string& path, int error_number, const std::string& config_key);

// "" when a socket can be created at `path`; else why not (its directory is
// missing, not a directory, or not writable by this process) and what to do:
// pass `flag` (e.g. "--socket") or set `config_key` in `config_path`.
std::string socket_directory_problem(const std::string& path, const std::string& config_key, const std::string& flag,
                                     const std::string& config_path);

// socket_directory_problem() for the track and control sockets of `config`
// (edgetapd's flags); empty when both can be created.
std::vector<std::string> socket_directory_problems(const config::Config& config);

}  // namespace edgetap::daemon
