// Template alignment on the GPU: the twins of engine::grey_frame,
// engine::capture_template and engine::align_template (their CPU reference is
// engine/src/template_alignment.cpp; engine/cuda/tests/test_template_alignment.cpp
// checks these against it). One warp per track: its lanes share the patch's
// cells, and the sums the Gauss-Newton step needs are warp reductions, so a
// frame's alignments are one launch whatever their number.
//
// The grey frame is engine::GreyFrame's content, one float4 per pixel
// {grey, d/dx, d/dy, 0}, row-major. Templates are rows of (2 radius + 1)^2
// floats, one per track slot. Every function launches on `stream` and checks
// the launch; none synchronizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace edgetap::kernels::cuda {

// engine::TemplateAlignmentConfig's values.
struct AlignmentSettings {
  int radius = 9;
  int iters = 4;
  float min_ncc = 0.6f;
  float max_shift = 2.f;
};

// One track's alignment: where it starts, the warp it carries (row-major 2x2)
// and its template's slot.
struct AlignmentTask {
  float x = 0, y = 0;
  float warp[4] = {1.f, 0.f, 0.f, 1.f};
  int slot = 0;
  int unused = 0;
};

// engine::AlignmentResult's values.
struct AlignmentOutcome {
  float x, y;      // the aligned point when accepted, the start otherwise
  float ncc;
  int accepted;    // 0 or 1
  float warp[4];   // the warp it ended with
};

// The grey frame of an 8-bit RGB frame (rows `stride` bytes apart) into
// grey[height * width].
void grey_frame(const std::uint8_t* rgb, int width, int height, std::size_t stride, float4* grey, cudaStream_t stream);

// For each of `count` points: its template (the normalized patch around it)
// into templates + slots[i] * (2 radius + 1)^2, and has_template[i] = 1; or
// has_template[i] = 0 (the row untouched) where the patch has no contrast or
// the point is not finite.
void capture_templates(const float4* grey, int width, int height, const float2* points, const int* slots, int count,
                       int radius, float* templates, int* has_template, cudaStream_t stream);

// Aligns each of `count` tasks' templates in the grey frame.
void align_templates(const float4* grey, int width, int height, const float* templates, const AlignmentTask* tasks,
                     int count, const AlignmentSettings& settings, AlignmentOutcome* outcomes, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
