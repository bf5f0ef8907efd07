#include "edgetap/ladder/laddered_tracker.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/kernels/gpu_probe.hpp"
#include "edgetap/tracking/klt_tracker.hpp"
#include "edgetap/pixel_scale.hpp"

namespace edgetap::pipeline {
namespace {

// A side scaled by `factor`, rounded down to a multiple of 32 (the network's need), at least 64.
int scaled_side(int side, double factor) { return std::max(64, static_cast<int>(side * factor) / 32 * 32); }

// The most points the CPU default ladder's last network rung tracks.
constexpr int kCpuLastRungPoints = 256;

// The default ladder's rungs: the camera's model at fp32, or klt.
config::Rung edgetap_rung(int width, int height, int iters = 0, int max_points = 0, int stride = 1) {
  config::Rung rung;
  rung.width = width;
  rung.height = height;
  rung.iters = iters;
  rung.max_points = max_points;
  rung.stride = stride;
  return rung;
}

config::Rung klt_rung() {
  config::Rung rung;
  rung.tracker = config::TrackerKind::klt;
  return rung;
}

// "edgetap" for the camera's own model; for a rung's model file, its name without the
// extension, "edgetap-" in front unless the name starts so (edgetap-large, edgetap-mine).
std::string model_label(const std::string& model) {
  if (model.empty()) return "edgetap";
  const std::string stem = std::filesystem::path(model).stem().string();
  return stem.rfind("edgetap", 0) == 0 ? stem : "edgetap-" + stem;
}

// The default ladder. klt: klt alone. edgetap on the CPU: the camera's model
// (edgetap-small unless it names one) at full size, then smaller inputs and
// fewer iterations, then half the frames, then klt. On a GPU every network
// rung is FP16, and a camera that names no model starts with the bundled
// edgetap-large (full size, then 0.75x with 2 iterations) before edgetap-small.
std::vector<config::Rung> default_ladder(const config::CameraConfig& camera, bool gpu) {
  if (camera.tracker == config::TrackerKind::klt) return {klt_rung()};
  const int w = camera.model_width, h = camera.model_height;
  std::vector<config::Rung> ladder;
  if (gpu && camera.edgetap.model.empty()) {
    const std::string large = bundled_large_model_path();
    ladder.push_back(edgetap_rung(w, h));
    ladder.push_back(edgetap_rung(scaled_side(w, 0.75), scaled_side(h, 0.75), 2));
    for (config::Rung& rung : ladder) rung.model = large;
  }
  ladder.push_back(edgetap_rung(w, h));
  ladder.push_back(edgetap_rung(scaled_side(w, 0.75), scaled_side(h, 0.75), 2));
  // The CPU's last network rung tracks at most 256 points; a GPU's keeps them all (its
  // cost grows little with points, and a cap reports every track past it lost).
  ladder.push_back(edgetap_rung(scaled_side(w, 0.5), scaled_side(h, 0.5), 1, gpu ? 0 : kCpuLastRungPoints, 2));
  if (gpu) {
    for (config::Rung& rung : ladder) rung.precision = config::Precision::fp16;
  }
  ladder.push_back(klt_rung());
  return ladder;
}

// The frame's rows, packed without padding into `rgb`.
void pack_rows(const ImageView& frame, std::vector<std::uint8_t>& rgb) {
  rgb.resize(frame.packed_bytes());
  copy_rows_packed(frame, rgb.data());
}

}  // namespace

std::vector<config::Rung> resolve_ladder(const config::CameraConfig& camera, std::vector<std::string>& skipped) {
  return resolve_ladder(camera, skipped, backend::network_on_gpu());
}

std::vector<config::Rung> resolve_ladder(const config::CameraConfig& camera, std::vector<std::string>& skipped,
                                         bool gpu) {
  std::vector<config::Rung> ladder = camera.ladder;
  if (ladder.empty()) ladder = default_ladder(camera, gpu);
  std::vector<config::Rung> usable;
  for (config::Rung rung : ladder) {
    if (rung.width == 0) rung.width = camera.model_width;
    if (rung.height == 0) rung.height = camera.model_height;
    if (rung.precision == config::Precision::fp16 && !gpu) {
      skipped.push_back(rung_name(rung, camera) + " (fp16 needs a CUDA device: " + backend::probe_gpus().reason + ")");
      continue;
    }
    usable.push_back(rung);
  }
  return usable;
}

std::string rung_name(const config::Rung& rung, const config::CameraConfig& camera) {
  if (rung.tracker == config::TrackerKind::klt) return rung.stride > 1 ? "klt-s" + std::to_string(rung.stride) : "klt";
  std::string name = model_label(rung.model) + "-" + config::to_string(rung.precision) + "-" +
                     std::to_string(rung.width ? rung.width : camera.model_width) + "x" +
                     std::to_string(rung.height ? rung.height : camera.model_height);
  if (rung.iters > 0) name += "-i" + std::to_string(rung.iters);
  if (rung.max_points > 0) name += "-p" + std::to_string(rung.max_points);
  if (rung.stride > 1) name += "-s" + std::to_string(rung.stride);
  if (rung.template_refinement == false) name += "-unrefined";
  return name;
}

RungTrackerFactory rung_tracker_factory(const config::CameraConfig& camera, ModelCache& models) {
  return [camera, &models](const config::Rung& rung, std::string& error) -> std::unique_ptr<Tracker> {
    return make_tracker(tracker_spec(camera, rung), models, error);
  };
}

bool check_rungs(const config::CameraConfig& camera, const std::vector<config::Rung>& rungs,
                 const RungTrackerFactory& factory, std::string& error) {
  for (const config::Rung& rung : rungs) {
    std::string rung_error;
    if (!factory(rung, rung_error)) {
      error = "ladder rung " + rung_name(rung, camera) + ": " + rung_error;
      return false;
    }
  }
  return true;
}

LadderedTracker::LadderedTracker(const config::CameraConfig& camera, std::vector<config::Rung> rungs,
                                 RungTrackerFactory factory)
    : model_width_(camera.model_width), model_height_(camera.model_height), rungs_(std::move(rungs)),
      factory_(std::move(factory)) {
  for (const config::Rung& rung : rungs_) names_.push_back(rung_name(rung, camera));
  failed_.resize(rungs_.size());
}

std::unique_ptr<LadderedTracker> LadderedTracker::make(const config::CameraConfig& camera,
                                                       std::vector<config::Rung> rungs, RungTrackerFactory factory,
                                                       std::string& error) {
  if (rungs.empty()) {
    error = "the ladder has no rung this build can run";
    return nullptr;
  }
  std::unique_ptr<LadderedTracker> tracker(new LadderedTracker(camera, std::move(rungs), std::move(factory)));
  tracker->tracker_ = tracker->factory_(tracker->rungs_[0], error);
  if (!tracker->tracker_) return nullptr;
  return tracker;
}

std::size_t LadderedTracker::capacity_of(int rung) const noexcept {
  const int cap = rungs_[static_cast<std::size_t>(rung)].max_points;
  return cap > 0 ? static_cast<std::size_t>(cap) : Tracker::capacity();
}

std::size_t LadderedTracker::capacity() const noexcept { return capacity_of(current_); }

float LadderedTracker::to_rung_x(float x, int rung) const {
  return rescale_pixel(x, static_cast<float>(rungs_[static_cast<std::size_t>(rung)].width) / static_cast<float>(model_width_));
}

float LadderedTracker::to_rung_y(float y, int rung) const {
  return rescale_pixel(y, static_cast<float>(rungs_[static_cast<std::size_t>(rung)].height) / static_cast<float>(model_height_));
}

void LadderedTracker::add_queries(std::span<const Query> queries) {
  unpushed_.insert(unpushed_.end(), queries.begin(), queries.end());  // a rung that takes over starts them too
  std::erase_if(held_, [&](const TrackPoint& h) {
    return std::any_of(queries.begin(), queries.end(), [&](const Query& q) { return q.id == h.id; });
  });
  if (build_) {
    for (const Query& q : queries) added_while_building_.push_back(q.id);
  }
  std::vector<Query> scaled(queries.begin(), queries.end());
  for (Query& q : scaled) {
    q.x = to_rung_x(q.x, current_);
    q.y = to_rung_y(q.y, current_);
  }
  try {
    tracker_->add_queries(scaled);
  } catch (const std::exception& e) {
    fail_over(std::string("adding points: ") + e.what());
  }
}

std::size_t LadderedTracker::remove_queries(std::span<const std::string> ids) {
  auto removed = [&](const auto& p) { return std::find(ids.begin(), ids.end(), p.id) != ids.end(); };
  std::erase_if(live_, removed);
  std::erase_if(unpushed_, removed);
  const std::size_t held_removed = std::erase_if(held_, removed);
  if (build_) {
    std::erase_if(added_while_building_, [&](const std::string& id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); });
    removed_while_building_.insert(removed_while_building_.end(), ids.begin(), ids.end());
  }
  return tracker_->remove_queries(ids) + held_removed;
}

