// gt.json: what the reader accepts, and that bad files fail with a message
// naming the file and the key instead of crashing.
#include <gtest/gtest.h>

#include <fstream>

#include "edgetap/eval/gt_json.hpp"
#include "fixtures.hpp"

using namespace edgetap;

namespace {

const char* kGood = R"({"size": [320, 240], "num_frames": 3, "mask_area": [10, null, 30],
  "points": [{"id": "a", "query": [1, 5.5, 6], "xy": [null, [5.5, 6], [7, 8]], "visible": [null, true, false]},
             {"id": "b", "xy": [null, [1, 2], [3, 4]], "visible": [false, true, true]}]})";

// The message of the DatasetError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    eval::parse_ground_truth(text, "seq/gt.json");
  } catch (const eval::DatasetError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GtJson, ReadsTheDatasetFormat) {
  const eval::Sequence s = eval::parse_ground_truth(kGood, "gt.json");
  EXPECT_EQ(s.width, 320);
  EXPECT_EQ(s.height, 240);
  EXPECT_EQ(s.num_frames, 3);
  ASSERT_EQ(s.points.size(), 2u);
  const eval::GtPoint& a = s.points[0];
  EXPECT_EQ(a.id, "a");
  EXPECT_EQ(a.query_frame, 1);
  EXPECT_DOUBLE_EQ(a.query_x, 5.5);
  EXPECT_FALSE(a.frames[0].known);
  EXPECT_TRUE(a.frames[1].known && a.frames[1].visible);
  EXPECT_TRUE(a.frames[2].known && !a.frames[2].visible && a.frames[2].has_xy);
  // No query: the first visible frame (frame 0 is occluded).
  EXPECT_EQ(s.points[1].query_frame, 1);
  EXPECT_DOUBLE_EQ(s.points[1].query_x, 1);
  EXPECT_DOUBLE_EQ(s.points[1].query_y, 2);
  ASSERT_EQ(s.mask_area.size(), 3u);
  EXPECT_DOUBLE_EQ(s.mask_area[1], 0.0);  // null: unknown
}

TEST(GtJson, WritesWhatItReads) {
  const eval::Sequence s = eval::parse_ground_truth(kGood, "gt.json");
  const eval::Sequence again = eval::parse_ground_truth(eval::format_ground_truth(s), "again");
  ASSERT_EQ(again.points.size(), s.points.size());
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    EXPECT_EQ(again.points[i].id, s.points[i].id);
    EXPECT_EQ(again.points[i].query_frame, s.points[i].query_frame);
    for (std::size_t t = 0; t < 3; ++t) {
      EXPECT_EQ(again.points[i].frames[t].known, s.points[i].frames[t].known);
      EXPECT_EQ(again.points[i].frames[t].visible, s.points[i].frames[t].visible);
      EXPECT_DOUBLE_EQ(again.points[i].frames[t].x, s.points[i].frames[t].x);
    }
  }
  EXPECT_EQ(again.mask_area, s.mask_area);
}

TEST(GtJson, MalformedJsonNamesTheFile) {
  const std::string e = error_of(R"({"size": [320, 240], "num_frames": )");
  EXPECT_NE(e.find("seq/gt.json"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST(GtJson, DeepNestingIsRefusedNamingTheLimit) {
  const std::string e = error_of(R"({"size": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_NE(e.find("seq/gt.json: not valid JSON (arrays and objects nested more than"), std::string::npos) << e;
}

TEST(GtJson, BadContentNamesTheKey) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"num_frames": 2, "points": []})", "size is missing"},
      {R"({"size": [320], "num_frames": 2, "points": []})", "size has 1 entries, expected 2"},
      {R"({"size": [320, 240], "num_frames": 2.5, "points": []})", "num_frames must be an integer"},
      {R"({"size": [320, 240], "num_frames": 2, "points": {}})", "points must be an array"},
      {R"({"size": [320, 240], "num_frames": 3, "points": [{"xy": [null, null], "visible": [null, null, null]}]})",
       "points[0].xy has 2 entries, expected 3"},
      {R"({"size": [320, 240], "num_frames": 1, "points": [{"xy": [null], "visible": [true]}]})",
       "points[0].xy[0] is null but the point is visible"},
      {R"({"size": [320, 240], "num_frames": 1, "points": [{"xy": [["a", 1]], "visible": [true]}]})",
       "points[0].xy[0][0] must be a number"},
      {R"({"size": [320, 240], "num_frames": 1, "points": [{"xy": [[1, 1]], "visible": ["yes"]}]})",
       "points[0].visible[0] must be true, false or null"},
      {R"({"size": [320, 240], "num_frames": 1, "points": [{"query": [4, 1, 1], "xy": [[1, 1]], "visible": [true]}]})",
       "points[0].query[0] must be an integer in [0, 0]"},
      {R"({"size": [320, 240], "num_frames": 1, "points": [{"xy": [[1, 1]], "visible": [false]}]})",
       "points[0] has no query and is visible in no frame"},
      {R"({"size": [320, 240], "num_frames": 2, "mask_area": [1], "points": []})", "mask_area has 1 entries, expected 2"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find("seq/gt.json: "), std::string::npos) << c.text << " -> " << e;
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.text << " -> " << e;
  }
}

TEST(GtJson, MissingFileNamesThePath) {
  test::TempDir dir("gt-missing");
  try {
    eval::read_ground_truth(dir.path());
    FAIL() << "no error for a folder without gt.json";
  } catch (const eval::DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "gt.json").string()), std::string::npos) << e.what();
  }
}

TEST(GtJson, ReadsTheFolderName) {
  test::TempDir dir("gt-name");
  std::filesystem::create_directories(dir.path() / "walk");
  std::ofstream(dir.path() / "walk" / "gt.json") << kGood;
  EXPECT_EQ(eval::read_ground_truth(dir.path() / "walk").name, "walk");
  EXPECT_EQ(eval::read_ground_truth(dir.path() / "walk" / "").name, "walk");
}
