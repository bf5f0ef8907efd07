// A synthetic scene: a background photograph seen by a moving camera (a
// smooth homography path) and cut-out layers in front of it, back to front in
// a fixed order, each moving along a smooth similarity path. Every layer point
// has an exact position in every frame, and it is visible when it is inside
// the frame and no layer in front of it covers it (matte alpha >= 0.5).
// Coordinates are pixels with pixel centres at integer coordinates, the
// convention of OpenCV's warps and of gt.json.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <vector>

#include "edgetap/synth/smooth_path.hpp"

namespace edgetap::synth {

inline constexpr double kCoverAlpha = 0.5;  // a matte at least this opaque hides what is behind it

struct BackgroundLayer {
  cv::Mat image;            // CV_32FC3 RGB
  SmoothPath ox, oy;        // camera offset from the photo centre, photo pixels
  SmoothPath angle;         // camera roll, radians
  SmoothPath log_zoom;      // log(photo pixels per frame pixel)
  SmoothPath kx, ky;        // keystone: depth changes by kx * u + ky * v (u, v from the frame centre)
  SmoothPath gain;          // brightness factor
};

struct CutoutLayer {
  cv::Mat image;            // CV_32FC4: premultiplied RGB, alpha in [0, 1]
  SmoothPath cx, cy;        // where the layer's centre is in the frame
  SmoothPath angle;         // radians
  SmoothPath log_scale;     // log(frame pixels per layer pixel)
  SmoothPath gain;
};

struct Scene {
  int width = 0;
  int height = 0;
  int frames = 0;
  BackgroundLayer background;
  std::vector<CutoutLayer> cutouts;  // back to front; layer i + 1 in the functions below
  SmoothPath colour[3];              // per-channel colour balance (RGB)
  double noise = 0;                  // Gaussian sigma, 8-bit levels
  int blur_samples = 1;
  double shutter = 0.5;
  std::uint64_t noise_seed = 0;

  int layers() const noexcept { return 1 + static_cast<int>(cutouts.size()); }

  // Layer pixels -> frame pixels at time t (fractional times for motion blur).
  // Layer 0 is the background photograph.
  cv::Matx33d layer_to_frame(int layer, double t) const;
  cv::Point2d project(int layer, cv::Point2d layer_point, double t) const;
  cv::Point2d unproject(int layer, cv::Point2d frame_point, double t) const;

  // The matte of a cut-out layer (>= 1) at a frame position (bilinear; 0 outside it).
  double alpha_at(int layer, cv::Point2d frame_point, double t) const;
  // Whether `layer_point` belongs to the layer: inside the photo for the
  // background, matte alpha >= min_alpha for a cut-out.
  bool on_layer(int layer, cv::Point2d layer_point, double min_alpha) const;
  // Inside frame t and covered by no layer in front.
  bool visible(int layer, cv::Point2d layer_point, int t) const;

  // Frame t as RGB8: layers composited per sub-frame time, averaged over the
  // shutter, colour balance applied, noise added.
  cv::Mat render(int t) const;
};

}  // namespace edgetap::synth
