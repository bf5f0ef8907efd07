// The CUDA session against the CPU engine (engine::StreamingSession) on the
// same frames and queries: every test network's feature (3x3 query patches,
// the stride-2 level, cross-track layers, recent descriptors, entry velocity)
// and the two shipped models, in FP32 (tight) and FP16 (the error measured
// and bounded), tracks added at several frames and one removed on the way.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/gpu/cuda_session.hpp"
#include "gpu_test_support.hpp"
#include "session_test_support.hpp"

namespace edgetap::gpu {
namespace {

using engine::Network;
using engine::Point2;
using testing::grid;
using testing::scene;

// FP32: the two engines differ only in summation order.
constexpr float kF32PositionTol = 2e-3f;     // model-input pixels
constexpr float kF32ProbabilityTol = 1e-4f;  // visibility, confidence
// FP16 storage (float accumulation): half-precision features and weights move
// a track by a fraction of a pixel; a few points on ambiguous texture can
// move further, so the median and the 95th percentile are bounded. Measured on
// an H200: medians 0.001-0.002 px for the shipped models, 0.009-0.060 px for
// the random tiny networks (whose untrained heads amplify rounding most).
constexpr float kF16MedianPositionTol = 0.1f;
constexpr float kF16P95PositionTol = 0.5f;
constexpr float kF16ProbabilityTol = 0.05f;  // 95th percentile

Network load(const std::string& stem) {
  return engine::load_network(testing::source_path(stem + ".safetensors"), testing::source_path(stem + ".json"));
}

struct Differences {
  std::vector<float> position, probability;
  float percentile(std::vector<float> v, float q) const {
    if (v.empty()) return 0.f;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<float>(v.size() - 1))];
  }
};

// Streams `frames` frames through both engines: `n` tracks at frame 0, n/2
// more at frame 2, the second track removed after frame 4; collects the
// differences of every alive track's estimate at every frame.
template <class T>
Differences compare(const Network& net, int width, int height, int n, int frames, bool graphs = true) {
  engine::StreamingSession cpu(net);
  CudaStreamingSession<T> gpu(net, 2 * n);
  gpu.set_graphs(graphs);
  Differences d;
  std::vector<int> handles;
  for (int t = 0; t < frames; ++t) {
    const std::vector<std::uint8_t> rgb = scene(width, height, t);
    const ImageView view{rgb.data(), width, height, static_cast<std::size_t>(width) * 3};
    const Status cs = cpu.push_frame(view), gs = gpu.push_frame(view);
    EXPECT_TRUE(cs.is_ok()) << cs.message();
    EXPECT_TRUE(gs.is_ok()) << gs.message();
    if (t == 0 || t == 2) {
      const std::vector<Point2> pts = grid(width, height, t == 0 ? n : n / 2, t == 0 ? 6.f : 11.f);
      const std::vector<int> ch = cpu.add_tracks(pts), gh = gpu.add_tracks(pts);
      EXPECT_EQ(ch, gh);
      handles.insert(handles.end(), ch.begin(), ch.end());
    }
    if (t == 4) {
      cpu.remove_track(handles[1]);
      gpu.remove_track(handles[1]);
      EXPECT_FALSE(gpu.alive(handles[1]));
    }
    for (int hnd : handles) {
      if (!cpu.alive(hnd)) continue;
      const engine::TrackEstimate& a = cpu.estimate(hnd);
      const engine::TrackEstimate& b = gpu.estimate(hnd);
      d.position.push_back(std::hypot(a.x - b.x, a.y - b.y));
      d.probability.push_back(std::max(std::abs(a.visible - b.visible), std::abs(a.confidence - b.confidence)));
    }
  }
  return d;
}

struct Case {
  const char* stem;
  int width, height, points, frames;
};

const Case kCases[] = {
    {"tests/data/golden/edgetap-tiny-qp3", 128, 96, 24, 12},
    {"tests/data/golden/edgetap-tiny-fine", 128, 96, 24, 12},
    {"tests/data/golden/edgetap-tiny-cross", 128, 96, 24, 12},
    {"tests/data/golden/edgetap-tiny-recent", 128, 96, 24, 12},
    {"tests/data/golden/edgetap-tiny-velocity", 128, 96, 24, 12},
    {"tests/data/golden/edgetap-tiny-scale", 128, 96, 24, 12},
    {"models/edgetap-small", 256, 192, 64, 10},
    {"models/edgetap-large", 256, 192, 64, 10},
    // 768 tracks: the cross-track scores no longer fit at once and go a block of rows at a time.
    {"models/edgetap-large", 256, 192, 512, 4},
};

