// Tracks drawn on a frame, one look everywhere (the demo strip, the live
// view): each track in a colour of its own, a filled dot while visible, a ring
// while occluded, a red cross on the frame it is lost; and a frame with its
// tracks as a JPEG image at source size, for the live view's snapshot.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "edgetap/capture/frame.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

// A colour (BGR) derived from the track's id, the same in every frame.
cv::Scalar track_colour(const std::string& id);

// Draws `point`'s marker at `centre` of `bgr`, `radius` pixels.
void draw_track(cv::Mat& bgr, cv::Point centre, const TrackPoint& point, int radius);

// `frame` scaled to its source size (the coordinates of the track socket and
// add_points), with `points` (model pixels) drawn when given, as JPEG.
std::vector<std::uint8_t> snapshot_jpeg(const Frame& frame, const std::vector<TrackPoint>* points);

}  // namespace edgetap::pipeline
