// Decodes a video file to RGB8 frames with GStreamer (decodebin), pulling
// from an appsink as fast as the decoder goes. Throws DatasetError on failure.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <vector>

namespace edgetap::eval {

// At most `max_frames` frames (all when max_frames <= 0), RGB, continuous.
std::vector<cv::Mat> decode_video(const std::filesystem::path& file, int max_frames = 0);

}  // namespace edgetap::eval