class SessionParity : public ::testing::TestWithParam<Case> {};

TEST_P(SessionParity, Fp32MatchesTheCpuEngine) {
  EDGETAP_REQUIRE_GPU();
  const Case& c = GetParam();
  const Network net = load(c.stem);
  const Differences d = compare<float>(net, c.width, c.height, c.points, c.frames);
  ASSERT_FALSE(d.position.empty());
  const float max_pos = *std::max_element(d.position.begin(), d.position.end());
  const float max_prob = *std::max_element(d.probability.begin(), d.probability.end());
  std::printf("[fp32] %s: max position difference %.2e px, max probability difference %.2e (%zu estimates)\n",
              c.stem, max_pos, max_prob, d.position.size());
  EXPECT_LE(max_pos, kF32PositionTol);
  EXPECT_LE(max_prob, kF32ProbabilityTol);
}

TEST_P(SessionParity, Fp16StaysNearTheCpuEngine) {
  EDGETAP_REQUIRE_GPU();
  const Case& c = GetParam();
  const Network net = load(c.stem);
  const Differences d = compare<__half>(net, c.width, c.height, c.points, c.frames);
  ASSERT_FALSE(d.position.empty());
  const float median = d.percentile(d.position, 0.5f), p95 = d.percentile(d.position, 0.95f);
  const float prob95 = d.percentile(d.probability, 0.95f);
  std::printf("[fp16] %s: position difference median %.3f px, 95th %.3f px, max %.3f px; probability 95th %.4f\n",
              c.stem, median, p95, d.percentile(d.position, 1.f), prob95);
  EXPECT_LE(median, kF16MedianPositionTol);
  EXPECT_LE(p95, kF16P95PositionTol);
  EXPECT_LE(prob95, kF16ProbabilityTol);
}

INSTANTIATE_TEST_SUITE_P(Networks, SessionParity, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string name = info.param.stem;
  name = name.substr(name.find_last_of('/') + 1);
  std::replace(name.begin(), name.end(), '-', '_');
  return name + "_" + std::to_string(info.param.points) + "_points";
});

// The estimates of the live tracks among handles 0..handles-1 agree between two sessions.
// Not inlined: GCC 12's -Warray-bounds misreads the calls it devirtualizes there.
[[gnu::noinline]] void expect_same_estimates(const engine::TrackingSession& a, const engine::TrackingSession& b,
                                             int handles, int frame) {
  for (int h = 0; h < handles; ++h) {
    if (!a.alive(h)) continue;
    EXPECT_FLOAT_EQ(a.estimate(h).x, b.estimate(h).x) << "frame " << frame << " track " << h;
    EXPECT_FLOAT_EQ(a.estimate(h).y, b.estimate(h).y) << "frame " << frame << " track " << h;
    EXPECT_FLOAT_EQ(a.estimate(h).visible, b.estimate(h).visible) << "frame " << frame << " track " << h;
  }
}

TEST(CudaSession, GraphReplayGivesTheEagerResult) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("tests/data/golden/edgetap-tiny-cross");
  CudaStreamingSession<float> eager(net, 32), graphed(net, 32);
  eager.set_graphs(false);
  std::vector<int> handles;
  for (int t = 0; t < 8; ++t) {
    const std::vector<std::uint8_t> rgb = scene(128, 96, t);
    const ImageView view{rgb.data(), 128, 96, 128 * 3};
    ASSERT_TRUE(eager.push_frame(view).is_ok());
    ASSERT_TRUE(graphed.push_frame(view).is_ok());
    if (t == 0 || t == 3) {
      const std::vector<Point2> pts = grid(128, 96, 8, t == 0 ? 5.f : 9.f);
      handles = eager.add_tracks(pts);
      graphed.add_tracks(pts);
    }
    expect_same_estimates(eager, graphed, 16, t);
  }
  // One capture per number of tracks (none at frame 0, 8 from frame 1, 16 from frame 4), replayed otherwise.
  EXPECT_EQ(graphed.graph_captures(), 3);
}

