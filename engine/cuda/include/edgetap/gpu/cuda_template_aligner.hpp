// Template refinement's alignments on the GPU (engine::TemplateAligner): the
// frame is sent once and turned into a grey frame on the device, each track's
// template stays on the device in its handle's row, and a frame's alignments
// are one launch of kernels::cuda::align_templates (one warp per track) with
// one synchronization. The same results as engine::CpuTemplateAligner within
// float rounding (engine/cuda/tests/test_template_alignment.cpp).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "edgetap/engine/template_aligner.hpp"

namespace edgetap::gpu {

class CudaTemplateAligner final : public engine::TemplateAligner {
 public:
  // `capacity`: track handles to make room for at start-up (it doubles as
  // needed). Throws std::runtime_error when the device cannot be set up.
  explicit CudaTemplateAligner(const engine::TemplateAlignmentConfig& config, int capacity = 256);
  ~CudaTemplateAligner() override;
  CudaTemplateAligner(const CudaTemplateAligner&) = delete;
  CudaTemplateAligner& operator=(const CudaTemplateAligner&) = delete;

  void set_frame(const ImageView& frame) override;
  std::vector<bool> capture(std::span<const int> handles, std::span<const engine::Point2> points) override;
  void align(std::span<const engine::AlignmentJob> jobs, std::vector<engine::AlignmentResult>& results) override;
  // Sizes every buffer for `tracks` handles and runs both kernels once on a
  // patterned frame (TemplateAligner::warm_up).
  void warm_up(int width, int height, int tracks) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgetap::gpu
