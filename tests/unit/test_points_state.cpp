// The state file of points added at run time: what is written reads back the
// same, a change replaces the file whole, and a corrupt file is moved aside
// with an error naming it while the daemon starts with no saved points.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "edgetap/daemon/atomic_file.hpp"
#include "edgetap/daemon/points_state.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using daemon::PointsByCamera;
using daemon::PointsState;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A logger whose lines the test reads.
struct CapturedLog {
  std::ostringstream lines;
  std::shared_ptr<spdlog::logger> logger =
      std::make_shared<spdlog::logger>("state", std::make_shared<spdlog::sinks::ostream_sink_st>(lines));
};

PointsByCamera parsed(const std::string& path) {
  PointsByCamera points;
  std::string error;
  EXPECT_TRUE(daemon::parse_points_state(read(path), points, error)) << error << "\n" << read(path);
  return points;
}

}  // namespace

TEST(PointsState, FormatAndParseRoundTrip) {
  const PointsByCamera points = {{"gate", {{"door", 412.5, 220}, {"bin", 0, 1079}}}, {"yard", {{"a", 1.25, 2}}}};
  PointsByCamera back;
  std::string error;
  ASSERT_TRUE(daemon::parse_points_state(daemon::format_points_state(points), back, error)) << error;
  EXPECT_EQ(back, points);
}

TEST(PointsState, ParseRefusesWhatIsNotAStateFile) {
  for (const std::string text : {"", "{", "[]", R"({"version": 2, "cameras": {}})", R"({"version": 1})",
                                 R"({"version": 1, "cameras": {"gate": {}}})",
                                 R"({"version": 1, "cameras": {"gate": [{"id": "a", "x": "1", "y": 2}]}})",
                                 "{\"version\": 1, \"cameras\": {\"gate\": [{\"id\": \"a\\n\", \"x\": 1, \"y\": 2}]}}"}) {
    PointsByCamera points;
    std::string error;
    EXPECT_FALSE(daemon::parse_points_state(text, points, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(PointsState, ChangesAreWrittenAndReadBackByANewStore) {
  test::TempDir dir;
  const std::string path = dir.file("points.json");
  CapturedLog log;
  PointsState state(log.logger);
  state.open(path);
  EXPECT_TRUE(state.points("gate").empty());
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing changed, nothing written

  ASSERT_TRUE(state.added("gate", {{"door", 10, 20}, {"bin", 30, 40}}));
  ASSERT_TRUE(state.added("yard", {{"a", 1, 2}}));
  ASSERT_TRUE(state.added("gate", {{"door", 11, 21}}));  // added again: the new position
  ASSERT_TRUE(state.removed("gate", {"bin", "never-added"}));
  const PointsByCamera expected = {{"gate", {{"door", 11, 21}}}, {"yard", {{"a", 1, 2}}}};
  EXPECT_EQ(parsed(path), expected);

  PointsState reopened(log.logger);
  reopened.open(path);
  EXPECT_EQ(reopened.points("gate"), expected.at("gate"));
  EXPECT_EQ(reopened.points("yard"), expected.at("yard"));

  ASSERT_TRUE(reopened.removed("yard", {"a"}));
  EXPECT_EQ(parsed(path), (PointsByCamera{{"gate", {{"door", 11, 21}}}}));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(PointsState, WithoutAFileNothingIsKept) {
  CapturedLog log;
  PointsState state(log.logger);
  state.open("");
  EXPECT_TRUE(state.added("gate", {{"door", 10, 20}}));
  EXPECT_TRUE(state.points("gate").empty());
}

TEST(PointsState, AFailedReplaceLeavesTheOldFileWhole) {
  test::TempDir dir;
  const std::string path = dir.file("points.json");
  std::string error;
  ASSERT_TRUE(daemon::replace_file_atomically(path, "old\n", error)) << error;
  ASSERT_TRUE(daemon::replace_file_atomically(path, "new\n", error)) << error;
  EXPECT_EQ(read(path), "new\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  // The temporary file cannot be made (a directory is in its place): the file is untouched.
  std::filesystem::create_directory(path + ".tmp");
  EXPECT_FALSE(daemon::replace_file_atomically(path, "newer\n", error));
  EXPECT_NE(error.find(path + ".tmp"), std::string::npos) << error;
  EXPECT_EQ(read(path), "new\n");

  // A store whose write fails says so, keeps the change, and writes it with the next one.
  CapturedLog log;
  PointsState state(log.logger);
  std::filesystem::remove(path);
  state.open(path);
  EXPECT_FALSE(state.added("gate", {{"door", 1, 2}}));
  EXPECT_NE(log.lines.str().find("state file not updated"), std::string::npos) << log.lines.str();
  std::filesystem::remove(path + ".tmp");
  ASSERT_TRUE(state.added("gate", {{"bin", 3, 4}}));
  EXPECT_EQ(parsed(path), (PointsByCamera{{"gate", {{"door", 1, 2}, {"bin", 3, 4}}}}));
}

TEST(PointsState, ACorruptFileIsMovedAsideNamedInTheLogAndStartedAfresh) {
  test::TempDir dir;
  const std::string path = dir.write("points.json", "{\"version\": 1, \"cameras\": {\"gate\": [{\"id\": \"do");
  CapturedLog log;
  PointsState state(log.logger);
  state.open(path);
  const std::string lines = log.lines.str();
  EXPECT_NE(lines.find("state file " + path + " cannot be read"), std::string::npos) << lines;
  EXPECT_NE(lines.find("moved to " + path + ".bad"), std::string::npos) << lines;
  EXPECT_TRUE(state.points("gate").empty());
  EXPECT_EQ(read(path + ".bad"), "{\"version\": 1, \"cameras\": {\"gate\": [{\"id\": \"do");
  EXPECT_FALSE(std::filesystem::exists(path));

  ASSERT_TRUE(state.added("gate", {{"door", 5, 6}}));
  EXPECT_EQ(parsed(path), (PointsByCamera{{"gate", {{"door", 5, 6}}}}));
}
