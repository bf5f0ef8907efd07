#include "edgetap/daemon/camera_worker.hpp"

#include <chrono>

#include "edgetap/daemon/logging.hpp"
#include "edgetap/pipeline/klt_tracker.hpp"
#include "edgetap/pipeline/track_message.hpp"

namespace edgetap::daemon {
namespace {

using Clock = std::chrono::steady_clock;

pipeline::FrameQueue::Overflow overflow_for(const config::CameraConfig& camera) {
  // A file read as fast as possible waits for the tracker instead of skipping frames.
  const bool unpaced_file =
      camera.source.kind == config::SourceKind::file && camera.capture.pace == config::Pace::fast;
  return unpaced_file ? pipeline::FrameQueue::Overflow::block : pipeline::FrameQueue::Overflow::drop_oldest;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::int64_t now_unix_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

CameraWorker::CameraWorker(const config::CameraConfig& camera, pipeline::Publisher* publisher,
                           FrameObserver observer)
    : camera_(camera),
      log_(make_logger("camera/" + camera.name)),
      publisher_(publisher),
      observer_(std::move(observer)),
      queue_(static_cast<std::size_t>(camera.capture.queue), overflow_for(camera)),
      capture_(camera, queue_, log_),
      session_(std::make_unique<pipeline::KltTracker>(camera.klt), pipeline::QuerySeeder(camera.queries)) {
  stats_.name = camera.name;
}

CameraWorker::~CameraWorker() { stop(); }

bool CameraWorker::start() {
  started_ = Clock::now();
  log_->info("starting: source {} ({}), model size {}x{}, tracker {}, queries {}", camera_.source.uri,
             config::to_string(camera_.source.kind), camera_.model_width, camera_.model_height, camera_.tracker,
             config::to_string(camera_.queries.policy));
  std::string error;
  const bool started = capture_.start(error);
  thread_ = std::thread([this] { track_loop(); });
  return started;
}

void CameraWorker::stop() {
  stopping_ = true;
  capture_.stop();
  if (thread_.joinable()) thread_.join();
}

void CameraWorker::track_loop() {
  std::vector<TrackPoint> points;
  while (!stopping_) {
    std::optional<pipeline::Frame> frame = queue_.pop(std::chrono::milliseconds(100));
    if (!frame) {
      if (queue_.closed() && queue_.size() == 0) break;
      continue;
    }
    track_one(*frame, points);
  }
  finished_ = true;
}

void CameraWorker::track_one(const pipeline::Frame& frame, std::vector<TrackPoint>& points) {
  const auto t0 = Clock::now();
  const Status status = session_.process(frame, points);
  const double tracker_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!status) {
    log_->error("frame {} not tracked: {}", frame.index, status.message());
    return;
  }
  std::uint64_t lost = 0;
  for (const TrackPoint& p : points) lost += p.lost ? 1 : 0;

  std::uint64_t seq = 0;
  {
    std::lock_guard lock(stats_mutex_);
    seq = stats_.frames_tracked++;
  }
  pipeline::TrackMessage message;
  message.camera = camera_.name;
  message.seq = seq;
  message.frame = &frame;
  message.tracker_ms = tracker_ms;
  message.queue_drops = queue_.drops();
  message.points = &points;
  message.publish_unix_us = now_unix_us();
  message.latency_ms = static_cast<double>(now_ns() - frame.capture_steady_ns) / 1e6;
  if (publisher_ != nullptr && camera_.publish.socket) publisher_->publish(camera_.name, encode_ndjson(message));
  if (observer_) observer_(frame, points);

  std::lock_guard lock(stats_mutex_);
  tracker_ms_sum_ += tracker_ms;
  latency_ms_sum_ += message.latency_ms;
  stats_.latency_ms_max = std::max(stats_.latency_ms_max, message.latency_ms);
  stats_.tracks_lost += lost;
  stats_.points = points.size() - lost;
}

CameraStats CameraWorker::stats() const {
  std::lock_guard lock(stats_mutex_);
  CameraStats s = stats_;
  s.frames_captured = capture_.frames_captured();
  s.queue_drops = queue_.drops();
  s.error = capture_.last_error();
  const pipeline::CaptureState state = capture_.state();
  s.state = stopping_ && state == pipeline::CaptureState::running ? "stopped" : pipeline::to_string(state);
  if (s.frames_tracked > 0) {
    s.tracker_ms_mean = tracker_ms_sum_ / static_cast<double>(s.frames_tracked);
    s.latency_ms_mean = latency_ms_sum_ / static_cast<double>(s.frames_tracked);
  }
  s.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  return s;
}

}  // namespace edgetap::daemon
