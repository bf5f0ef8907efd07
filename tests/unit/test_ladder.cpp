// The degradation ladder under injected load: the governor on synthetic
// latencies, rung switches keeping ids and positions, point caps and tracks a
// rung gives up (held, not lost), and two cameras sharing the compute gate
// where only the overloaded one steps down.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <stdexcept>
#include <thread>

#include "edgetap/camera/compute_gate.hpp"
#include "edgetap/tracking/klt_tracker.hpp"
#include "edgetap/ladder/laddered_tracker.hpp"
#include "edgetap/ladder/latency_governor.hpp"
#include "support/ladder_fixtures.hpp"
#include "support/textures.hpp"

using namespace edgetap;
using namespace std::chrono_literals;
using test::camera_at;
using test::quick_governor;
using test::rung;

namespace {

// A tracker that costs a controlled time per frame and leaves points where they are.
class SleepingTracker final : public Tracker {
 public:
  explicit SleepingTracker(std::chrono::milliseconds cost) : cost_(cost) {}
  std::string_view name() const noexcept override { return "sleeping"; }
  void add_queries(std::span<const Query> q) override { points_.insert(points_.end(), q.begin(), q.end()); }
  std::size_t remove_queries(std::span<const std::string>) override { return 0; }
  std::size_t size() const noexcept override { return points_.size(); }
  Status push_frame(const ImageView&, std::vector<TrackPoint>& out) noexcept override {
    std::this_thread::sleep_for(cost_);
    out.clear();
    for (const Query& q : points_) out.push_back({q.id, q.x, q.y, true, 1.f, false});
    return Status::ok();
  }

 private:
  std::chrono::milliseconds cost_;
  std::vector<Query> points_;
};

// A tracker that gives one track up at frame `at` (counting from 0): reports it
// lost once (`says_lost`) or simply stops reporting it; the others stay put.
class GivingUpTracker final : public Tracker {
 public:
  GivingUpTracker(std::string id, int at, bool says_lost) : id_(std::move(id)), at_(at), says_lost_(says_lost) {}
  std::string_view name() const noexcept override { return "giving-up"; }
  void add_queries(std::span<const Query> q) override { points_.insert(points_.end(), q.begin(), q.end()); }
  std::size_t remove_queries(std::span<const std::string>) override { return 0; }
  std::size_t size() const noexcept override { return points_.size(); }
  Status push_frame(const ImageView&, std::vector<TrackPoint>& out) noexcept override {
    out.clear();
    const bool giving_up = frames_++ == at_;
    for (const Query& q : points_) {
      if (q.id != id_ || !giving_up) {
        out.push_back({q.id, q.x, q.y, true, 1.f, false});
      } else if (says_lost_) {
        out.push_back({q.id, q.x, q.y, false, 0.f, true});
      }
    }
    if (giving_up) std::erase_if(points_, [&](const Query& q) { return q.id == id_; });
    return Status::ok();
  }

 private:
  std::string id_;
  int at_;
  bool says_lost_;
  int frames_ = 0;
  std::vector<Query> points_;
};

// A tracker whose device fails: push_frame reports an internal error from
// frame `fail_at` on (counting from 0), or add_queries throws once armed.
class FailingTracker final : public Tracker {
 public:
  FailingTracker(int fail_at, bool throw_on_add) : fail_at_(fail_at), throw_on_add_(throw_on_add) {}
  std::string_view name() const noexcept override { return "failing"; }
  void add_queries(std::span<const Query> q) override {
    if (throw_on_add_ && frames_ > 0) throw std::runtime_error("cudaMallocAsync failed: out of memory (injected)");
    points_.insert(points_.end(), q.begin(), q.end());
  }
  std::size_t remove_queries(std::span<const std::string>) override { return 0; }
  std::size_t size() const noexcept override { return points_.size(); }
  Status push_frame(const ImageView&, std::vector<TrackPoint>& out) noexcept override {
    if (frames_++ >= fail_at_) return Status::error(Status::Code::internal, "kernel launch failed (injected)");
    out.clear();
    for (const Query& q : points_) out.push_back({q.id, q.x, q.y, true, 1.f, false});
    return Status::ok();
  }

 private:
  int fail_at_;
  bool throw_on_add_;
  int frames_ = 0;
  std::vector<Query> points_;
};

}  // namespace

