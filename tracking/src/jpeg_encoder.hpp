// A BGR image as JPEG bytes, through libjpeg (OpenCV's imgcodecs would bring
// GDAL, Poppler and HDF5 into the daemon for this one call).
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <vector>

namespace edgetap::pipeline {

// `bgr` (CV_8UC3) at `quality` (1..100). Throws std::runtime_error when libjpeg reports an error.
std::vector<std::uint8_t> encode_jpeg(const cv::Mat& bgr, int quality);

}  // namespace edgetap::pipeline
