#include "edgetap/camera/camera_worker.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdlib>
#include <future>
#include <optional>

#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/thread_name.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/publish/track_message.hpp"
#include "edgetap/pixel_scale.hpp"

namespace edgetap::daemon {
namespace {

// A warm-up this long or longer is logged (the CPU engine's and klt's take nothing).
constexpr double kNoticedWarmUpMs = 1.0;

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

// What the rung in force runs and where: "klt on the CPU (OpenCV)", or the
// network's rung, its weights file and its engine.
std::string describe_rung(const pipeline::LadderedTracker& ladder, const config::CameraConfig& camera) {
  const config::Rung& rung = ladder.current_rung();
  if (rung.tracker == config::TrackerKind::klt) return std::string(ladder.name()) + " on the CPU (OpenCV)";
  const std::string model = !rung.model.empty()            ? rung.model
                            : !camera.edgetap.model.empty() ? camera.edgetap.model
                                                            : pipeline::bundled_model_path();
  const kernels::GpuProbe probe = backend::probe_gpus();
  const std::string engine = probe.devices.empty() ? "the CPU engine"
                                                   : "the CUDA engine, GPU " + std::to_string(probe.devices.front().index) +
                                                         " '" + probe.devices.front().name + "'";
  return std::string(ladder.name()) + " (" + model + ") on " + engine;
}

std::int64_t now_unix_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

// A camera's state from its capture's, where nothing else decides it.
CameraState camera_state(pipeline::CaptureState state) {
  switch (state) {
    case pipeline::CaptureState::idle: return CameraState::idle;
    case pipeline::CaptureState::running: return CameraState::running;
    case pipeline::CaptureState::ended: return CameraState::ended;
    case pipeline::CaptureState::failed: return CameraState::failed;
  }
  return CameraState::idle;
}

}  // namespace

CameraWorker::CameraWorker(const config::CameraConfig& camera, pipeline::MessageSink* sink,
                           pipeline::ModelCache& models, pipeline::ComputeGate& gate, pipeline::GovernorPeers& peers,
                           FrameObserver observer,
                           pipeline::CameraDirectory* directory)
    : camera_(camera),
      live_(camera.source.kind != config::SourceKind::file),
      log_(make_logger("camera/" + camera.name)),
      sink_(sink),
      observer_(std::move(observer)),
      queue_overflow_blocks_(overflow_for(camera) == pipeline::FrameQueue::Overflow::block),
      queue_(static_cast<std::size_t>(camera.capture.queue), overflow_for(camera)),
      capture_(camera, queue_, log_),
      gate_(gate),
      models_(models),
      directory_(directory),
      backoff_(std::chrono::milliseconds(camera.capture.retry_initial_ms),
               std::chrono::milliseconds(camera.capture.retry_max_ms), std::hash<std::string>{}(camera.name)) {
  stats_.name = camera.name;
  if (directory_ != nullptr) directory_->set_engine(camera.name, std::nullopt);  // until a tracker is made
  std::vector<std::string> skipped;
  session_ = pipeline::TrackSession::build(camera, models, skipped, tracker_error_);
  for (const std::string& rung : skipped) log_->warn("ladder rung {} left out", rung);
  if (!session_) return;
  governor_ = std::make_unique<pipeline::LatencyGovernor>(camera.governor, camera.budget_ms,
                                                          session_->ladder().rungs(), &peers);
  stats_.rung = std::string(session_->ladder().name());
  stats_.rungs_used.push_back(stats_.rung);
  note_engine();
}

CameraWorker::~CameraWorker() { stop(); }

void CameraWorker::warm_up() {
  if (!session_) return;
  const auto t0 = Clock::now();
  const Status status = session_->warm_up(camera_.model_width, camera_.model_height);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!status) {
    log_->warn("warm-up failed ({}): the first frames pay the set-up", status.message());
  } else if (ms >= kNoticedWarmUpMs) {
    log_->info("tracker set-up paid before streaming: {:.0f} ms", ms);
  }
}

void CameraWorker::start() {
  started_ = Clock::now();
  if (!session_) {
    log_->error("not started: {}", tracker_error_);
    finished_ = true;
    return;
  }
  log_->info("starting: source {} ({}), model size {}x{}, tracker {}, queries {}", camera_.source.uri,
             config::to_string(camera_.source.kind), camera_.model_width, camera_.model_height,
             describe_rung(session_->ladder(), camera_), config::to_string(camera_.queries.policy));
  std::string error;
  capture_.start(error);  // a failure is in the capture's state; supervise() retries live sources
  thread_ = std::thread([this] { track_loop(); });
}

// The tracking thread goes first: its supervise() may be restarting the
// capture, which must not be stopped from this thread at the same time.
void CameraWorker::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  capture_.stop();
}

