#include "edgetap/eval/video_decoder.hpp"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstring>
#include <memory>
#include <string>

#include "edgetap/eval/sequence.hpp"
#include "edgetap/capture/capture.hpp"

namespace edgetap::eval {
namespace {

constexpr int kStalledPolls = 30;  // half-second polls: 15 s without any news

// Owns the pipeline; stopping it in the destructor also ends a decode cut short.
struct Pipeline {
  GstElement* pipeline = nullptr;
  GstElement* sink = nullptr;
  GstBus* bus = nullptr;
  ~Pipeline() {
    if (bus) gst_object_unref(bus);
    if (sink) gst_object_unref(sink);
    if (pipeline) {
      gst_element_set_state(pipeline, GST_STATE_NULL);
      gst_object_unref(pipeline);
    }
  }
};

// The first error waiting on the bus, or "" when there is none.
std::string pending_error(GstBus* bus) {
  GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (message == nullptr) return "";
  GError* error = nullptr;
  gst_message_parse_error(message, &error, nullptr);
  std::string text = error != nullptr ? error->message : "unknown GStreamer error";
  if (error) g_error_free(error);
  gst_message_unref(message);
  return text;
}

cv::Mat copy_frame(GstSample* sample) {
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample))) return {};
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return {};
  const int width = GST_VIDEO_INFO_WIDTH(&info);
  const int height = GST_VIDEO_INFO_HEIGHT(&info);
  const auto stride = static_cast<std::size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0));
  cv::Mat frame(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    std::memcpy(frame.ptr(y), map.data + static_cast<std::size_t>(y) * stride, static_cast<std::size_t>(width) * 3);
  }
  gst_buffer_unmap(buffer, &map);
  return frame;
}

}  // namespace

std::vector<cv::Mat> decode_video(const std::filesystem::path& file, int max_frames) {
  if (!std::filesystem::is_regular_file(file)) throw DatasetError(file.string() + ": no such video file");
  pipeline::ensure_gstreamer();
  Pipeline p;
  p.pipeline = gst_pipeline_new("decode");
  GstElement* source = gst_element_factory_make("filesrc", nullptr);
  GstElement* decode = gst_element_factory_make("decodebin", nullptr);
  GstElement* convert = gst_element_factory_make("videoconvert", nullptr);
  p.sink = gst_element_factory_make("appsink", nullptr);
  if (!source || !decode || !convert || !p.sink) {
    throw DatasetError(file.string() + ": GStreamer elements filesrc/decodebin/videoconvert/appsink are missing");
  }
  gst_object_ref(p.sink);  // kept past the bin's reference
  g_object_set(source, "location", file.c_str(), nullptr);
  // Pull mode with a short queue: the decoder waits for us instead of racing ahead.
  g_object_set(p.sink, "sync", FALSE, "max-buffers", 4, "drop", FALSE, nullptr);
  GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", nullptr);
  gst_app_sink_set_caps(GST_APP_SINK(p.sink), caps);
  gst_caps_unref(caps);
  gst_bin_add_many(GST_BIN(p.pipeline), source, decode, convert, p.sink, nullptr);
  gst_element_link(source, decode);
  gst_element_link(convert, p.sink);
  // decodebin's pads appear once it knows the stream: link the video one.
  g_signal_connect(decode, "pad-added", G_CALLBACK(+[](GstElement*, GstPad* pad, gpointer target) {
                     GstPad* sink_pad = gst_element_get_static_pad(static_cast<GstElement*>(target), "sink");
                     if (!gst_pad_is_linked(sink_pad)) gst_pad_link(pad, sink_pad);
                     gst_object_unref(sink_pad);
                   }),
                   convert);
  p.bus = gst_element_get_bus(p.pipeline);
  gst_element_set_state(p.pipeline, GST_STATE_PLAYING);

  std::vector<cv::Mat> frames;
  auto* sink = GST_APP_SINK(p.sink);
  int idle_polls = 0;
  while (max_frames <= 0 || static_cast<int>(frames.size()) < max_frames) {
    if (const std::string error = pending_error(p.bus); !error.empty()) {
      throw DatasetError(file.string() + ": cannot decode: " + error);
    }
    GstSample* sample = gst_app_sink_try_pull_sample(sink, GST_SECOND / 2);
    if (sample == nullptr) {
      if (gst_app_sink_is_eos(sink)) break;
      // Neither a frame, an error nor the end for a long while: do not hang.
      if (++idle_polls == kStalledPolls) throw DatasetError(file.string() + ": the decoder stalled");
      continue;
    }
    idle_polls = 0;
    cv::Mat frame = copy_frame(sample);
    gst_sample_unref(sample);
    if (frame.empty()) throw DatasetError(file.string() + ": a decoded frame could not be read");
    frames.push_back(std::move(frame));
  }
  if (frames.empty()) throw DatasetError(file.string() + ": no video frames decoded");
  return frames;
}

}  // namespace edgetap::eval
