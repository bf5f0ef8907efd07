// Opens a listening Unix stream socket at a path: a socket file left behind by
// a dead process is replaced, one that a live process still serves is not.
#pragma once

#include <string>

namespace edgetap::pipeline {

// Returns a non-blocking listening fd, or -1 with `error`. The socket file is
// created with `mode` (the umask is set around bind(), so no other mode is ever
// visible) and, when `group` is not empty, given to that group before it
// listens: no connection is accepted before the file is as configured.
int listen_unix(const std::string& path, unsigned mode, const std::string& group, std::string& error);

}  // namespace edgetap::pipeline