void CameraWorker::track_loop() {
  name_this_thread("track:" + camera_.name);
  std::vector<TrackPoint> points;
  while (!stopping_) {
    run_control_tasks();
    std::optional<pipeline::Frame> frame = queue_.pop(std::chrono::milliseconds(100));
    if (frame) {
      if (session_->skips(frame->index)) {
        std::lock_guard lock(stats_mutex_);
        ++stats_.frames_strided;
        continue;
      }
      track_one(*frame, points);
      if (!restored_points_.empty() && source_width_ > 0) add_restored_points();
      continue;
    }
    if (!queue_.closed()) {
      if (live_) supervise();  // stall detection
      continue;
    }
    if (!live_ && queue_.size() == 0) break;  // a file has ended or failed
    supervise();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  finished_ = true;
  run_control_tasks();  // answer waiting requests
}

void CameraWorker::supervise() {
  const std::int64_t now = now_ns();
  const pipeline::CaptureState state = capture_.state();
  if (restart_at_ns_ == 0) {
    const double stall_s = static_cast<double>(now - capture_.last_activity_steady_ns()) / 1e9;
    const bool stalled = state == pipeline::CaptureState::running && camera_.capture.stall_timeout_s > 0 &&
                         stall_s > camera_.capture.stall_timeout_s;
    const bool down = state == pipeline::CaptureState::failed || state == pipeline::CaptureState::ended;
    if (!stalled && !down) return;
    if (capture_.frames_captured() > frames_at_restart_) backoff_.reset();  // it worked for a while
    const auto wait = backoff_.next();
    restart_at_ns_ = now + std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    log_->warn("{}: restarting the pipeline in {} ms (attempt {})",
               stalled ? "no frames for " + std::to_string(static_cast<int>(stall_s)) + " s" : capture_.last_error(),
               wait.count(), backoff_.attempts());
    if (stalled) capture_.stop();
    std::lock_guard lock(stats_mutex_);
    stats_.state = CameraState::reconnecting;
    return;
  }
  if (now < restart_at_ns_) return;
  restart_at_ns_ = 0;
  frames_at_restart_ = capture_.frames_captured();
  capture_.stop();
  std::string error;
  capture_.start(error);
  std::lock_guard lock(stats_mutex_);
  ++stats_.reconnects;
  stats_.state = CameraState::idle;  // the capture's own state from now on
}

// Nothing a frame does may end the process: an exception that escapes the
// tracker (which turns its own failures into a rung fail-over) fails this
// frame only, with one log line.
void CameraWorker::track_one(const pipeline::Frame& frame, std::vector<TrackPoint>& points) {
  try {
    track_and_publish(frame, points);
  } catch (const std::exception& e) {
    log_->error("frame {} not tracked: {}", frame.index, e.what());
  }
}

// Only the network on the CPU makes the cameras take turns: its BLAS threads
// would oversubscribe the cores if several cameras ran it at once. A GPU rung
// runs on its camera's own stream and overlaps the others (16 cameras on an
// H100: bench/NOTES-gpu.md, "Cameras on one GPU"); klt is one thread per camera.
// EDGETAP_COMPUTE_GATE_EVERY_RUNG=1 makes every rung take turns, for that comparison.
bool CameraWorker::rung_takes_turns() const {
  static const bool every_rung = std::getenv("EDGETAP_COMPUTE_GATE_EVERY_RUNG") != nullptr;
  return every_rung || (session_->ladder().current_rung().tracker != config::TrackerKind::klt && !backend::network_on_gpu());
}

void CameraWorker::track_and_publish(const pipeline::Frame& frame, std::vector<TrackPoint>& points) {
  Status status;
  double tracker_ms = 0;
  {
    std::optional<pipeline::ComputeGate::Turn> turn;
    if (rung_takes_turns()) turn.emplace(gate_);
    const auto t0 = Clock::now();
    status = session_->process(frame, points);
    tracker_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
  follow_switch();  // before the message that names the new rung goes out
  if (follow_failover("frame " + std::to_string(frame.index))) {
    if (!status) return;  // the fail-over's line says why this frame is not tracked
  }
  if (!status) {
    log_->error("frame {} not tracked: {}", frame.index, status.message());
    return;
  }
  std::uint64_t lost = 0;
  live_ids_.clear();
  for (const TrackPoint& p : points) {
    if (p.lost) {
      ++lost;
    } else {
      live_ids_.insert(p.id);
    }
  }
  source_width_ = frame.source_width;
  source_height_ = frame.source_height;
  model_width_ = frame.width;
  model_height_ = frame.height;

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
  message.rung = std::string(session_->ladder().name());
  message.points = &points;
  message.publish_unix_us = now_unix_us();
  message.latency_ms = static_cast<double>(now_ns() - frame.capture_steady_ns) / 1e6;
  if (sink_ != nullptr) sink_->publish(camera_.name, encode_ndjson(message));
  if (observer_) observer_(frame, points);

  {
    std::lock_guard lock(stats_mutex_);
    tracker_ms_sum_ += tracker_ms;
    latency_ms_sum_ += message.latency_ms;
    stats_.latency_ms_max = std::max(stats_.latency_ms_max, message.latency_ms);
    const auto bucket = std::lower_bound(kLatencyBucketsMs.begin(), kLatencyBucketsMs.end(), message.latency_ms);
    ++stats_.latency_buckets[static_cast<std::size_t>(bucket - kLatencyBucketsMs.begin())];
    stats_.tracks_lost += lost;
    stats_.points = points.size() - lost;
  }
  govern(message.latency_ms);
}

// On the tracking thread, after a frame was published. A move the governor
// asks for is built beside the rung in force (laddered_tracker.hpp); until it
// took over, the governor is not asked again: it would judge the old rung's
// frames as the new one's. A file read as fast as possible has no latency to
// keep: its frames wait in the queue by design, so it stays on its first rung.
void CameraWorker::govern(double latency_ms) {
  if (queue_overflow_blocks_ || session_->switching()) return;
  const double now_s = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  const auto change = governor_->observe(latency_ms, now_s);
  {
    std::lock_guard lock(stats_mutex_);
    stats_.latency_percentile_ms = governor_->percentile_ms();
  }
  if (!change) return;
  std::string error;
  if (!session_->begin_switch(change->to, error)) {
    log_->error("cannot move from rung {} to rung {}: {}", session_->ladder().name(), change->to, error);
    governor_->rung_failed(change->to, session_->ladder().rung(), now_s);
    return;
  }
  switch_reason_ = change->reason;
}

void CameraWorker::follow_switch() {
  const auto done = session_->take_switch();
  if (!done) return;
  if (!done->error.empty()) {
    log_->error("cannot move from rung {} to rung {}: {}", session_->ladder().name(), done->to, done->error);
    const double now_s = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
    governor_->rung_failed(done->to, session_->ladder().rung(), now_s);
    return;
  }
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.rung_changes;
    note_rung_locked();
  }
  note_engine();
  log_->warn("rung {} -> {}: {}", session_->ladder().name_of(done->from), session_->ladder().name(),
             switch_reason_);
}

// A rung whose tracker failed was left by the ladder itself: one log line,
// and the governor follows it there. True when that happened.
bool CameraWorker::follow_failover(const std::string& when) {
  const auto failover = session_->take_failover();
  if (!failover) return false;
  log_->error("{}: {}", when, failover->message);
  if (failover->to == failover->from) return true;
  const double now_s = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  governor_->rung_failed(failover->from, failover->to, now_s);
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.rung_changes;
    ++stats_.rung_failures;
    note_rung_locked();
  }
  note_engine();
  return true;
}

