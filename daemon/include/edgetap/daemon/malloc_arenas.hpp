// glibc's malloc gives threads arenas of their own, up to 8 per core, and
// never gives an arena back. A camera restart (a reload that changes a camera,
// a live source reconnecting) ends threads and starts new ones (the tracking
// thread, the bus thread, GStreamer's streaming threads), whose allocations
// (one frame buffer per captured frame among them) then land in other arenas,
// each keeping its high-water mark and fragments: RSS creeps up with restarts
// though nothing leaks. docs/RELIABILITY.md ("Soak") has the measurements.
#pragma once

namespace edgetap::daemon {

// The most arenas a long-running program uses (the main one included).
inline constexpr int kMallocArenas = 2;

// Caps glibc's arenas at kMallocArenas, unless the environment already chose
// (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in GLIBC_TUNABLES): an operator's
// setting wins. Call before the program starts threads. False where the C
// library refused (not glibc, or a sanitizer's allocator).
bool limit_malloc_arenas();

}  // namespace edgetap::daemon
