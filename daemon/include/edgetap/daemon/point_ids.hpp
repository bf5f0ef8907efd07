// What a track id sent over the control socket may be. Ids are echoed in every
// track message, the logs and the replies, so they are short and printable: no
// control characters (NUL, newline, escape, ...) and no bidirectional-text
// controls (U+202E and the like), which would make a log line or a display
// read differently from what it holds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace edgetap::daemon {

// "" when `id` is acceptable, else why not (naming the offending character as
// U+XXXX, or the length when it is over `max_bytes`: control.max_id_bytes).
std::string point_id_problem(std::string_view id, std::size_t max_bytes);

}  // namespace edgetap::daemon
