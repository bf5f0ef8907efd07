// What to do when one of the daemon's sockets cannot be reached: the messages an
// operator sees from `edgetap tail` and `edgetap ctl`, naming the group to join,
// the configuration key and the command-line flag that set the path.
#pragma once

#include <string>

namespace edgetap::daemon {

// Why a connect() to `path` failed with `error_number` (errno) and what to do,
// e.g. "cannot connect to PATH: Permission denied: the socket is open to group
// 'edgetap' ...". `config_key` names the setting the path comes from
// ("publisher.socket", "control.socket").
std::string connect_problem(const std::string& path, int error_number, const std::string& config_key);

}  // namespace edgetap::daemon
