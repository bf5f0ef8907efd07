// How many malloc arenas edgetapd keeps: one per core, at least two.
#include <gtest/gtest.h>

#include "edgetap/daemon/malloc_arenas.hpp"

using namespace edgetap;

TEST(MallocArenas, OnePerCoreAndAtLeastTwo) {
  EXPECT_EQ(daemon::malloc_arenas_for(0), 2);  // hardware_concurrency() unknown
  EXPECT_EQ(daemon::malloc_arenas_for(1), 2);
  EXPECT_EQ(daemon::malloc_arenas_for(2), 2);
  EXPECT_EQ(daemon::malloc_arenas_for(16), 16);
}
