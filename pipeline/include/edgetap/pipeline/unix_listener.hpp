// Opens a listening Unix stream socket at a path: a socket file left behind by
// a dead process is replaced, one that a live process still serves is not.
#pragma once

#include <string>

namespace edgetap::pipeline {

// Returns a non-blocking listening fd (mode `mode` on the socket file), or -1 with `error`.
int listen_unix(const std::string& path, unsigned mode, std::string& error);

}  // namespace edgetap::pipeline