// What runs the rung in force, into the stats and the directory. Outside the
// stats lock: the model's version comes through the model cache's lock.
void CameraWorker::note_engine() {
  const pipeline::EngineInfo engine =
      pipeline::engine_info(session_->ladder().current_rung(), camera_, models_, backend::network_on_gpu());
  {
    std::lock_guard lock(stats_mutex_);
    stats_.engine = engine;
  }
  if (directory_ != nullptr) directory_->set_engine(camera_.name, engine);
}

// The rung now in force into the stats (stats_mutex_ held).
void CameraWorker::note_rung_locked() {
  stats_.rung = std::string(session_->ladder().name());
  stats_.rung_index = session_->ladder().rung();
  if (std::find(stats_.rungs_used.begin(), stats_.rungs_used.end(), stats_.rung) == stats_.rungs_used.end()) {
    stats_.rungs_used.push_back(stats_.rung);
  }
}

void CameraWorker::run_control_tasks() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(tasks_mutex_);
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) task();
}

PointsChange CameraWorker::run_on_tracking_thread(std::function<PointsChange()> task,
                                                  std::chrono::milliseconds timeout) {
  if (finished_) return {{}, {}, "the camera has stopped"};
  auto promise = std::make_shared<std::promise<PointsChange>>();
  std::future<PointsChange> result = promise->get_future();
  {
    std::lock_guard lock(tasks_mutex_);
    tasks_.push_back([this, promise, task = std::move(task)] {
      PointsChange change;
      if (finished_) {
        change.error = "the camera has stopped";
      } else {
        try {
          change = task();
        } catch (const std::exception& e) {  // the tracker's; the camera goes on
          change.error = std::string("the tracker failed: ") + e.what();
          log_->error("{}", change.error);
        }
      }
      follow_failover("changing points");
      promise->set_value(std::move(change));
    });
  }
  if (result.wait_for(timeout) != std::future_status::ready) return {{}, {}, "the camera did not answer in time"};
  return result.get();
}