TEST(Governor, StepsDownAfterTheConfiguredFramesOverBudget) {
  pipeline::LatencyGovernor g(quick_governor(), 50.0, 3);
  double t = 0;
  int frames = 0;
  std::optional<pipeline::LatencyGovernor::Change> change;
  while (!change && frames < 100) change = g.observe(80.0, t += 0.033), ++frames;
  ASSERT_TRUE(change);
  EXPECT_EQ(frames, 5);  // down_after
  EXPECT_EQ(change->from, 0);
  EXPECT_EQ(change->to, 1);
  EXPECT_NE(change->reason.find("over the 50 ms budget"), std::string::npos) << change->reason;
  // It never steps below the last rung.
  for (int i = 0; i < 100; ++i) g.observe(500.0, t += 0.033);
  EXPECT_EQ(g.rung(), 2);
}

TEST(Governor, StepsBackUpAfterSustainedHeadroom) {
  pipeline::LatencyGovernor g(quick_governor(), 50.0, 3);
  double t = 0;
  for (int i = 0; i < 5; ++i) g.observe(80.0, t += 0.033);
  ASSERT_EQ(g.rung(), 1);
  int frames = 0;
  while (g.rung() == 1 && frames < 1000) g.observe(10.0, t += 0.033), ++frames;
  EXPECT_EQ(g.rung(), 0);
  EXPECT_EQ(frames, 60) << "up_after 30, doubled once since rung 0 failed once";
}

TEST(Governor, RespectsTheMinimumDwellTime) {
  auto settings = quick_governor();
  settings.min_dwell_s = 2.0;
  pipeline::LatencyGovernor g(settings, 50.0, 3);
  double t = 0;
  for (int i = 0; i < 5; ++i) g.observe(80.0, t += 0.033);  // first change: allowed at once
  ASSERT_EQ(g.rung(), 1);
  for (int i = 0; i < 30; ++i) g.observe(80.0, t += 0.033);  // ~1 s: too soon for the next
  EXPECT_EQ(g.rung(), 1);
  for (int i = 0; i < 40; ++i) g.observe(80.0, t += 0.033);
  EXPECT_EQ(g.rung(), 2);
}

TEST(Governor, DoesNotOscillateUnderALoadRightAtTheBudget) {
  // Rung 0 costs just over the budget, rung 1 well under: a naive governor flips forever.
  pipeline::LatencyGovernor g(quick_governor(), 50.0, 2);
  double t = 0;
  int changes = 0, frames_on_rung0 = 0;
  constexpr int kFrames = 4000;
  for (int i = 0; i < kFrames; ++i) {
    const double latency = g.rung() == 0 ? 52.0 : 20.0;
    frames_on_rung0 += g.rung() == 0;
    changes += g.observe(latency, t += 0.033).has_value();
  }
  EXPECT_LE(changes, 14) << "changes in " << kFrames << " frames";
  EXPECT_LT(frames_on_rung0, kFrames / 20);
}

TEST(Ladder, SwitchingRungsKeepsIdsAndPositions) {
  // Content moves (-2, -1) px per frame at 256; rung 1 tracks at 128.
  const cv::Mat texture = test::random_texture(600, 600, 5);
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(256), {rung(256), rung(128)},
      [](const config::Rung&, std::string&) { return std::make_unique<pipeline::KltTracker>(config::KltSettings{}); },
      *std::make_unique<std::string>());
  ASSERT_TRUE(ladder);
  std::vector<Query> queries;
  for (int i = 0; i < 16; ++i) queries.push_back({"q" + std::to_string(i), 60.f + 40.f * (i % 4), 60.f + 40.f * (i / 4)});
  ladder->add_queries(queries);
  std::vector<TrackPoint> out;
  for (int t = 0; t < 12; ++t) {
    if (t == 6) {
      std::string error;
      ASSERT_TRUE(ladder->switch_to(1, error)) << error;
      EXPECT_EQ(ladder->name(), "klt");
      EXPECT_EQ(ladder->rung(), 1);
    }
    const auto frame = test::crop_frame(texture, 100 + 2 * t, 100 + t, 256, 256, t);
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ASSERT_EQ(out.size(), 16u) << "frame " << t;
    for (std::size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].id, queries[i].id);
      EXPECT_FALSE(out[i].lost);
      // Half resolution after the switch: a looser tolerance.
      const float tolerance = t < 6 ? 0.3f : 1.0f;
      EXPECT_NEAR(out[i].x, queries[i].x - 2.f * t, tolerance) << out[i].id << " frame " << t;
      EXPECT_NEAR(out[i].y, queries[i].y - 1.f * t, tolerance) << out[i].id << " frame " << t;
    }
  }
}

