// A stand-alone RTSP server for tests that need to kill and restart a server:
// serves the RtspServer test stream, prints "PORT <n>" once listening, and runs
// until killed.
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "support/rtsp_server.hpp"

int main(int argc, char** argv) {
  edgetap::test::RtspServer server(argc > 1 ? std::atoi(argv[1]) : 0);
  std::printf("PORT %d\n", server.port());
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}
