// An overlay strip for eyeballing a run: a few scored frames side by side,
// each with the ground truth (green rings where visible) and the predictions
// (cyan within 8 px at 256x256 of a visible ground truth, red beyond it, grey
// squares where predicted occluded), joined by a line to the ground truth.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <span>
#include <vector>

#include "edgetap/eval/query_sampling.hpp"
#include "edgetap/eval/sequence.hpp"
#include "edgetap/eval/tapvid_metrics.hpp"

namespace edgetap::eval {

// Up to `panels` frames with scored ground truth, evenly spaced; includes the first and the last.
std::vector<int> overlay_frames(const Sequence& sequence, std::span<const QuerySpec> queries, QueryMode mode,
                                int panels);

// Draws the strip (BGR) from `frames` (RGB, any size; positions are scaled).
cv::Mat draw_overlay(const Sequence& sequence, std::span<const cv::Mat> frames, std::span<const QuerySpec> queries,
                     const Predictions& predictions, QueryMode mode, int panels = 6);

// Draws and writes it as PNG, creating the folder; throws std::runtime_error when it cannot.
void write_overlay(const Sequence& sequence, std::span<const cv::Mat> frames, std::span<const QuerySpec> queries,
                   const Predictions& predictions, QueryMode mode, const std::filesystem::path& file);

}  // namespace edgetap::eval
