// Numbers given on the command line: the whole text must be a number within the
// option's range, so that "--iters 4x" or "--grid abc" is an error, not 4 or 0.
#pragma once

#include <string>

namespace edgetap::daemon {

// On failure both print "<command>: <option> must be ..., not '<text>'" to stderr
// and return false; `out` is then unchanged.
bool read_int_option(const char* command, const std::string& option, const char* text, long lo, long hi, long& out);
bool read_int_option(const char* command, const std::string& option, const char* text, int lo, int hi, int& out);
bool read_real_option(const char* command, const std::string& option, const char* text, double lo, double hi,
                      double& out);
bool read_seconds_option(const char* command, const std::string& option, const char* text, double lo, double hi,
                         double& out);

}  // namespace edgetap::daemon
