#include "edgetap/eval/frame_source.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "edgetap/eval/video_decoder.hpp"

namespace edgetap::eval {
namespace {

cv::Mat read_rgb(const std::filesystem::path& file) {
  cv::Mat bgr = cv::imread(file.string(), cv::IMREAD_COLOR);
  if (bgr.empty()) throw DatasetError(file.string() + ": not a readable image");
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return rgb;
}

cv::Mat resized(cv::Mat frame, FrameSize size) {
  if (size.native() || (frame.cols == size.width && frame.rows == size.height)) return frame;
  cv::Mat out;
  // INTER_AREA when shrinking avoids aliasing that a tracker would then follow.
  const bool shrinking = size.width < frame.cols || size.height < frame.rows;
  cv::resize(frame, out, cv::Size(size.width, size.height), 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
  return out;
}

}  // namespace

bool is_image_file(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

bool parse_frame_size(const std::string& text, FrameSize& size) {
  if (text == "native") {
    size = {};
    return true;
  }
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 16 || h < 16 ||
      w > 8192 || h > 8192) {
    return false;
  }
  size = {w, h};
  return true;
}

std::string to_string(FrameSize size) {
  return size.native() ? "native" : std::to_string(size.width) + "x" + std::to_string(size.height);
}

std::vector<std::filesystem::path> list_frame_files(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.is_regular_file() && is_image_file(entry.path())) files.push_back(entry.path());
  }
  if (ec) throw DatasetError(folder.string() + ": cannot be listed (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  return files;
}

std::filesystem::path find_video_file(const std::filesystem::path& dir) {
  if (std::filesystem::is_regular_file(dir / "video.mp4")) return dir / "video.mp4";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().stem() == "video") return entry.path();
  }
  return {};
}

std::vector<cv::Mat> load_sequence_frames(const Sequence& sequence, FrameSize size) {
  const std::filesystem::path folder = sequence.dir / "frames";
  std::vector<cv::Mat> frames;
  std::string origin;
  if (std::filesystem::is_directory(folder)) {
    origin = folder.string();
    const auto files = list_frame_files(folder);
    if (static_cast<int>(files.size()) != sequence.num_frames) {
      throw DatasetError(origin + ": holds " + std::to_string(files.size()) + (files.size() == 1 ? " image" : " images") + " but " +
                         (sequence.dir / "gt.json").string() + " says num_frames " +
                         std::to_string(sequence.num_frames));
    }
    for (const auto& file : files) {
      frames.push_back(read_rgb(file));
      const cv::Mat& f = frames.back();
      if (f.cols != sequence.width || f.rows != sequence.height) {
        throw DatasetError(file.string() + ": is " + std::to_string(f.cols) + "x" + std::to_string(f.rows) +
                           " but gt.json says size [" + std::to_string(sequence.width) + ", " +
                           std::to_string(sequence.height) + "]");
      }
      frames.back() = resized(frames.back(), size);
    }
    return frames;
  }
  const std::filesystem::path video = find_video_file(sequence.dir);
  if (video.empty()) throw DatasetError(sequence.dir.string() + ": has neither frames/ nor a video.mp4");
  frames = decode_video(video, sequence.num_frames + 1);
  if (static_cast<int>(frames.size()) != sequence.num_frames) {
    throw DatasetError(video.string() + ": has " + (frames.size() > static_cast<std::size_t>(sequence.num_frames) ? "more than " : "") +
                       std::to_string(std::min<std::size_t>(frames.size(), static_cast<std::size_t>(sequence.num_frames))) +
                       " frames but gt.json says num_frames " + std::to_string(sequence.num_frames));
  }
  for (cv::Mat& f : frames) {
    if (f.cols != sequence.width || f.rows != sequence.height) {
      throw DatasetError(video.string() + ": frames are " + std::to_string(f.cols) + "x" + std::to_string(f.rows) +
                         " but gt.json says size [" + std::to_string(sequence.width) + ", " +
                         std::to_string(sequence.height) + "]");
    }
    f = resized(f, size);
  }
  return frames;
}

std::vector<cv::Mat> load_clip_frames(const std::filesystem::path& clip, FrameSize size, int max_frames) {
  std::vector<cv::Mat> frames;
  if (std::filesystem::is_directory(clip)) {
    auto files = list_frame_files(clip);
    if (files.empty() && std::filesystem::is_directory(clip / "frames")) files = list_frame_files(clip / "frames");
    if (files.empty()) throw DatasetError(clip.string() + ": holds no JPEG or PNG frames");
    if (max_frames > 0 && static_cast<int>(files.size()) > max_frames) files.resize(static_cast<std::size_t>(max_frames));
    for (const auto& file : files) frames.push_back(resized(read_rgb(file), size));
    return frames;
  }
  frames = decode_video(clip, max_frames);
  for (cv::Mat& f : frames) f = resized(f, size);
  return frames;
}

}  // namespace edgetap::eval
