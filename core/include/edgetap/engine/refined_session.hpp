// A tracking session whose published positions are refined by template
// alignment (template_alignment.hpp) after the network: the network's own
// session runs unchanged (its next frame starts from its own output), and each
// visible track's output is aligned in the frame against the patch at its
// query. Wraps the CPU or the GPU session; the alignment runs on the CPU.
#pragma once

#include <memory>
#include <vector>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::engine {

class RefinedSession final : public TrackingSession {
 public:
  // A track is aligned in a frame when `model`'s visible score of the network's
  // output is at least its visible_threshold (the model's published rule).
  // `threads`: how many threads share a frame's alignments (tracks are
  // independent, so the result is the same for any number); 0 = the
  // hardware's, at most kMaxThreads.
  RefinedSession(std::unique_ptr<TrackingSession> network, const TemplateAlignmentConfig& config,
                 const ModelConfig& model, int threads = 0);
  static constexpr int kMaxThreads = 4;
  // Fewer tracks to align than this in a frame run on the calling thread alone.
  static constexpr std::size_t kTracksPerThread = 64;

  Status push_frame(const ImageView& frame) noexcept override;
  std::vector<int> add_tracks(std::span<const Point2> points) override;
  void remove_track(int handle) override { network_->remove_track(handle); }
  bool alive(int handle) const override { return network_->alive(handle); }
  const TrackEstimate& estimate(int handle) const override;
  std::int64_t frames() const noexcept override { return network_->frames(); }

  // Tracks aligned and accepted in the last pushed frame (tests, statistics).
  int last_accepted() const noexcept { return last_accepted_; }

 private:
  struct Track {
    std::vector<float> tmpl;  // empty: a patch without contrast, never aligned
    AffineWarp warp;
    TrackEstimate published;
    std::int64_t published_frame = -1;  // frames() when `published` was set
  };
  // Aligns every track in aligning_ into alignments_, on up to threads_ threads.
  void align_all();

  std::unique_ptr<TrackingSession> network_;
  TemplateAlignmentConfig config_;
  ModelConfig model_;
  GreyFrame frame_;
  std::vector<Track> tracks_;  // by handle
  int threads_;
  std::vector<int> aligning_;                 // handles aligned in the frame being pushed
  std::vector<AlignmentResult> alignments_;   // their results, in the same order
  int last_accepted_ = 0;
};

}  // namespace edgetap::engine
