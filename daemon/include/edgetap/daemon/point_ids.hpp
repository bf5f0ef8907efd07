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

// The longest id accepted, in bytes of UTF-8.
inline constexpr std::size_t kMaxPointIdBytes = 64;

// "" when `id` is acceptable, else why not (naming the offending character as U+XXXX).
std::string point_id_problem(std::string_view id);

}  // namespace edgetap::daemon