TEST(Ladder, ALowerPointCapHoldsTheExcessOccludedUntilARungHasRoom) {
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(64, 10)},
      [](const config::Rung&, std::string&) { return std::make_unique<SleepingTracker>(0ms); }, error);
  ASSERT_TRUE(ladder);
  std::vector<Query> queries;
  for (int i = 0; i < 25; ++i) queries.push_back({"p" + std::to_string(i), 1.f * i, 2.f});
  ladder->add_queries(queries);
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_TRUE(ladder->switch_to(1, error)) << error;
  EXPECT_EQ(ladder->capacity(), 10u);
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ASSERT_EQ(out.size(), 25u) << "frame " << t;
    EXPECT_EQ(std::count_if(out.begin(), out.end(), [](const TrackPoint& p) { return p.lost; }), 0);
    EXPECT_EQ(std::count_if(out.begin(), out.end(), [](const TrackPoint& p) { return !p.visible; }), 15);
  }
  ASSERT_TRUE(ladder->switch_to(0, error)) << error;  // room again: every held track restarts
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_EQ(out.size(), 25u);
  for (const TrackPoint& p : out) {
    EXPECT_TRUE(p.visible) << p.id;
    const int i = std::stoi(p.id.substr(1));
    EXPECT_NEAR(p.x, 1.f * i, 1e-4) << p.id;
  }
}

TEST(Ladder, ATrackTheRungGivesUpIsHeldWhereItWasAndRestartedByTheNextRung) {
  for (const bool says_lost : {true, false}) {  // reported lost, or no longer reported at all
    std::string error;
    int built = 0;
    auto ladder = pipeline::LadderedTracker::make(
        camera_at(64), {rung(64), rung(64)},
        [&](const config::Rung&, std::string&) -> std::unique_ptr<Tracker> {
          if (built++ == 0) return std::make_unique<GivingUpTracker>("b", 1, says_lost);
          return std::make_unique<SleepingTracker>(0ms);
        },
        error);
    ASSERT_TRUE(ladder) << error;
    ladder->add_queries(std::vector<Query>{{"a", 10.f, 12.f}, {"b", 30.f, 40.f}});
    const test::NetworkLessFrame frame(64);
    std::vector<TrackPoint> out;
    auto find = [&](const std::string& id) {
      return std::find_if(out.begin(), out.end(), [&](const TrackPoint& p) { return p.id == id; });
    };
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    for (int t = 1; t <= 2; ++t) {
      ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
      ASSERT_EQ(out.size(), 2u) << "frame " << t;
      const auto b = find("b");
      ASSERT_NE(b, out.end());
      EXPECT_FALSE(b->lost);
      EXPECT_FALSE(b->visible);
      EXPECT_EQ(b->confidence, 0.f);
      EXPECT_NEAR(b->x, 30.f, 1e-4);
      EXPECT_NEAR(b->y, 40.f, 1e-4);
    }
    EXPECT_EQ(ladder->size(), 2u);
    ASSERT_TRUE(ladder->switch_to(1, error)) << error;
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(find("b")->visible) << "restarted where it was held";
    EXPECT_NEAR(find("b")->x, 30.f, 1e-4);
  }
}

TEST(Ladder, AWarmUpReachesTheRungInForceAtItsSizeUpToItsCap) {
  struct WarmUp {
    int width = 0, height = 0;
    std::size_t points = 0;
  };
  // Records the warm-up it is asked for.
  class WarmedTracker final : public Tracker {
   public:
    explicit WarmedTracker(std::vector<WarmUp>& log) : log_(log) {}
    std::string_view name() const noexcept override { return "warmed"; }
    void add_queries(std::span<const Query>) override {}
    std::size_t remove_queries(std::span<const std::string>) override { return 0; }
    std::size_t size() const noexcept override { return 0; }
    Status push_frame(const ImageView&, std::vector<TrackPoint>& out) noexcept override {
      out.clear();
      return Status::ok();
    }
    Status warm_up(int width, int height, std::size_t points) noexcept override {
      log_.push_back({width, height, points});
      return Status::ok();
    }

   private:
    std::vector<WarmUp>& log_;
  };
  std::vector<WarmUp> log;
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(32, 10), rung(64)},
      [&](const config::Rung&, std::string&) { return std::make_unique<WarmedTracker>(log); }, error);
  ASSERT_TRUE(ladder) << error;
  ASSERT_TRUE(ladder->warm_up(64, 64, 25).is_ok());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].width, 32);
  EXPECT_EQ(log[0].height, 32);
  EXPECT_EQ(log[0].points, 10u);
}

