// A tracking session whose published positions are refined by template
// alignment (template_alignment.hpp) after the network: the network's own
// session runs unchanged (its next frame starts from its own output), and each
// visible track's output is aligned in the frame against the patch at its
// query. Wraps the CPU or the GPU session; the alignments run where its
// aligner runs them (template_aligner.hpp: the CPU's, or gpu::CudaTemplateAligner).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/template_aligner.hpp"
#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::engine {

class RefinedSession final : public TrackingSession {
 public:
  // A track is aligned in a frame when `model`'s visible score of the network's
  // output is at least its visible_threshold (the model's published rule).
  RefinedSession(std::unique_ptr<TrackingSession> network, std::unique_ptr<TemplateAligner> aligner,
                 const ModelConfig& model);
  // The same with the CPU's aligner on `threads` threads (CpuTemplateAligner).
  RefinedSession(std::unique_ptr<TrackingSession> network, const TemplateAlignmentConfig& config,
                 const ModelConfig& model, int threads = 0);

  Status push_frame(const ImageView& frame) noexcept override;
  std::vector<int> add_tracks(std::span<const Point2> points) override;
  void remove_track(int handle) override { network_->remove_track(handle); }
  bool alive(int handle) const override { return network_->alive(handle); }
  const TrackEstimate& estimate(int handle) const override;
  std::int64_t frames() const noexcept override { return network_->frames(); }
  void warm_up(int width, int height, std::span<const int> batches) override;
  void encode_ahead(std::span<const ImageView> frames) override;

  // Tracks aligned and accepted in the last pushed frame (tests, statistics).
  int last_accepted() const noexcept { return last_accepted_; }

 private:
  struct Track {
    bool has_template = false;  // false: a patch without contrast, never aligned
    AffineWarp warp;
    TrackEstimate published;
    std::int64_t published_frame = -1;  // frames() when `published` was set
  };

  std::unique_ptr<TrackingSession> network_;
  std::unique_ptr<TemplateAligner> aligner_;
  ModelConfig model_;
  std::vector<Track> tracks_;  // by handle
  std::vector<AlignmentJob> jobs_;            // the frame's alignments
  std::vector<AlignmentResult> alignments_;   // their results, in the same order
  int last_accepted_ = 0;
};

}  // namespace edgetap::engine