ImageView LadderedTracker::rung_view(const ImageView& frame, int rung_index) {
  const config::Rung& rung = rungs_[static_cast<std::size_t>(rung_index)];
  if (rung.width == frame.width && rung.height == frame.height) return frame;
  const cv::Mat src(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.data), frame.stride);
  resized_.resize(static_cast<std::size_t>(rung.width) * rung.height * 3);
  cv::Mat dst(rung.height, rung.width, CV_8UC3, resized_.data());
  cv::resize(src, dst, dst.size(), 0, 0, cv::INTER_AREA);
  return {resized_.data(), rung.width, rung.height, static_cast<std::size_t>(rung.width) * 3};
}

RungBuild::Frame LadderedTracker::rung_frame(const ImageView& frame, int rung) {
  const ImageView view = rung_view(frame, rung);
  RungBuild::Frame packed;
  packed.width = view.width;
  packed.height = view.height;
  pack_rows(view, packed.rgb);
  return packed;
}

Status LadderedTracker::warm_up(int /*width*/, int /*height*/, std::size_t points) noexcept {
  const config::Rung& rung = rungs_[static_cast<std::size_t>(current_)];
  return tracker_->warm_up(rung.width, rung.height, std::min(points, capacity_of(current_)));
}

Status LadderedTracker::push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept {
  try {
    if (build_) adopt_build();
    pack_rows(frame, last_frame_);
    Status status = tracker_->push_frame(rung_view(frame, current_), out);
    if (!status) {
      if (status.code() != Status::Code::bad_frame) fail_over(status.message());
      return status;
    }
    if (build_) build_->push(rung_frame(frame, build_rung_));
    const config::Rung& rung = rungs_[static_cast<std::size_t>(current_)];
    const float sx = static_cast<float>(model_width_) / static_cast<float>(rung.width);
    const float sy = static_cast<float>(model_height_) / static_cast<float>(rung.height);
    for (TrackPoint& p : out) {
      p.x = rescale_pixel(p.x, sx);
      p.y = rescale_pixel(p.y, sy);
    }
    out.insert(out.end(), pending_lost_.begin(), pending_lost_.end());
    pending_lost_.clear();
    if (holds_tracks()) hold_given_up(out);
    unpushed_.clear();
    live_.clear();
    for (const TrackPoint& p : out) {
      if (!p.lost) live_.push_back(p);
    }
    return Status::ok();
  } catch (const std::exception& e) {
    fail_over(e.what());
    return Status::error(Status::Code::internal, std::string("ladder: ") + e.what());
  }
}