TEST(Ladder, ALadderOfOneRungReportsATrackItGivesUpLostOnce) {
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64)},
      [](const config::Rung&, std::string&) { return std::make_unique<GivingUpTracker>("b", 1, true); }, error);
  ASSERT_TRUE(ladder) << error;
  ladder->add_queries(std::vector<Query>{{"a", 10.f, 12.f}, {"b", 30.f, 40.f}});
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[1].lost);
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "a");
}

TEST(Ladder, TwoCamerasShareTheGateAndOnlyTheOverloadedOneStepsDown) {
  pipeline::ComputeGate gate;
  auto settings = quick_governor();
  struct Camera {
    std::vector<std::chrono::milliseconds> cost;  // per rung
    double budget_ms;
    int final_rung = -1;
    int changes = 0;
  };
  // With fair turns the light camera waits at most one heavy frame (60 ms) behind a
  // frame up to one period old (33 ms): it meets a 150 ms budget however busy the other is.
  Camera heavy{{60ms, 4ms}, 40.0}, light{{4ms, 1ms}, 150.0};
  auto run = [&](Camera& cam) {
    std::string error;
    auto ladder = pipeline::LadderedTracker::make(
        camera_at(64), {rung(64), rung(64)},
        [&, index = 0](const config::Rung&, std::string&) mutable {
          return std::make_unique<SleepingTracker>(cam.cost[static_cast<std::size_t>(index++)]);
        },
        error);
    pipeline::LatencyGovernor governor(settings, cam.budget_ms, ladder->rungs());
    const test::NetworkLessFrame frame(64);
    std::vector<TrackPoint> out;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 60;) {  // 30 frames/s for 2 s
      // Like the daemon's frame queue: a camera that fell behind takes the newest frame.
      const auto now_frame = static_cast<int>((std::chrono::steady_clock::now() - start) / 33ms);
      i = std::max(i, now_frame);
      const auto captured = start + i * 33ms;
      std::this_thread::sleep_until(captured);
      ++i;
      {
        pipeline::ComputeGate::Turn turn(gate);
        ladder->push_frame(frame.view(), out);
      }
      const double latency = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - captured).count();
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (auto change = governor.observe(latency, now)) {
        ladder->switch_to(change->to, error);
        ++cam.changes;
      }
    }
    cam.final_rung = ladder->rung();
  };
  std::thread a([&] { run(heavy); }), b([&] { run(light); });
  a.join();
  b.join();
  EXPECT_EQ(heavy.final_rung, 1) << "the overloaded camera did not step down";
  EXPECT_EQ(light.final_rung, 0) << "the light camera lost its rung to the heavy one";
  EXPECT_EQ(light.changes, 0);
}

TEST(Ladder, TheDefaultEdgetapLadderStartsWithTheLargeModelInHalfPrecisionOnAGpu) {
  config::CameraConfig camera;
  camera.tracker = config::TrackerKind::edgetap;
  camera.model_width = 320;
  camera.model_height = 256;
  std::vector<std::string> skipped;
  std::vector<std::string> cpu_names, gpu_names;
  for (const config::Rung& r : pipeline::resolve_ladder(camera, skipped, false)) {
    cpu_names.push_back(pipeline::rung_name(r, camera));
  }
  EXPECT_EQ(cpu_names, (std::vector<std::string>{"edgetap-fp32-320x256", "edgetap-fp32-224x192-i2",
                                                  "edgetap-fp32-160x128-i1-p256-s2", "klt"}));
  for (const config::Rung& r : pipeline::resolve_ladder(camera, skipped, true)) {
    gpu_names.push_back(pipeline::rung_name(r, camera));
  }
  EXPECT_EQ(gpu_names, (std::vector<std::string>{"edgetap-large-fp16-320x256", "edgetap-large-fp16-224x192-i2",
                                                  "edgetap-fp16-320x256", "edgetap-fp16-224x192-i2",
                                                  "edgetap-fp16-160x128-i1-s2", "klt"}));
  EXPECT_TRUE(skipped.empty());
  // A camera that names its own model keeps it on every network rung, in FP16 on a GPU.
  camera.edgetap.model = "/models/mine.safetensors";
  std::vector<std::string> own_names;
  for (const config::Rung& r : pipeline::resolve_ladder(camera, skipped, true)) {
    own_names.push_back(pipeline::rung_name(r, camera));
    EXPECT_TRUE(r.model.empty()) << "the camera's own model, not the bundled large one";
  }
  EXPECT_EQ(own_names, (std::vector<std::string>{"edgetap-fp16-320x256", "edgetap-fp16-224x192-i2",
                                                  "edgetap-fp16-160x128-i1-s2", "klt"}));
}

