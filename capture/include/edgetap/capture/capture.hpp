// One GStreamer pipeline per camera, decoding into an appsink at the model
// size. Bus errors and end-of-stream are handled per camera: a failing camera
// ends its own capture and never touches the others.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "edgetap/config/config.hpp"
#include "edgetap/capture/frame_queue.hpp"

namespace spdlog { class logger; }

namespace edgetap::pipeline {

enum class CaptureState { idle, running, ended, failed };
const char* to_string(CaptureState state);

// The gst-launch description of a camera's pipeline (the appsink is named "sink").
std::string pipeline_description(const config::CameraConfig& camera);

// Initialises GStreamer once per process (safe from any thread).
void ensure_gstreamer();

class Capture {
 public:
  Capture(const config::CameraConfig& camera, FrameQueue& queue, std::shared_ptr<spdlog::logger> log);
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // Builds the pipeline and starts it. Returns false (with `error`) when the
  // description cannot be built; failures after that arrive on the bus.
  bool start(std::string& error);
  void stop();

  CaptureState state() const noexcept { return state_.load(); }
  std::string last_error() const;
  std::uint64_t frames_captured() const noexcept { return frames_.load(); }
  // Monotonic time of the last frame (or of start() when none came since), for stall detection.
  std::int64_t last_activity_steady_ns() const noexcept { return last_activity_ns_.load(); }

 private:
  struct Gst;  // the GStreamer objects, kept out of this header
  void watch_bus();
  void on_sample(void* sample);
  void fail(const std::string& message);

  const config::CameraConfig camera_;
  FrameQueue& queue_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Gst> gst_;
  // Held by on_sample (a GStreamer streaming thread); start() and stop() take it to hand
  // gst_ over, so that the hand-over is ordered by a C++ lock and not only by GStreamer's.
  std::mutex gst_mutex_;
  std::thread bus_thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<CaptureState> state_{CaptureState::idle};
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::int64_t> last_activity_ns_{0};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace edgetap::pipeline
