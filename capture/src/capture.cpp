// GStreamer capture: pipeline lifecycle, appsink callback, per-camera bus thread.
#include "edgetap/capture/capture.hpp"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <mutex>

namespace edgetap::pipeline {
namespace {

std::int64_t now_unix_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t now_steady_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

// Source size: the caps entering videoconvert (before scaling).
void read_source_size(GstElement* convert, int& width, int& height) {
  GstPad* pad = gst_element_get_static_pad(convert, "sink");
  if (pad == nullptr) return;
  if (GstCaps* caps = gst_pad_get_current_caps(pad)) {
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    gst_structure_get_int(s, "width", &width);
    gst_structure_get_int(s, "height", &height);
    gst_caps_unref(caps);
  }
  gst_object_unref(pad);
}

}  // namespace

struct Capture::Gst {
  GstElement* pipeline = nullptr;
  GstElement* sink = nullptr;
  GstElement* convert = nullptr;
  int source_width = 0;
  int source_height = 0;

  // Brings the pipeline to NULL, which returns once its streaming threads have left: no
  // appsink callback runs after it.
  void halt() {
    if (pipeline) gst_element_set_state(pipeline, GST_STATE_NULL);
  }

  ~Gst() {
    halt();
    if (sink) gst_object_unref(sink);
    if (convert) gst_object_unref(convert);
    if (pipeline) gst_object_unref(pipeline);
  }
};

const char* to_string(CaptureState state) {
  switch (state) {
    case CaptureState::idle: return "idle";
    case CaptureState::running: return "running";
    case CaptureState::ended: return "ended";
    case CaptureState::failed: return "failed";
  }
  return "?";
}

void ensure_gstreamer() {
  static std::once_flag once;
  std::call_once(once, [] { gst_init(nullptr, nullptr); });
}

Capture::Capture(const config::CameraConfig& camera, FrameQueue& queue, std::shared_ptr<spdlog::logger> log)
    : camera_(camera), queue_(queue), log_(std::move(log)) {}

Capture::~Capture() { stop(); }

bool Capture::start(std::string& error) {
  ensure_gstreamer();
  const std::string description = pipeline_description(camera_);
  log_->debug("pipeline: {}", description);
  GError* parse_error = nullptr;
  auto gst = std::make_unique<Gst>();
  gst->pipeline = gst_parse_launch(description.c_str(), &parse_error);
  if (parse_error != nullptr) {
    error = std::string("cannot build the pipeline: ") + parse_error->message;
    g_error_free(parse_error);
    if (gst->pipeline) gst_object_unref(gst->pipeline);
    gst->pipeline = nullptr;
    fail(error);
    return false;
  }
  gst->sink = gst_bin_get_by_name(GST_BIN(gst->pipeline), "sink");
  gst->convert = gst_bin_get_by_name(GST_BIN(gst->pipeline), "convert");

  GstAppSinkCallbacks callbacks{};
  callbacks.new_sample = [](GstAppSink* sink, gpointer self) -> GstFlowReturn {
    GstSample* sample = gst_app_sink_pull_sample(sink);
    if (sample == nullptr) return GST_FLOW_EOS;
    static_cast<Capture*>(self)->on_sample(sample);
    gst_sample_unref(sample);
    return GST_FLOW_OK;
  };
  gst_app_sink_set_callbacks(GST_APP_SINK(gst->sink), &callbacks, this, nullptr);
  {
    std::lock_guard lock(gst_mutex_);
    gst_ = std::move(gst);
  }

  stopping_ = false;
  last_activity_ns_ = now_steady_ns();
  queue_.reopen();
  state_ = CaptureState::running;
  if (gst_element_set_state(gst_->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    // The reason is on the bus; the bus thread reports it.
    log_->debug("set_state(PLAYING) failed; waiting for the bus error");
  }
  bus_thread_ = std::thread([this] { watch_bus(); });
  return true;
}

void Capture::on_sample(void* sample_ptr) {
  // The streaming threads come from GLib's thread pool and are reused from one pipeline to
  // the next; GLib's own locks (futexes) order them, which ThreadSanitizer cannot see.
  std::lock_guard lock(gst_mutex_);
  auto* sample = static_cast<GstSample*>(sample_ptr);
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  GstVideoInfo info;
  if (buffer == nullptr || !gst_video_info_from_caps(&info, gst_sample_get_caps(sample))) return;
  if (gst_->source_width == 0) read_source_size(gst_->convert, gst_->source_width, gst_->source_height);

  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
  Frame frame;
  frame.width = GST_VIDEO_INFO_WIDTH(&info);
  frame.height = GST_VIDEO_INFO_HEIGHT(&info);
  frame.source_width = gst_->source_width > 0 ? gst_->source_width : frame.width;
  frame.source_height = gst_->source_height > 0 ? gst_->source_height : frame.height;
  const std::size_t row_bytes = static_cast<std::size_t>(frame.width) * 3;
  const std::size_t stride = static_cast<std::size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0));
  frame.rgb.resize(row_bytes * static_cast<std::size_t>(frame.height));
  for (int y = 0; y < frame.height; ++y) {
    std::memcpy(frame.rgb.data() + row_bytes * y, map.data + stride * y, row_bytes);
  }
  gst_buffer_unmap(buffer, &map);
  frame.index = frames_.fetch_add(1);
  frame.capture_unix_us = now_unix_us();
  frame.capture_steady_ns = now_steady_ns();
  last_activity_ns_ = frame.capture_steady_ns;
  frame.pts_ns = GST_BUFFER_PTS_IS_VALID(buffer) ? static_cast<std::int64_t>(GST_BUFFER_PTS(buffer)) : -1;
  queue_.push(std::move(frame));
}