TEST(Ladder, Fp16RungsAreLeftOutWithTheReasonWhereNoGpuRunsTheNetwork) {
  config::CameraConfig camera;
  camera.tracker = config::TrackerKind::edgetap;
  config::Rung half;
  half.precision = config::Precision::fp16;
  config::Rung full;
  camera.ladder = {full, half};
  std::vector<std::string> skipped;
  const std::vector<config::Rung> usable = pipeline::resolve_ladder(camera, skipped, false);
  ASSERT_EQ(usable.size(), 1u);
  EXPECT_EQ(usable[0].precision, config::Precision::fp32);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("edgetap-fp16-256x256 (fp16 needs a CUDA device"), std::string::npos) << skipped[0];
  skipped.clear();
  EXPECT_EQ(pipeline::resolve_ladder(camera, skipped, true).size(), 2u);
  EXPECT_TRUE(skipped.empty());
}

TEST(Ladder, ARungWithoutTemplateRefinementIsNamedSoAndBuildsTrackersWithout) {
  config::CameraConfig camera;
  camera.tracker = config::TrackerKind::edgetap;
  camera.model_width = camera.model_height = 128;
  camera.edgetap.model = std::string(EDGETAP_SOURCE_DIR) + "/models/edgetap-small.safetensors";
  config::Rung refined, unrefined;
  unrefined.template_refinement = false;
  camera.ladder = {refined, unrefined};
  std::vector<std::string> skipped;
  const std::vector<config::Rung> rungs = pipeline::resolve_ladder(camera, skipped, false);
  ASSERT_EQ(rungs.size(), 2u);
  EXPECT_EQ(pipeline::rung_name(rungs[0], camera), "edgetap-fp32-128x128");
  EXPECT_EQ(pipeline::rung_name(rungs[1], camera), "edgetap-fp32-128x128-unrefined");
  // The two rungs' trackers on a texture moved by a sub-pixel shift: the model declares
  // refinement, so only the first rung's positions are aligned, and they differ.
  pipeline::ModelCache models;
  const pipeline::RungTrackerFactory factory = pipeline::rung_tracker_factory(camera, models);
  std::string error;
  auto with = factory(rungs[0], error);
  auto without = factory(rungs[1], error);
  ASSERT_TRUE(with && without) << error;
  const cv::Mat a = test::random_texture(128, 128, 5);
  cv::Mat b;
  const cv::Mat shift = (cv::Mat_<double>(2, 3) << 1, 0, 0.7, 0, 1, -0.4);
  cv::warpAffine(a, b, shift, a.size(), cv::INTER_CUBIC, cv::BORDER_REFLECT);
  const std::vector<Query> queries{{"p", 64.f, 64.f}, {"q", 40.f, 80.f}};
  std::vector<TrackPoint> out_with, out_without;
  for (Tracker* t : {with.get(), without.get()}) {
    std::vector<TrackPoint>& out = t == with.get() ? out_with : out_without;
    t->add_queries(queries);
    ASSERT_TRUE(t->push_frame(ImageView{a.data, a.cols, a.rows, a.step}, out));
    ASSERT_TRUE(t->push_frame(ImageView{b.data, b.cols, b.rows, b.step}, out));
  }
  ASSERT_EQ(out_with.size(), 2u);
  EXPECT_TRUE(out_with[0].x != out_without[0].x || out_with[0].y != out_without[0].y ||
              out_with[1].x != out_without[1].x || out_with[1].y != out_without[1].y);
}

