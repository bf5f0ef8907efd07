#include "support/video_writer.hpp"

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <cstring>

#include "edgetap/capture/capture.hpp"

namespace edgetap::test {

std::string write_mjpeg_avi(const std::string& path, const std::vector<pipeline::Frame>& frames, int fps) {
  pipeline::ensure_gstreamer();
  if (frames.empty()) return "no frames";
  const std::string description =
      "appsrc name=src format=time ! videoconvert ! jpegenc quality=92 ! avimux ! filesink location=\"" + path + "\"";
  GError* error = nullptr;
  GstElement* pipe = gst_parse_launch(description.c_str(), &error);
  if (error != nullptr) {
    std::string message = error->message;
    g_error_free(error);
    return message;
  }
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width", G_TYPE_INT,
                                      frames[0].width, "height", G_TYPE_INT, frames[0].height, "framerate",
                                      GST_TYPE_FRACTION, fps, 1, nullptr);
  gst_app_src_set_caps(GST_APP_SRC(src), caps);
  gst_caps_unref(caps);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  // RGB rows of these widths are 4-byte aligned only when width * 3 is; the
  // tests use widths that are multiples of 4.
  for (std::size_t i = 0; i < frames.size(); ++i) {
    GstBuffer* buffer = gst_buffer_new_allocate(nullptr, frames[i].rgb.size(), nullptr);
    gst_buffer_fill(buffer, 0, frames[i].rgb.data(), frames[i].rgb.size());
    GST_BUFFER_PTS(buffer) = gst_util_uint64_scale(i, GST_SECOND, static_cast<guint64>(fps));
    GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale(1, GST_SECOND, static_cast<guint64>(fps));
    gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstBus* bus = gst_element_get_bus(pipe);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  std::string result;
  if (msg == nullptr) {
    result = "timed out encoding " + path;
  } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* err = nullptr;
    gst_message_parse_error(msg, &err, nullptr);
    result = err ? err->message : "unknown error";
    if (err) g_error_free(err);
  }
  if (msg) gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(pipe);
  return result;
}

}  // namespace edgetap::test