// A track the rung in force reported lost, or stopped reporting (one that a
// rung lost while it caught up), is held where it was last seen; every held
// track is reported occluded, with its id, until a rung change restarts it.
void LadderedTracker::hold_given_up(std::vector<TrackPoint>& out) {
  std::unordered_set<std::string_view> reported;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    TrackPoint& p = out[i];
    if (p.lost) {
      held_.push_back({std::move(p.id), p.x, p.y, false, 0.f, false});
      continue;
    }
    if (kept != i) out[kept] = std::move(p);
    reported.insert(out[kept].id);
    ++kept;
  }
  out.resize(kept);
  for (const TrackPoint& h : held_) reported.insert(h.id);
  for (const TrackPoint& p : live_) {
    if (!reported.contains(p.id)) held_.push_back({p.id, p.x, p.y, false, 0.f, false});
  }
  out.insert(out.end(), held_.begin(), held_.end());
}

void LadderedTracker::fail_over(const std::string& reason) noexcept {
  build_.reset();  // the move in progress, if any, gives way to this one
  const int from = current_;
  failed_[static_cast<std::size_t>(from)] = reason.empty() ? "failed" : reason;
  std::string refused;
  for (int next = from + 1; next < rungs(); ++next) {
    std::string error;
    if (switch_to(next, error)) {
      failover_ = Failover{from, next, "rung " + names_[static_cast<std::size_t>(from)] + " failed (" + reason +
                                           "): now on " + names_[static_cast<std::size_t>(next)] + ", tracks kept" +
                                           refused};
      return;
    }
    refused += "; rung " + names_[static_cast<std::size_t>(next)] + " refused: " + error;
  }
  failover_ = Failover{from, from, "rung " + names_[static_cast<std::size_t>(from)] + " failed (" + reason +
                                       ") and no rung below it could take over" + refused};
}

std::optional<LadderedTracker::Failover> LadderedTracker::take_failover() { return std::exchange(failover_, std::nullopt); }

bool LadderedTracker::switch_to(int rung, std::string& error) {
  if (rung >= 0 && rung < rungs() && !failed_[static_cast<std::size_t>(rung)].empty()) {
    error = "it failed before: " + failed_[static_cast<std::size_t>(rung)];
    return false;
  }
  try {
    return switch_to_unguarded(rung, error);
  } catch (const std::exception& e) {  // the factory or the new tracker threw: this rung cannot take over
    error = e.what();
    return false;
  }
}

