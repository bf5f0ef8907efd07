// The photographs layers are made of: backgrounds (opaque) and cut-outs
// (premultiplied RGB plus an alpha matte). Any folder of images will do; a
// cut-out without an alpha channel gets a random smooth blob as its matte.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <vector>

#include "edgetap/synth/random.hpp"

namespace edgetap::synth {

// Image files (.jpg, .jpeg, .png) among `paths`, folders searched recursively;
// sorted so a seed picks the same files everywhere. Throws std::runtime_error
// for a path that does not exist.
std::vector<std::filesystem::path> list_images(const std::vector<std::filesystem::path>& paths);

// CV_32FC3 RGB in [0, 255], resized so its shorter side is `short_side`.
// Throws std::runtime_error naming the file when it cannot be read.
cv::Mat load_background(const std::filesystem::path& file, int short_side);

// CV_32FC4: RGB premultiplied by alpha (in [0, 255]) and alpha in [0, 1],
// cropped to the matte and resized so its longer side is at most `max_side`.
cv::Mat load_cutout(const std::filesystem::path& file, int max_side, Random& rng);

// A soft-edged star-shaped blob filling most of a w x h box, CV_32F in [0, 1].
cv::Mat blob_matte(int width, int height, Random& rng);

}  // namespace edgetap::synth