TEST(CudaSession, RefusesWhatItCannotDo) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("tests/data/golden/edgetap-tiny-qp3");
  CudaStreamingSession<float> session(net, 4);
  const std::vector<Point2> five = grid(128, 96, 5, 8.f);
  EXPECT_THROW(session.add_tracks(five), std::logic_error);  // no frame yet
  const std::vector<std::uint8_t> rgb = scene(128, 96, 0);
  const Status odd = session.push_frame(ImageView{rgb.data(), 127, 96, 128 * 3});
  EXPECT_EQ(odd.code(), Status::Code::bad_frame);
  EXPECT_NE(odd.message().find("multiples of"), std::string::npos) << odd.message();
  EXPECT_THROW(CudaStreamingSession<float>(net, 4, net.config.iters + 1), std::invalid_argument);
}

TEST(CudaSession, GrowsPastItsCapacityKeepingEveryTrack) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("tests/data/golden/edgetap-tiny-cross");
  CudaStreamingSession<float> roomy(net, 64), tight(net, 2);
  std::vector<int> handles;
  for (int t = 0; t < 6; ++t) {
    const std::vector<std::uint8_t> rgb = scene(128, 96, t);
    const ImageView view{rgb.data(), 128, 96, 128 * 3};
    ASSERT_TRUE(roomy.push_frame(view).is_ok());
    ASSERT_TRUE(tight.push_frame(view).is_ok());
    if (t == 0 || t == 2) {
      const std::vector<Point2> pts = grid(128, 96, t == 0 ? 3 : 7, t == 0 ? 7.f : 12.f);
      const std::vector<int> added = roomy.add_tracks(pts);
      EXPECT_EQ(tight.add_tracks(pts), added);
      handles.insert(handles.end(), added.begin(), added.end());
    }
    for (int h : handles) {
      EXPECT_NEAR(roomy.estimate(h).x, tight.estimate(h).x, 1e-4) << "frame " << t << " track " << h;
      EXPECT_NEAR(roomy.estimate(h).y, tight.estimate(h).y, 1e-4) << "frame " << t << " track " << h;
    }
  }
  EXPECT_GE(tight.capacity(), 10);
}

TEST(CudaSession, SteadyStateFramesAllocateNoDeviceMemory) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("models/edgetap-small");
  CudaStreamingSession<__half> session(net, 64);
  std::size_t free_before = 0, free_after = 0, total = 0;
  for (int t = 0; t < 24; ++t) {
    const std::vector<std::uint8_t> rgb = scene(256, 192, t);
    ASSERT_TRUE(session.push_frame(ImageView{rgb.data(), 256, 192, 256 * 3}).is_ok());
    if (t == 0) session.add_tracks(grid(256, 192, 64, 8.f));
    if (t == 3) EDGETAP_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));  // plans made, graph captured
  }
  EDGETAP_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  EXPECT_EQ(free_after, free_before) << "device memory changed by " << static_cast<long long>(free_before - free_after)
                                     << " bytes over 20 steady frames";
  EXPECT_EQ(session.graph_captures(), 2);  // the frame without tracks, then every frame with 64
}

TEST(CudaSession, AWarmedUpSessionTracksAsAFreshOneWithoutCapturingAgain) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("models/edgetap-small");
  CudaStreamingSession<__half> fresh(net, 16), warmed(net, 16);
  // As a published session's first frame: the support grid's points, then the caller's.
  warmed.warm_up(256, 192, std::array{16, 48});
  const int captured = warmed.graph_captures();
  EXPECT_EQ(captured, 2);  // the frame without tracks, then with 64
  EXPECT_EQ(warmed.frames(), 0);
  std::vector<int> handles;
  for (int t = 0; t < 8; ++t) {
    const std::vector<std::uint8_t> rgb = scene(256, 192, t);
    const ImageView view{rgb.data(), 256, 192, 256 * 3};
    ASSERT_TRUE(fresh.push_frame(view).is_ok());
    ASSERT_TRUE(warmed.push_frame(view).is_ok());
    if (t == 0) {
      const std::vector<engine::Point2> points = grid(256, 192, 64, 8.f);
      for (const auto& batch : {std::span(points).first(16), std::span(points).subspan(16)}) {
        const std::vector<int> added = fresh.add_tracks(batch);
        EXPECT_EQ(warmed.add_tracks(batch), added);
        handles.insert(handles.end(), added.begin(), added.end());
      }
    }
    expect_same_estimates(fresh, warmed, static_cast<int>(handles.size()), t);
  }
  EXPECT_EQ(warmed.graph_captures(), captured) << "the real frames replayed the warm-up's graphs";
}

