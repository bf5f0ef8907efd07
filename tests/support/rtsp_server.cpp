#include "support/rtsp_server.hpp"

#include <gst/rtsp-server/rtsp-server.h>

#include <stdexcept>
#include <thread>

#include "edgetap/capture/capture.hpp"

namespace edgetap::test {

struct RtspServer::Impl {
  GMainContext* context = nullptr;
  GMainLoop* loop = nullptr;
  GstRTSPServer* server = nullptr;
  guint source_id = 0;
  int port = 0;
  std::thread thread;
};

RtspServer::RtspServer(int port) : impl_(std::make_unique<Impl>()) {
  pipeline::ensure_gstreamer();
  impl_->context = g_main_context_new();
  impl_->loop = g_main_loop_new(impl_->context, FALSE);
  impl_->server = gst_rtsp_server_new();
  gst_rtsp_server_set_address(impl_->server, "127.0.0.1");
  gst_rtsp_server_set_service(impl_->server, std::to_string(port).c_str());
  GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
  gst_rtsp_media_factory_set_launch(
      factory,
      "( videotestsrc is-live=true pattern=pinwheel horizontal-speed=2 ! "
      "video/x-raw,width=320,height=240,framerate=15/1 ! videoconvert ! video/x-raw,format=I420 ! "
      "jpegenc ! rtpjpegpay name=pay0 pt=96 )");
  gst_rtsp_media_factory_set_shared(factory, TRUE);
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(impl_->server);
  gst_rtsp_mount_points_add_factory(mounts, "/test", factory);
  g_object_unref(mounts);
  impl_->source_id = gst_rtsp_server_attach(impl_->server, impl_->context);
  if (impl_->source_id == 0) throw std::runtime_error("RTSP server could not bind port " + std::to_string(port));
  impl_->port = gst_rtsp_server_get_bound_port(impl_->server);
  impl_->thread = std::thread([loop = impl_->loop] { g_main_loop_run(loop); });
}

RtspServer::~RtspServer() {
  g_main_loop_quit(impl_->loop);
  impl_->thread.join();
  // Detach the listening source and drop every client session.
  GSource* source = g_main_context_find_source_by_id(impl_->context, impl_->source_id);
  if (source) g_source_destroy(source);
  if (GstRTSPSessionPool* pool = gst_rtsp_server_get_session_pool(impl_->server)) {
    gst_rtsp_session_pool_cleanup(pool);
    g_object_unref(pool);
  }
  g_object_unref(impl_->server);
  g_main_loop_unref(impl_->loop);
  g_main_context_unref(impl_->context);
}

int RtspServer::port() const noexcept { return impl_->port; }

std::string RtspServer::url() const { return "rtsp://127.0.0.1:" + std::to_string(impl_->port) + "/test"; }

}  // namespace edgetap::test
