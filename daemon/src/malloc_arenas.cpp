#include "edgetap/daemon/malloc_arenas.hpp"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace edgetap::daemon {

int malloc_arenas_for(unsigned cores) { return std::max(kMinMallocArenas, static_cast<int>(cores)); }

bool limit_malloc_arenas() {
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.arena_max") != nullptr) return true;
#ifdef M_ARENA_MAX
  return mallopt(M_ARENA_MAX, malloc_arenas_for(std::thread::hardware_concurrency())) == 1;
#else
  return false;
#endif
}

}  // namespace edgetap::daemon
