// Where a frame's template alignments (template_alignment.hpp) run: the
// interface RefinedSession drives, with the CPU's implementation here and the
// GPU's in gpu/ (gpu::CudaTemplateAligner). An aligner holds the frame being
// refined and every track's template, by the session's track handle.
#pragma once

#include <span>
#include <vector>

#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "edgetap/image.hpp"

namespace edgetap::engine {

// One track's alignment in the current frame: its template (by handle), the
// point to start at and the warp it carries from its last accepted frame.
struct AlignmentJob {
  int handle = 0;
  float x = 0, y = 0;
  AffineWarp warp;
};

class TemplateAligner {
 public:
  virtual ~TemplateAligner() = default;
  // The frame that the next captures and alignments read.
  virtual void set_frame(const ImageView& frame) = 0;
  // Captures each handle's template around its point in the current frame,
  // replacing any the handle had. Returns, per point, whether its patch had
  // contrast: a handle without a template is never aligned.
  virtual std::vector<bool> capture(std::span<const int> handles, std::span<const Point2> points) = 0;
  // Aligns each job's template in the current frame; `results` gets one per
  // job, in job order. Every job's handle has a template.
  virtual void align(std::span<const AlignmentJob> jobs, std::vector<AlignmentResult>& results) = 0;
  // Before the first frame: whatever the first `tracks` captures and alignments in
  // width x height frames would set up (buffers, a device's first launches) is paid
  // now, and no handle is left with a template. Nothing for an aligner without set-up.
  virtual void warm_up(int /*width*/, int /*height*/, int /*tracks*/) {}
};

// The CPU's aligner: engine::align_template on up to kMaxThreads threads
// (tracks are independent, so the result is the same for any number).
class CpuTemplateAligner final : public TemplateAligner {
 public:
  // `threads`: 0 = the hardware's, at most kMaxThreads.
  explicit CpuTemplateAligner(const TemplateAlignmentConfig& config, int threads = 0);
  static constexpr int kMaxThreads = 4;
  // Fewer jobs than this in a frame run on the calling thread alone.
  static constexpr std::size_t kJobsPerThread = 64;

  void set_frame(const ImageView& frame) override { frame_ = grey_frame(frame); }
  std::vector<bool> capture(std::span<const int> handles, std::span<const Point2> points) override;
  void align(std::span<const AlignmentJob> jobs, std::vector<AlignmentResult>& results) override;

 private:
  TemplateAlignmentConfig config_;
  int threads_;
  GreyFrame frame_;
  std::vector<std::vector<float>> templates_;  // by handle
};

}  // namespace edgetap::engine
