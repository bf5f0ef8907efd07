// CUDA sessions beside each other, as the daemon's camera threads run them:
// several threads each build a session, stream frames, add tracks past its
// capacity (the per-track buffers grow while other threads capture graphs),
// switch rungs (FP32 <-> FP16, smaller frames, fewer iterations) every few
// frames by destroying the session and building the next, for a fixed time.
// Every run's estimates must equal a single-threaded run of the same rung
// and script: a capture broken by another thread's set-up, a buffer freed
// under a graph or a shared handle shows up as an error or as other numbers.
//
// EDGETAP_STRESS_THREADS (default 6) and EDGETAP_STRESS_SECONDS (default 30)
// size it; scripts/gpu-check.sh runs it as it is, and a 3-second version
// under compute-sanitizer racecheck.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/gpu/cuda_session.hpp"
#include "gpu_test_support.hpp"
#include "session_test_support.hpp"

namespace edgetap::gpu {
namespace {

using engine::Network;

// One rung of a camera's ladder, as the session sees it.
struct Rung {
  bool half = false;
  int side = 256;  // square frames, a multiple of 32
  int iters = 0;   // 0: the model's
};

const std::vector<Rung>& rungs() {
  static const std::vector<Rung> all = {{false, 256, 0}, {true, 256, 0}, {true, 192, 2}, {true, 128, 1}, {false, 128, 1}};
  return all;
}

// What one visit of a rung does: kFrames frames, kFirstTracks tracks at frame
// 0 (past the session's initial capacity of kInitialCapacity, so the buffers
// grow), kLaterTracks more at frame 2 (another growth and a new graph shape).
constexpr int kFrames = 5;
constexpr int kInitialCapacity = 8;
constexpr int kFirstTracks = 12;
constexpr int kLaterTracks = 40;

// Estimates of every track at every frame, in order.
using Trace = std::vector<float>;

// Concurrency must not change a single number: the same rung, script and
// device give the same kernels, algorithms and reduction orders.
constexpr float kSameRunTolerance = 0.f;

template <class T>
Trace run_rung_as(const Network& net, const Rung& rung) {
  CudaStreamingSession<T> session(net, kInitialCapacity, rung.iters);
  Trace trace;
  std::vector<int> handles;
  for (int t = 0; t < kFrames; ++t) {
    const std::vector<std::uint8_t> rgb = testing::scene(rung.side, rung.side, t);
    const ImageView frame{rgb.data(), rung.side, rung.side, static_cast<std::size_t>(rung.side) * 3};
    const Status status = session.push_frame(frame);
    if (!status) throw std::runtime_error("push_frame: " + status.message());
    if (t == 0 || t == 2) {
      const int n = t == 0 ? kFirstTracks : kLaterTracks;
      const std::vector<int> added = session.add_tracks(testing::grid(rung.side, rung.side, n, 8.f + static_cast<float>(t)));
      handles.insert(handles.end(), added.begin(), added.end());
    }
    for (const int h : handles) {
      const engine::TrackEstimate& e = session.estimate(h);
      trace.insert(trace.end(), {e.x, e.y, e.visible, e.confidence});
    }
  }
  return trace;
}

Trace run_rung(const Network& net, const Rung& rung) {
  return rung.half ? run_rung_as<__half>(net, rung) : run_rung_as<float>(net, rung);
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::max(1, std::atoi(value)) : fallback;
}

float max_difference(const Trace& a, const Trace& b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float worst = 0.f;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

TEST(ConcurrentSessions, ThreadsBuildStreamSwitchAndDestroySessionsWithTheSingleThreadedResults) {
  EDGETAP_REQUIRE_GPU();
  const Network net =
      engine::load_network(testing::source_path("models/edgetap-small.safetensors"),
                           testing::source_path("models/edgetap-small.json"));
  std::vector<Trace> expected;
  for (const Rung& rung : rungs()) expected.push_back(run_rung(net, rung));

  const int threads = env_int("EDGETAP_STRESS_THREADS", 6);
  const auto duration = std::chrono::seconds(env_int("EDGETAP_STRESS_SECONDS", 30));
  const auto deadline = std::chrono::steady_clock::now() + duration;
  std::atomic<int> visits{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> cameras;
  for (int c = 0; c < threads; ++c) {
    cameras.emplace_back([&, c] {
      // Each camera walks the rungs from its own starting point, down and back up.
      for (int step = 0; std::chrono::steady_clock::now() < deadline; ++step) {
        const std::size_t r = static_cast<std::size_t>(c + step) % rungs().size();
        std::string failure;
        try {
          const float difference = max_difference(run_rung(net, rungs()[r]), expected[r]);
          if (difference > kSameRunTolerance) {
            failure = "differs from the single-threaded run by " + std::to_string(difference);
          }
        } catch (const std::exception& e) {
          failure = e.what();
        }
        ++visits;
        if (!failure.empty()) {
          std::lock_guard lock(failures_mutex);
          failures.push_back("camera " + std::to_string(c) + ", visit " + std::to_string(step) + ", rung " +
                             std::to_string(r) + ": " + failure);
        }
      }
    });
  }
  for (std::thread& t : cameras) t.join();
  EXPECT_GT(visits.load(), threads) << "every camera should have visited more than one rung";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << visits.load() << " rung visits failed; first: "
                                << failures.front();
  std::printf("%d threads, %d rung visits in %lld s, %zu failed\n", threads, visits.load(),
              static_cast<long long>(duration.count()), failures.size());
}

}  // namespace
}  // namespace edgetap::gpu