void Capture::watch_bus() {
  GstBus* bus = gst_element_get_bus(gst_->pipeline);
  const bool loop = camera_.source.kind == config::SourceKind::file && camera_.capture.at_eof == config::AtEof::loop;
  while (!stopping_) {
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 100 * GST_MSECOND, static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    if (msg == nullptr) continue;
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError* err = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(msg, &err, &debug);
      const std::string element = GST_OBJECT_NAME(GST_MESSAGE_SRC(msg));
      fail(std::string(err ? err->message : "unknown error") + " (element " + element + ", source " +
           camera_.source.uri + ")");
      log_->debug("error details: {}", debug ? debug : "");
      if (err) g_error_free(err);
      g_free(debug);
      gst_message_unref(msg);
      break;
    }
    // End of stream.
    gst_message_unref(msg);
    if (loop && gst_element_seek_simple(gst_->pipeline, GST_FORMAT_TIME,
                                        static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT), 0)) {
      log_->debug("end of file: looping");
      continue;
    }
    log_->info("end of stream after {} frames", frames_.load());
    state_ = CaptureState::ended;
    queue_.close();
    break;
  }
  gst_object_unref(bus);
}

void Capture::fail(const std::string& message) {
  {
    std::lock_guard lock(error_mutex_);
    last_error_ = message;
  }
  log_->error("capture failed: {}", message);
  state_ = CaptureState::failed;
  queue_.close();
}

std::string Capture::last_error() const {
  std::lock_guard lock(error_mutex_);
  return last_error_;
}

void Capture::stop() {
  stopping_ = true;
  queue_.close();  // unblocks a streaming thread waiting on a full queue
  if (bus_thread_.joinable()) bus_thread_.join();
  // Halt before releasing: reset() clears gst_ before the destructor runs, and a streaming
  // thread still delivering a sample would read it (on_sample).
  if (gst_) gst_->halt();
  std::lock_guard lock(gst_mutex_);  // after halt(): no callback runs, none waits for it
  gst_.reset();
}

}  // namespace edgetap::pipeline
