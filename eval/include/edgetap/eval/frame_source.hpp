// Frames for evaluation: a sequence's frames/ folder (JPEG or PNG, in file-name
// order) or its video file, decoded to RGB8 and resized to the size the tracker
// runs at. Problems throw DatasetError naming the file.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "edgetap/eval/sequence.hpp"

namespace edgetap::eval {

// The size frames are handed to the tracker at; 0x0 keeps each clip's own size.
struct FrameSize {
  int width = 0;
  int height = 0;
  bool native() const noexcept { return width <= 0 || height <= 0; }
};

// "256x256" or "native"; false on anything else.
bool parse_frame_size(const std::string& text, FrameSize& size);
std::string to_string(FrameSize size);

// A .jpg, .jpeg or .png file name (any case).
bool is_image_file(const std::filesystem::path& path);

// The image files of a frames folder, sorted by name.
std::vector<std::filesystem::path> list_frame_files(const std::filesystem::path& folder);

// The video file of a sequence folder (video.mp4, or video.* of another
// container), or an empty path when there is none.
std::filesystem::path find_video_file(const std::filesystem::path& dir);

// All frames of `sequence`, checked against num_frames and size in gt.json.
std::vector<cv::Mat> load_sequence_frames(const Sequence& sequence, FrameSize size);

// Up to `max_frames` frames of a clip: a video file or a folder of images.
std::vector<cv::Mat> load_clip_frames(const std::filesystem::path& clip, FrameSize size, int max_frames);

}  // namespace edgetap::eval
