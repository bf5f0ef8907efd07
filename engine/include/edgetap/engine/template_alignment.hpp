// Sub-pixel alignment of a track's output against its query template: the
// published refinement that follows the network (models/INFERENCE.md,
// "Template refinement"). The reference is training/edgetap/refine.py; this
// is the same computation in float on one grey frame.
//
// At the query frame a (2r+1)^2 grey patch is sampled around the query point
// and normalized (zero mean, unit sample deviation). Every later frame the
// network's output p0 is the start of `iters` Gauss-Newton steps of an affine
// Lucas-Kanade alignment, x -> p + A x over the patch's offsets, of the
// normalized patch there to the template; A starts at the track's last
// accepted warp. The aligned point is kept when its normalized correlation is
// above min_ncc and it lies within max_shift px of p0; otherwise p0 stands.
#pragma once

#include <array>
#include <vector>

#include "edgetap/image.hpp"

namespace edgetap::engine {

struct TemplateAlignmentConfig {
  int radius = 9;          // the patch is (2 radius + 1)^2 px of the model input
  int iters = 4;           // Gauss-Newton steps per frame
  float min_ncc = 0.6f;    // normalized correlation the aligned patch must exceed
  float max_shift = 2.f;   // px from the network's output the aligned point may lie
  int cells() const noexcept { return (2 * radius + 1) * (2 * radius + 1); }
};

// A frame as the alignment reads it: grey levels (0.299 R + 0.587 G + 0.114 B,
// 0..255) and their central differences (0 in the outermost rows/columns),
// stored together per pixel (channel 0, 1, 2), row-major.
struct GreyFrame {
  enum Channel { kGrey = 0, kDx = 1, kDy = 2 };
  int width = 0, height = 0;
  std::vector<float> planes;  // width * height * 3
  float at(std::size_t pixel, Channel c) const noexcept { return planes[3 * pixel + c]; }
};

GreyFrame grey_frame(const ImageView& frame);

// The bilinear value of channel `c` at (x, y), pixel centres at integers,
// coordinates clamped to the frame (the border value beyond it).
float sample_clamped(const GreyFrame& frame, GreyFrame::Channel c, float x, float y) noexcept;

struct AffineWarp {
  std::array<float, 4> a{1.f, 0.f, 0.f, 1.f};  // row-major 2x2
  float det() const noexcept { return a[0] * a[3] - a[1] * a[2]; }
};

// The normalized template around (x, y); empty when the patch has no contrast
// (or the frame is empty, or the point not finite).
std::vector<float> capture_template(const GreyFrame& frame, float x, float y, const TemplateAlignmentConfig& config);

struct AlignmentResult {
  bool accepted = false;
  float x = 0, y = 0;  // the aligned point when accepted, the start otherwise
  float ncc = 0;
  AffineWarp warp;     // the warp it ended with
};

// Aligns `tmpl` (from capture_template) in `frame`, starting at (x, y) with `warp`.
AlignmentResult align_template(const GreyFrame& frame, const std::vector<float>& tmpl, float x, float y,
                               const AffineWarp& warp, const TemplateAlignmentConfig& config);

}  // namespace edgetap::engine