std::vector<Query> LadderedTracker::start_points(const std::vector<Query>& points, int rung, std::size_t room,
                                                std::vector<TrackPoint>& over_cap) const {
  std::vector<Query> queries;
  for (const Query& p : points) {
    if (queries.size() >= room) {
      over_cap.push_back({p.id, p.x, p.y, false, 0.f, true});
    } else {
      queries.push_back({p.id, to_rung_x(p.x, rung), to_rung_y(p.y, rung)});
    }
  }
  return queries;
}

std::vector<Query> LadderedTracker::restart_points(int rung, std::vector<TrackPoint>& over_cap) const {
  std::vector<Query> points;
  for (const TrackPoint& p : live_) points.push_back({p.id, p.x, p.y});
  points.insert(points.end(), unpushed_.begin(), unpushed_.end());
  return start_points(points, rung, capacity_of(rung), over_cap);
}

bool LadderedTracker::switch_to_unguarded(int rung, std::string& error) {
  build_.reset();
  if (rung < 0 || rung >= rungs() || rung == current_) return rung == current_;
  auto next = factory_(rungs_[static_cast<std::size_t>(rung)], error);
  if (!next) return false;
  if (!last_frame_.empty()) {
    // The new tracker sees the last frame and starts every live track where it was.
    std::vector<TrackPoint> ignored;
    const ImageView last{last_frame_.data(), model_width_, model_height_, static_cast<std::size_t>(model_width_) * 3};
    const Status status = next->push_frame(rung_view(last, rung), ignored);
    if (!status) {
      error = status.message();
      return false;
    }
  }
  std::vector<TrackPoint> over_cap;
  next->add_queries(restart_points(rung, over_cap));
  pending_lost_.insert(pending_lost_.end(), over_cap.begin(), over_cap.end());
  held_.clear();  // restarted on the new rung with the live tracks
  current_ = rung;  // rung_view, capacity and to_rung_* speak of the new rung from here
  tracker_ = std::move(next);
  return true;
}

bool LadderedTracker::begin_switch(int rung, std::string& error) {
  if (rung < 0 || rung >= rungs()) {
    error = "no rung " + std::to_string(rung);
    return false;
  }
  if (!failed_[static_cast<std::size_t>(rung)].empty()) {
    error = "it failed before: " + failed_[static_cast<std::size_t>(rung)];
    return false;
  }
  build_.reset();
  added_while_building_.clear();
  removed_while_building_.clear();
  over_built_cap_.clear();
  if (rung == current_) return true;
  RungBuild::Frame first;
  if (!last_frame_.empty()) {
    first = rung_frame({last_frame_.data(), model_width_, model_height_, static_cast<std::size_t>(model_width_) * 3},
                       rung);
  }
  build_rung_ = rung;
  build_ = std::make_unique<RungBuild>(
      [factory = factory_, target = rungs_[static_cast<std::size_t>(rung)]](std::string& make_error) {
        return factory(target, make_error);
      },
      std::move(first), restart_points(rung, over_built_cap_));
  return true;
}

// At the start of a frame: the built tracker has seen every frame before it.
// Points added meanwhile start where the rung in force last saw them.
void LadderedTracker::adopt_build() {
  if (build_->failed()) {
    switch_ = Switch{current_, build_rung_, build_->error()};
    build_.reset();
    return;
  }
  std::unique_ptr<Tracker> built = build_->take();
  if (!built) return;
  build_.reset();
  const int from = current_;
  built->remove_queries(removed_while_building_);
  std::vector<Query> points;
  for (const std::string& id : added_while_building_) {
    const auto live = std::find_if(live_.begin(), live_.end(), [&](const TrackPoint& p) { return p.id == id; });
    const auto unpushed = std::find_if(unpushed_.begin(), unpushed_.end(), [&](const Query& q) { return q.id == id; });
    if (unpushed != unpushed_.end()) {
      points.push_back(*unpushed);
    } else if (live != live_.end()) {
      points.push_back({id, live->x, live->y});
    }
  }
  const std::size_t cap = capacity_of(build_rung_);
  const std::vector<Query> added =
      start_points(points, build_rung_, cap > built->size() ? cap - built->size() : 0, over_built_cap_);
  try {
    built->add_queries(added);
  } catch (const std::exception& e) {  // the new rung failed, not the one in force
    switch_ = Switch{from, build_rung_, std::string("adding the points added while it was built: ") + e.what()};
    return;
  }
  pending_lost_.insert(pending_lost_.end(), over_built_cap_.begin(), over_built_cap_.end());
  held_.clear();  // the built rung started them; those it lost while catching up are held again
  added_while_building_.clear();
  removed_while_building_.clear();
  over_built_cap_.clear();
  current_ = build_rung_;
  tracker_ = std::move(built);
  switch_ = Switch{from, current_, ""};
}

std::optional<LadderedTracker::Switch> LadderedTracker::take_switch() { return std::exchange(switch_, std::nullopt); }

}  // namespace edgetap::pipeline