TEST(CudaSession, RestartTracksANewClipAsAFreshSession) {
  EDGETAP_REQUIRE_GPU();
  const Network net = load("tests/data/golden/edgetap-tiny-cross");
  CudaStreamingSession<float> reused(net, 16);
  const auto run_clip = [](CudaStreamingSession<float>& s, int first_frame) {
    std::vector<engine::TrackEstimate> out;
    for (int t = 0; t < 6; ++t) {
      const std::vector<std::uint8_t> rgb = scene(128, 96, first_frame + t);
      EXPECT_TRUE(s.push_frame(ImageView{rgb.data(), 128, 96, 128 * 3}).is_ok());
      if (t == 0) {
        EXPECT_EQ(s.add_tracks(grid(128, 96, 9, 6.f)).front(), 0);
      }
    }
    for (int h = 0; h < 9; ++h) out.push_back(s.estimate(h));
    return out;
  };
  run_clip(reused, 0);
  reused.remove_track(3);
  reused.restart();
  EXPECT_EQ(reused.frames(), 0);
  EXPECT_FALSE(reused.alive(3));
  const std::vector<engine::TrackEstimate> again = run_clip(reused, 10);
  CudaStreamingSession<float> fresh(net, 16);
  const std::vector<engine::TrackEstimate> expected = run_clip(fresh, 10);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(again[i].x, expected[i].x, 1e-4) << "track " << i;
    EXPECT_NEAR(again[i].y, expected[i].y, 1e-4) << "track " << i;
    EXPECT_NEAR(again[i].visible, expected[i].visible, 1e-5) << "track " << i;
  }
}

// A clip announced with encode_ahead is encoded in batches (two here: more
// frames than one batch holds) and tracks as the same frames pushed one by one,
// up to the convolutions' summation order; pushing another image drops the
// rest of the announcement and goes on as usual.
TEST(CudaSession, AClipEncodedAheadTracksAsItsFramesPushedOneByOne) {
  EDGETAP_REQUIRE_GPU();
  constexpr int kWidth = 256, kHeight = 192, kFrames = 20, kBreak = 18;
  for (const char* stem : {"tests/data/golden/edgetap-tiny-fine", "models/edgetap-large"}) {
    SCOPED_TRACE(stem);
    const Network net = load(stem);
    std::vector<std::vector<std::uint8_t>> clip;
    std::vector<ImageView> views;
    for (int t = 0; t < kFrames; ++t) clip.push_back(scene(kWidth, kHeight, t));
    for (const auto& rgb : clip) views.push_back(ImageView{rgb.data(), kWidth, kHeight, kWidth * 3});
    CudaStreamingSession<float> one_by_one(net, 32), ahead(net, 32);
    ahead.encode_ahead(views);
    int tracks = 0;
    for (int t = 0; t < kFrames; ++t) {
      const std::vector<std::uint8_t> copy = clip[static_cast<std::size_t>(t)];  // the same image elsewhere
      const ImageView moved{copy.data(), kWidth, kHeight, kWidth * 3};
      ASSERT_TRUE(one_by_one.push_frame(views[static_cast<std::size_t>(t)]).is_ok());
      ASSERT_TRUE(ahead.push_frame(t == kBreak ? moved : views[static_cast<std::size_t>(t)]).is_ok());
      if (t == 0 || t == 3) {
        const std::vector<Point2> pts = grid(kWidth, kHeight, 12, t == 0 ? 7.f : 13.f);
        EXPECT_EQ(ahead.add_tracks(pts), one_by_one.add_tracks(pts));
        tracks += 12;
      }
      for (int h = 0; h < tracks; ++h) {
        const engine::TrackEstimate &a = one_by_one.estimate(h), &b = ahead.estimate(h);
        EXPECT_NEAR(a.x, b.x, kF32PositionTol) << "frame " << t << " track " << h;
        EXPECT_NEAR(a.y, b.y, kF32PositionTol) << "frame " << t << " track " << h;
        EXPECT_NEAR(a.visible, b.visible, kF32ProbabilityTol) << "frame " << t << " track " << h;
        EXPECT_NEAR(a.confidence, b.confidence, kF32ProbabilityTol) << "frame " << t << " track " << h;
      }
    }
  }
}

}  // namespace
}  // namespace edgetap::gpu
