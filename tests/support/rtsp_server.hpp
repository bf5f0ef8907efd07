// A real RTSP server (gst-rtsp-server) on loopback for tests, serving a moving
// videotestsrc pattern as RTP/JPEG at rtsp://127.0.0.1:PORT/test.
#pragma once

#include <memory>
#include <string>

namespace edgetap::test {

class RtspServer {
 public:
  // port 0: any free port.
  explicit RtspServer(int port = 0);
  ~RtspServer();
  RtspServer(const RtspServer&) = delete;
  RtspServer& operator=(const RtspServer&) = delete;

  int port() const noexcept;
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgetap::test
