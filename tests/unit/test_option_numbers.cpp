// Command-line numbers are read whole and within range; anything else is an error
// that leaves the value as it was; the CLI11 command line reads them the same way
// from "--opt value" and "--opt=value".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgetap/cli/command_line.hpp"
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

namespace {

// Parses `args` (after the program's name) with an app holding --grid 1..256 and --wait 0..60.
struct GridApp {
  CLI::App app{"test", "t"};
  int grid = 16;
  double wait = 0;
  GridApp() {
    cli::configure_app(app, "test", "");
    cli::add_int_option(app, "--grid", "grid side", 1, 256, grid);
    cli::add_seconds_option(app, "--wait", "seconds", 0.0, 60.0, wait);
  }
  int parse(std::vector<std::string> args) {
    args.insert(args.begin(), "t");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return cli::parse_command_line(app, static_cast<int>(argv.size()), argv.data());
  }
};

}  // namespace

TEST(CommandLine, OptEqualsValueReadsAsOptValue) {
  GridApp spaced, joined;
  EXPECT_EQ(spaced.parse({"--grid", "4", "--wait", "0.5"}), -1);
  EXPECT_EQ(joined.parse({"--grid=4", "--wait=0.5"}), -1);
  EXPECT_EQ(spaced.grid, 4);
  EXPECT_EQ(joined.grid, 4);
  EXPECT_DOUBLE_EQ(joined.wait, 0.5);
}

TEST(CommandLine, TheLastOfARepeatedOptionHolds) {
  GridApp g;
  EXPECT_EQ(g.parse({"--grid=4", "--grid", "8"}), -1);
  EXPECT_EQ(g.grid, 8);
}

TEST(CommandLine, BadValuesUnknownOptionsAndMissingValuesExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--grid=0"}, {"--grid", "abc"}, {"--wait=61"}, {"--frobnicate"}, {"--grid"}}) {
    GridApp g;
    EXPECT_EQ(g.parse(args), 2) << args[0];
    EXPECT_EQ(g.grid, 16) << args[0];
  }
}

TEST(CommandLine, HelpExitsZero) {
  for (const char* flag : {"-h", "--help"}) {
    GridApp g;
    testing::internal::CaptureStdout();
    EXPECT_EQ(g.parse({flag}), 0);
    const std::string help = testing::internal::GetCapturedStdout();
    EXPECT_NE(help.find("--grid"), std::string::npos) << help;
    EXPECT_NE(help.find("grid side"), std::string::npos) << help;
  }
}
