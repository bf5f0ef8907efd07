// Frames and datasets on disk: frames folders, a video file, dataset folders,
// and the errors for a frame count or size that disagrees with gt.json.
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <fstream>

#include "edgetap/eval/dataset_dir.hpp"
#include "edgetap/eval/frame_source.hpp"
#include "edgetap/eval/gt_json.hpp"
#include "edgetap/capture/capture.hpp"
#include "fixtures.hpp"

using namespace edgetap;

namespace {

std::string gt_text(int width, int height, int frames) {
  std::string xy, visible;
  for (int t = 0; t < frames; ++t) {
    xy += std::string(t ? "," : "") + "[4, 4]";
    visible += std::string(t ? "," : "") + "true";
  }
  return R"({"size": [)" + std::to_string(width) + ", " + std::to_string(height) +
         R"(], "num_frames": )" + std::to_string(frames) + R"(, "points": [{"xy": [)" + xy + R"(], "visible": [)" +
         visible + "]}]}";
}

// A sequence folder with `images` PNG frames of width x height and a gt.json saying `frames`.
std::filesystem::path make_sequence(const std::filesystem::path& root, const std::string& name, int images,
                                    int frames, int width = 64, int height = 48) {
  const auto dir = root / name;
  std::filesystem::create_directories(dir / "frames");
  for (int i = 0; i < images; ++i) {
    char file[32];
    std::snprintf(file, sizeof file, "%05d.png", i);
    cv::imwrite((dir / "frames" / file).string(), test::smooth_texture(width, height, static_cast<std::uint64_t>(i)));
  }
  std::ofstream(dir / "gt.json") << gt_text(64, 48, frames);
  return dir;
}

std::string load_error(const std::filesystem::path& dir) {
  try {
    eval::load_sequence_frames(eval::read_ground_truth(dir), eval::FrameSize{});
  } catch (const eval::DatasetError& e) {
    return e.what();
  }
  return "";
}

// Encodes `frames` test frames of 64x48 as MJPEG in AVI (plugins the pipeline tests also use).
void write_test_video(const std::filesystem::path& file, int frames) {
  pipeline::ensure_gstreamer();
  const std::string description = "videotestsrc num-buffers=" + std::to_string(frames) +
                                  " pattern=ball ! video/x-raw,width=64,height=48,framerate=10/1 ! jpegenc ! avimux ! "
                                  "filesink location=\"" + file.string() + "\"";
  GError* error = nullptr;
  GstElement* p = gst_parse_launch(description.c_str(), &error);
  ASSERT_EQ(error, nullptr) << error->message;
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(p);
  GstMessage* done = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND,
                                                static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(GST_MESSAGE_TYPE(done), GST_MESSAGE_EOS);
  gst_message_unref(done);
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
}

}  // namespace

TEST(FrameSource, ParsesFrameSizes) {
  eval::FrameSize size;
  EXPECT_TRUE(eval::parse_frame_size("320x240", size));
  EXPECT_EQ(size.width, 320);
  EXPECT_EQ(size.height, 240);
  EXPECT_TRUE(eval::parse_frame_size("native", size));
  EXPECT_TRUE(size.native());
  EXPECT_FALSE(eval::parse_frame_size("320", size));
  EXPECT_FALSE(eval::parse_frame_size("320x240x3", size));
  EXPECT_FALSE(eval::parse_frame_size("0x0", size));
}

TEST(FrameSource, LoadsAndResizesAFramesFolder) {
  test::TempDir root("frames-ok");
  const auto dir = make_sequence(root.path(), "seq", 3, 3);
  const auto frames = eval::load_sequence_frames(eval::read_ground_truth(dir), eval::FrameSize{32, 24});
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].cols, 32);
  EXPECT_EQ(frames[0].rows, 24);
  EXPECT_EQ(frames[0].type(), CV_8UC3);
}

TEST(FrameSource, WrongFrameCountNamesTheFolderAndGtJson) {
  test::TempDir root("frames-count");
  const std::string e = load_error(make_sequence(root.path(), "seq", 2, 3));
  EXPECT_NE(e.find("frames: holds 2 images"), std::string::npos) << e;
  EXPECT_NE(e.find("num_frames 3"), std::string::npos) << e;
}

TEST(FrameSource, WrongFrameSizeNamesTheImage) {
  test::TempDir root("frames-size");
  const std::string e = load_error(make_sequence(root.path(), "seq", 2, 2, 40, 48));
  EXPECT_NE(e.find("00000.png: is 40x48 but gt.json says size [64, 48]"), std::string::npos) << e;
}

TEST(FrameSource, UnreadableImageIsAnErrorNotACrash) {
  test::TempDir root("frames-broken");
  const auto dir = make_sequence(root.path(), "seq", 2, 2);
  std::ofstream(dir / "frames" / "00001.png") << "not a png";
  const std::string e = load_error(dir);
  EXPECT_NE(e.find("00001.png: not a readable image"), std::string::npos) << e;
}

TEST(FrameSource, NoFramesAtAllIsAnError) {
  test::TempDir root("frames-none");
  std::filesystem::create_directories(root.path() / "seq");
  std::ofstream(root.path() / "seq" / "gt.json") << gt_text(64, 48, 2);
  EXPECT_NE(load_error(root.path() / "seq").find("has neither frames/ nor a video.mp4"), std::string::npos);
}

TEST(FrameSource, DecodesAVideoFileAndChecksItsLength) {
  test::TempDir root("frames-video");
  std::filesystem::create_directories(root.path() / "seq");
  write_test_video(root.path() / "seq" / "video.avi", 6);
  std::ofstream(root.path() / "seq" / "gt.json") << gt_text(64, 48, 6);
  const auto frames = eval::load_sequence_frames(eval::read_ground_truth(root.path() / "seq"), eval::FrameSize{});
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames[0].cols, 64);
  std::ofstream(root.path() / "seq" / "gt.json") << gt_text(64, 48, 7);
  const std::string e = load_error(root.path() / "seq");
  EXPECT_NE(e.find("video.avi: has 6 frames but gt.json says num_frames 7"), std::string::npos) << e;
}

TEST(FrameSource, NotAVideoIsAnError) {
  test::TempDir root("frames-notvideo");
  std::ofstream(root.path() / "clip.mp4") << "garbage, not a video";
  try {
    eval::load_clip_frames(root.path() / "clip.mp4", eval::FrameSize{}, 10);
    FAIL() << "garbage decoded";
  } catch (const eval::DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("clip.mp4"), std::string::npos) << e.what();
  }
}

TEST(DatasetDir, FindsSequenceFoldersOrASingleSequence) {
  test::TempDir root("dataset");
  make_sequence(root.path() / "set", "b", 1, 1);
  make_sequence(root.path() / "set", "a", 1, 1);
  std::filesystem::create_directories(root.path() / "set" / "notes");  // no gt.json: ignored
  const eval::DatasetDir set = eval::find_dataset(root.path() / "set");
  EXPECT_EQ(set.name, "set");
  ASSERT_EQ(set.sequences.size(), 2u);
  EXPECT_EQ(set.sequences[0].filename(), "a");
  const eval::DatasetDir one = eval::find_dataset(root.path() / "set" / "b");
  ASSERT_EQ(one.sequences.size(), 1u);
  EXPECT_THROW(eval::find_dataset(root.path() / "set" / "notes"), eval::DatasetError);
  EXPECT_THROW(eval::find_dataset(root.path() / "nowhere"), eval::DatasetError);
}