TEST(Governor, DoesNotJudgeTheWarmUpFramesOfAStartOrAChange) {
  auto settings = quick_governor();
  settings.warmup_frames = 20;
  pipeline::LatencyGovernor g(settings, 50.0, 3);
  double t = 0;
  // A start's set-up: 20 slow frames, then the rung's steady cost, well inside the budget.
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(g.observe(400.0, t += 0.033)) << "warm-up frame " << i;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(g.observe(20.0, t += 0.033)) << "steady frame " << i;
  EXPECT_EQ(g.rung(), 0);
  // A real overload still steps down, after down_after frames past the warm-up.
  int frames = 0;
  std::optional<pipeline::LatencyGovernor::Change> change;
  while (!change && frames < 100) change = g.observe(80.0, t += 0.033), ++frames;
  ASSERT_TRUE(change);
  // p90 of a 10-frame window turns at the second slow frame, then down_after frames.
  EXPECT_EQ(frames, settings.down_after + 1);
  // The new rung's own set-up frames are not judged either.
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(g.observe(400.0, t += 0.033)) << "new rung's warm-up frame " << i;
  EXPECT_EQ(g.rung(), 1);
}

TEST(Governor, FollowsAFailOverAndNeverStepsBackUpToAFailedRung) {
  pipeline::LatencyGovernor g(quick_governor(), 50.0, 3);
  double t = 0;
  g.rung_failed(0, 1, t);
  EXPECT_EQ(g.rung(), 1);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(g.observe(1.0, t += 0.033)) << "frame " << i;
  EXPECT_EQ(g.rung(), 1);
}

TEST(Ladder, ARungWhoseTrackerFailsHandsItsTracksToTheNextRung) {
  std::string error;
  int built = 0;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(64), rung(64)},
      [&](const config::Rung&, std::string&) -> std::unique_ptr<Tracker> {
        // Rung 0's tracker fails at its fourth frame; the next ones work.
        return std::make_unique<FailingTracker>(built++ == 0 ? 3 : 1 << 30, false);
      },
      error);
  ASSERT_TRUE(ladder) << error;
  const std::vector<Query> queries = {{"a", 10.f, 12.f}, {"b", 30.f, 40.f}};
  ladder->add_queries(queries);
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  EXPECT_FALSE(ladder->take_failover());

  const Status failed = ladder->push_frame(frame.view(), out);
  EXPECT_FALSE(failed.is_ok());
  EXPECT_EQ(ladder->rung(), 1);
  const auto failover = ladder->take_failover();
  ASSERT_TRUE(failover);
  EXPECT_EQ(failover->from, 0);
  EXPECT_EQ(failover->to, 1);
  EXPECT_NE(failover->message.find("kernel launch failed (injected)"), std::string::npos) << failover->message;
  EXPECT_FALSE(ladder->take_failover()) << "reported once";

  // The next frame runs on rung 1 with the same ids where they were.
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].id, queries[i].id);
    EXPECT_NEAR(out[i].x, queries[i].x, 1e-4);
    EXPECT_NEAR(out[i].y, queries[i].y, 1e-4);
  }
  // The failed rung is not taken again.
  EXPECT_FALSE(ladder->switch_to(0, error));
  EXPECT_NE(error.find("failed before"), std::string::npos) << error;
  EXPECT_EQ(ladder->rung(), 1);
}

TEST(Ladder, AnExceptionWhileAddingPointsFailsTheRungAndKeepsEveryPoint) {
  std::string error;
  int built = 0;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(64)},
      [&](const config::Rung&, std::string&) -> std::unique_ptr<Tracker> {
        return std::make_unique<FailingTracker>(1 << 30, built++ == 0);
      },
      error);
  ASSERT_TRUE(ladder) << error;
  ladder->add_queries(std::vector<Query>{{"old", 5.f, 6.f}});
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ladder->add_queries(std::vector<Query>{{"new", 20.f, 21.f}});  // throws inside: rung 0 fails
  const auto failover = ladder->take_failover();
  ASSERT_TRUE(failover);
  EXPECT_EQ(failover->to, 1);
  EXPECT_NE(failover->message.find("out of memory (injected)"), std::string::npos) << failover->message;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  std::set<std::string> ids;
  for (const TrackPoint& p : out) ids.insert(p.id);
  EXPECT_EQ(ids, (std::set<std::string>{"old", "new"}));
}

TEST(Ladder, PointsAddedSinceTheLastFrameMoveWithAGovernorSwitch) {
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(32)},
      [](const config::Rung&, std::string&) { return std::make_unique<SleepingTracker>(0ms); }, error);
  ASSERT_TRUE(ladder) << error;
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ladder->add_queries(std::vector<Query>{{"late", 40.f, 20.f}});
  ASSERT_TRUE(ladder->switch_to(1, error)) << error;
  ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "late");
  EXPECT_NEAR(out[0].x, 40.f, 1e-4);  // back in the camera's model pixels
  EXPECT_NEAR(out[0].y, 20.f, 1e-4);
}
