// A camera's tracker on its degradation ladder: the tracker of the rung in
// force, frames resized to the rung's size, coordinates kept in the camera's
// model-size pixels. Switching rungs keeps every track's id and position: the
// new rung's tracker sees the last frame again and starts each live track
// where it was. A track a rung gives up (klt's forward-backward check, a lower
// rung's point cap, one lost while a new rung caught up) is held: reported
// occluded where it was last seen, with its id, and restarted by the next rung
// that takes over. A ladder of one rung has nowhere to restart it: there the
// track is reported lost, once.
//
// A rung whose tracker fails (an error other than a bad frame, or an
// exception: a CUDA fault, an allocation that cannot be made) is marked failed
// and never used again: the ladder moves at once to the next rung below that
// builds, keeping ids and positions, and take_failover() says so once. The
// frame that failed is reported not tracked; the next one runs on the new rung.
//
// The governor's moves do not stop the camera: begin_switch builds the new
// rung's tracker on a thread of its own (rung_build.hpp) while the rung in
// force keeps tracking, and the new one takes over at the first frame after
// it caught up, with the same ids and positions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/ladder/rung_build.hpp"
#include "edgetap/ladder/tracker_factory.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

// The camera's ladder: its `ladder`, or the default for its `tracker` (on a
// GPU with FP16 rungs after the first). Rungs this process cannot run (fp16
// without a usable CUDA device) are left out and listed in `skipped`.
std::vector<config::Rung> resolve_ladder(const config::CameraConfig& camera, std::vector<std::string>& skipped);
// The same for a process whose edgetap trackers do (`gpu`) or do not run on a GPU.
std::vector<config::Rung> resolve_ladder(const config::CameraConfig& camera, std::vector<std::string>& skipped,
                                         bool gpu);
// The rung as messages and logs name it: edgetap-fp32-256x256-i2, or with a rung's own
// model file edgetap-large-fp32-256x256; klt, klt-s2.
std::string rung_name(const config::Rung& rung, const config::CameraConfig& camera);

// Makes the tracker of one rung (sizes resolved against the camera), or null with `error`.
using RungTrackerFactory = std::function<std::unique_ptr<Tracker>(const config::Rung&, std::string& error)>;
RungTrackerFactory rung_tracker_factory(const config::CameraConfig& camera, ModelCache& models);

// Builds every rung's tracker once, so that a rung the model cannot run (more iterations than
// it has, a size it cannot take) fails the camera when it starts, not at its first switch.
// false, with the rung named in `error`, on the first that fails.
bool check_rungs(const config::CameraConfig& camera, const std::vector<config::Rung>& rungs,
                 const RungTrackerFactory& factory, std::string& error);

class LadderedTracker final : public Tracker {
 public:
  // Starts on rung 0; null with `error` when rung 0's tracker cannot be made.
  static std::unique_ptr<LadderedTracker> make(const config::CameraConfig& camera, std::vector<config::Rung> rungs,
                                               RungTrackerFactory factory, std::string& error);

  std::string_view name() const noexcept override { return names_[static_cast<std::size_t>(current_)]; }
  void add_queries(std::span<const Query> queries) override;
  std::size_t remove_queries(std::span<const std::string> ids) override;
  std::size_t size() const noexcept override { return tracker_->size() + held_.size(); }
  std::size_t capacity() const noexcept override;
  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override;
  // The rung in force's tracker, at the rung's size, for at most its cap of points.
  Status warm_up(int width, int height, std::size_t points) noexcept override;

  int rungs() const noexcept { return static_cast<int>(rungs_.size()); }
  std::string_view name_of(int rung) const { return names_.at(static_cast<std::size_t>(rung)); }
  int rung() const noexcept { return current_; }
  const config::Rung& current_rung() const noexcept { return rungs_[static_cast<std::size_t>(current_)]; }
  int stride() const noexcept { return rungs_[static_cast<std::size_t>(current_)].stride; }
  // Moves to `rung`, keeping ids and positions; false (staying put) with `error`
  // on failure, or for a rung that failed before.
  bool switch_to(int rung, std::string& error);
  // Starts moving to `rung` without stopping the rung in force; take_switch()
  // says when it took over or why it could not. false with `error`, staying
  // put, for a rung out of range or one that failed before. A switch or
  // fail-over meanwhile abandons it.
  bool begin_switch(int rung, std::string& error);
  bool switching() const noexcept { return build_ != nullptr; }
  struct Switch {
    int from = 0, to = 0;
    std::string error;  // empty: `to` took over
  };
  std::optional<Switch> take_switch();
  // The last fail-over, once: which rung failed, why, and where the ladder went.
  struct Failover {
    int from = 0, to = 0;  // `to` == `from` when no rung below could take over
    std::string message;
  };
  std::optional<Failover> take_failover();

 private:
  LadderedTracker(const config::CameraConfig& camera, std::vector<config::Rung> rungs, RungTrackerFactory factory);
  ImageView rung_view(const ImageView& frame, int rung);
  RungBuild::Frame rung_frame(const ImageView& frame, int rung);
  // Where every live track and every point added since the last frame starts on
  // `rung` (its pixels); those over its cap go to `over_cap`.
  std::vector<Query> restart_points(int rung, std::vector<TrackPoint>& over_cap) const;
  // `points` (model pixels) as queries at `rung`'s pixels, at most `room` of them; the rest lost, into `over_cap`.
  std::vector<Query> start_points(const std::vector<Query>& points, int rung, std::size_t room,
                                  std::vector<TrackPoint>& over_cap) const;
  // The built rung takes over when it has caught up; a failed build is reported.
  void adopt_build();
  bool holds_tracks() const noexcept { return rungs() > 1; }
  // Moves the tracks the rung in force gave up in `out` to held_, and reports every held one.
  void hold_given_up(std::vector<TrackPoint>& out);
  // Marks the rung in force failed and moves to the first rung below it that
  // builds; the Failover is kept for take_failover().
  void fail_over(const std::string& reason) noexcept;
  bool switch_to_unguarded(int rung, std::string& error);
  std::size_t capacity_of(int rung) const noexcept;
  float to_rung_x(float x, int rung) const;
  float to_rung_y(float y, int rung) const;

  const int model_width_, model_height_;
  std::vector<config::Rung> rungs_;
  std::vector<std::string> names_;
  RungTrackerFactory factory_;
  int current_ = 0;
  std::unique_ptr<Tracker> tracker_;
  std::vector<std::uint8_t> last_frame_;  // model size, for re-starting tracks on a switch
  std::vector<std::uint8_t> resized_;
  std::vector<TrackPoint> live_;          // model pixels, after the last frame
  std::vector<Query> unpushed_;           // model pixels, added since the last frame
  std::vector<TrackPoint> pending_lost_;  // over a new rung's cap: reported with the next frame
  std::vector<TrackPoint> held_;          // model pixels: given up by the rung in force, reported occluded
  std::vector<std::string> failed_;       // per rung: why its tracker failed ("" = usable)
  std::optional<Failover> failover_;
  // A rung being built by begin_switch, and what changed in the camera's points meanwhile.
  std::unique_ptr<RungBuild> build_;
  int build_rung_ = -1;
  std::vector<std::string> added_while_building_, removed_while_building_;
  std::vector<TrackPoint> over_built_cap_;
  std::optional<Switch> switch_;
};

}  // namespace edgetap::pipeline
