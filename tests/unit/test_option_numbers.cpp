// Command-line numbers are read whole and within range; anything else is an error
// that leaves the value as it was.
#include <gtest/gtest.h>

#include "edgetap/cli/option_numbers.hpp"

using namespace edgetap;

TEST(OptionNumbers, IntegersAreReadWholeAndWithinRange) {
  int value = 7;
  EXPECT_TRUE(daemon::read_int_option("t", "--n", "12", 1, 16, value));
  EXPECT_EQ(value, 12);
  for (const char* bad : {"", "abc", "4x", " 4", "4.0", "1e1", "0", "17", "-3", "99999999999999999999"}) {
    EXPECT_FALSE(daemon::read_int_option("t", "--n", bad, 1, 16, value)) << "'" << bad << "'";
    EXPECT_EQ(value, 12) << "'" << bad << "'";
  }
  long count = -1;
  EXPECT_TRUE(daemon::read_int_option("t", "--count", "1000000000", 1L, 1000000000L, count));
  EXPECT_EQ(count, 1000000000L);
  EXPECT_FALSE(daemon::read_int_option("t", "--count", "1000000001", 1L, 1000000000L, count));
}

TEST(OptionNumbers, SecondsAreFiniteAndWithinRange) {
  double seconds = 2.0;
  EXPECT_TRUE(daemon::read_seconds_option("t", "--wait", "0.25", 0.0, 60.0, seconds));
  EXPECT_DOUBLE_EQ(seconds, 0.25);
  EXPECT_TRUE(daemon::read_seconds_option("t", "--wait", "1e1", 0.0, 60.0, seconds));
  EXPECT_DOUBLE_EQ(seconds, 10.0);
  for (const char* bad : {"", "soon", "5s", "-1", "61", "nan", "inf", "1e400"}) {
    EXPECT_FALSE(daemon::read_seconds_option("t", "--wait", bad, 0.0, 60.0, seconds)) << "'" << bad << "'";
    EXPECT_DOUBLE_EQ(seconds, 10.0) << "'" << bad << "'";
  }
}