PointsChange CameraWorker::add_points(const std::vector<config::ExplicitPoint>& points,
                                      std::chrono::milliseconds timeout, std::size_t max_live,
                                      std::function<void(const std::vector<std::string>&)> on_applied) {
  return run_on_tracking_thread(
      [this, points, max_live, on_applied = std::move(on_applied)] {
        PointsChange change = add_points_now(points, max_live);
        if (on_applied) on_applied(change.applied);
        return change;
      },
      timeout);
}

void CameraWorker::restore_points(std::vector<config::ExplicitPoint> points, std::size_t max_live) {
  restored_points_ = std::move(points);
  restored_max_live_ = max_live;
}

void CameraWorker::add_restored_points() {
  std::vector<config::ExplicitPoint> points;
  points.swap(restored_points_);
  PointsChange change;
  try {
    change = add_points_now(points, restored_max_live_);
  } catch (const std::exception& e) {  // the tracker's; the camera goes on
    change.error = std::string("the tracker failed: ") + e.what();
  }
  follow_failover("restoring points");
  if (!change.error.empty()) {
    log_->error("saved points not restored: {}", change.error);
    return;
  }
  log_->info("restored {} saved points", change.applied.size());
  for (const std::string& reason : change.rejected) log_->warn("saved point not restored: {}", reason);
}

// On the tracking thread.
PointsChange CameraWorker::add_points_now(const std::vector<config::ExplicitPoint>& points, std::size_t max_live) {
  PointsChange change;
  if (source_width_ == 0) {
    change.error = "no frame has been tracked yet: points are placed on the latest frame";
    return change;
  }
  const double sx = static_cast<double>(model_width_) / source_width_;
  const double sy = static_cast<double>(model_height_) / source_height_;
  std::vector<Query> queries;
  for (const config::ExplicitPoint& p : points) {
    if (live_ids_.count(p.id)) {
      change.rejected.push_back(p.id + ": a track with this id exists");
    } else if (live_ids_.size() >= max_live) {
      change.rejected.push_back(p.id + ": the camera would track more than " + std::to_string(max_live) +
                                " points, the most add_points allows (control.max_points_per_camera)");
    } else if (p.x < 0 || p.y < 0 || p.x > source_width_ - 1 || p.y > source_height_ - 1) {
      change.rejected.push_back(p.id + ": outside the " + std::to_string(source_width_) + "x" +
                                std::to_string(source_height_) + " image");
    } else {
      queries.push_back({p.id, static_cast<float>(rescale_pixel(p.x, sx)), static_cast<float>(rescale_pixel(p.y, sy))});
      live_ids_.insert(p.id);
      change.applied.push_back(p.id);
    }
  }
  session_->add_queries(queries);
  return change;
}

PointsChange CameraWorker::remove_points(const std::vector<std::string>& ids, std::chrono::milliseconds timeout) {
  return run_on_tracking_thread(
      [this, ids] {
        PointsChange change;
        std::vector<std::string> present;
        for (const std::string& id : ids) {
          if (live_ids_.erase(id)) {
            present.push_back(id);
          } else {
            change.rejected.push_back(id + ": no such track");
          }
        }
        session_->remove_queries(present);
        change.applied = std::move(present);
        return change;
      },
      timeout);
}

CameraStats CameraWorker::stats() const {
  std::lock_guard lock(stats_mutex_);
  CameraStats s = stats_;
  s.frames_captured = capture_.frames_captured();
  s.queue_drops = queue_.drops();
  s.error = capture_.last_error();
  if (!session_) {
    s.state = CameraState::failed;
    s.error = tracker_error_;
    return s;
  }
  const pipeline::CaptureState state = capture_.state();
  if (stopping_) {
    s.state = state == pipeline::CaptureState::running ? CameraState::stopped : camera_state(state);
  } else if (s.state == CameraState::idle || state == pipeline::CaptureState::running) {
    s.state = live_ && state != pipeline::CaptureState::running ? CameraState::reconnecting : camera_state(state);
  }
  s.tracker_ms_sum = tracker_ms_sum_;
  s.latency_ms_sum = latency_ms_sum_;
  if (s.frames_tracked > 0) {
    s.tracker_ms_mean = tracker_ms_sum_ / static_cast<double>(s.frames_tracked);
    s.latency_ms_mean = latency_ms_sum_ / static_cast<double>(s.frames_tracked);
  }
  s.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  return s;
}

}  // namespace edgetap::daemon
