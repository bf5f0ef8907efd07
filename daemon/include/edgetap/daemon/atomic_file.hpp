// Replacing a file so that a reader (or the next start after a crash or power
// loss) sees either the old content or the new, never a mix: the text goes to
// PATH.tmp, is fsync'ed, renamed over PATH, and the directory is fsync'ed.
#pragma once

#include <string>

namespace edgetap::daemon {

// False, with the reason (naming the file), when a step fails: PATH is then unchanged,
// except where only the final directory sync failed (the new text is in place, not yet durable).
bool replace_file_atomically(const std::string& path, const std::string& text, std::string& error);

}  // namespace edgetap::daemon
