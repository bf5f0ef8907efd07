// The `edgetap` tracker: the network behind the tracker seam. Maps the seam's
// string ids to the session's track handles. Occluded points stay tracked
// (visible = false); a track is reported lost only when it is removed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::engine {

class EdgeTapTracker final : public Tracker {
 public:
  // `network` must outlive the tracker (several cameras may share one).
  // `iters` as StreamingSession's (0 = the model's own). A point is visible when the
  // model's visible score (ModelConfig::visible_score) is >= `visible_threshold`,
  // by default the model's own.
  explicit EdgeTapTracker(std::shared_ptr<const Network> network,
                          std::optional<float> visible_threshold = std::nullopt, int iters = 0);
  // The same on a session made by the caller (a GPU one) over `*network`.
  EdgeTapTracker(std::shared_ptr<const Network> network, std::unique_ptr<TrackingSession> session,
                 std::optional<float> visible_threshold = std::nullopt);

  std::string_view name() const noexcept override { return "edgetap"; }
  void add_queries(std::span<const Query> queries) override;
  std::size_t remove_queries(std::span<const std::string> ids) override;
  std::size_t size() const noexcept override { return handles_.size() + pending_.size(); }
  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override;
  Status warm_up(int width, int height, std::size_t points) noexcept override;
  void encode_ahead(std::span<const ImageView> frames) override { session_->encode_ahead(frames); }

 private:
  void start_pending();

  std::shared_ptr<const Network> network_;
  std::unique_ptr<TrackingSession> session_;
  float visible_threshold_;
  std::vector<Query> pending_;             // added before the first frame
  std::map<std::string, int> handles_;     // id -> session handle
  std::vector<std::string> order_;         // ids in the order they were added
};

}  // namespace edgetap::engine
