// glibc's malloc gives threads arenas of their own, up to 8 per core, and
// never gives an arena back. A camera restart (a reload that changes a camera,
// a live source reconnecting) ends threads and starts new ones (the tracking
// thread, the bus thread, GStreamer's streaming threads), whose allocations
// (one frame buffer per captured frame among them) then land in other arenas,
// each keeping its high-water mark and fragments: RSS creeps up with restarts
// though nothing leaks. docs/RELIABILITY.md ("Soak") has the measurements.
#pragma once

namespace edgetap::daemon {

// Arenas per core: one. More only add RSS (threads beyond the cores do not
// run at once); fewer make threads wait on each other's malloc: with 2 arenas,
// 16 cameras on a 16-core GPU host spent 10.4 cores (8.1 of them in the
// tracking threads, building 1,024-point messages) and fell to 18-24 fps;
// with 16 arenas, 3.3 cores and 30 fps each (bench/NOTES-gpu.md).
inline constexpr int kMinMallocArenas = 2;  // the main arena and one more
int malloc_arenas_for(unsigned cores);

// Caps glibc's arenas at malloc_arenas_for(this machine's cores), unless the
// environment already chose (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in
// GLIBC_TUNABLES): an operator's setting wins. Call before the program starts
// threads. False where the C library refused (not glibc, or a sanitizer's allocator).
bool limit_malloc_arenas();

}  // namespace edgetap::daemon
