// Rung changes that do not stop the camera: a rung built beside the one in
// force (its own thread, fed every frame until it caught up, then taking over
// with the same ids and positions), a build that fails, and the governors of
// several cameras stepping one at a time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "edgetap/ladder/governor_peers.hpp"
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

// Leaves points where they are and counts the frames it saw, taking `per_frame` for each.
class StillTracker final : public Tracker {
 public:
  explicit StillTracker(std::atomic<int>& frames, std::chrono::milliseconds per_frame = 0ms)
      : frames_(frames), per_frame_(per_frame) {}
  std::string_view name() const noexcept override { return "still"; }
  void add_queries(std::span<const Query> q) override {
    for (const Query& query : q) {
      std::erase_if(points_, [&](const Query& p) { return p.id == query.id; });
      points_.push_back(query);
    }
  }
  std::size_t remove_queries(std::span<const std::string> ids) override {
    return std::erase_if(points_, [&](const Query& p) { return std::find(ids.begin(), ids.end(), p.id) != ids.end(); });
  }
  std::size_t size() const noexcept override { return points_.size(); }
  Status push_frame(const ImageView&, std::vector<TrackPoint>& out) noexcept override {
    if (per_frame_ > 0ms) std::this_thread::sleep_for(per_frame_);
    ++frames_;
    out.clear();
    for (const Query& q : points_) out.push_back({q.id, q.x, q.y, true, 1.f, false});
    return Status::ok();
  }

 private:
  std::atomic<int>& frames_;
  const std::chrono::milliseconds per_frame_;
  std::vector<Query> points_;
};

// Holds a factory until the test lets it go: a rung whose set-up takes long.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    open_cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    open_cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable open_cv_;
  bool open_ = false;
};

const TrackPoint* find(const std::vector<TrackPoint>& out, const std::string& id) {
  for (const TrackPoint& p : out) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

// Point "a" added, one frame tracked, then a move to rung 1 begun.
testing::AssertionResult begin_switch_with_a_point(pipeline::LadderedTracker& ladder,
                                                   const test::NetworkLessFrame& frame, std::vector<TrackPoint>& out) {
  ladder.add_queries(std::vector<Query>{{"a", 10.f, 12.f}});
  if (!ladder.push_frame(frame.view(), out).is_ok()) return testing::AssertionFailure() << "the first frame failed";
  std::string error;
  if (!ladder.begin_switch(1, error)) return testing::AssertionFailure() << error;
  return testing::AssertionSuccess();
}

}  // namespace

TEST(RungBuild, ARungBuiltBesideTheOneInForceTakesOverWithEveryFrameAndPoint) {
  std::atomic<int> old_frames{0}, new_frames{0};
  Gate slow_set_up;
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(32)},
      [&](const config::Rung& r, std::string&) -> std::unique_ptr<Tracker> {
        if (r.width == 64) return std::make_unique<StillTracker>(old_frames);
        slow_set_up.wait();
        return std::make_unique<StillTracker>(new_frames);
      },
      error);
  ASSERT_TRUE(ladder) << error;
  ladder->add_queries(std::vector<Query>{{"a", 10.f, 12.f}, {"b", 30.f, 40.f}});
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());

  ASSERT_TRUE(ladder->begin_switch(1, error)) << error;
  EXPECT_TRUE(ladder->switching());
  // While the new rung's set-up runs, the rung in force tracks every frame and
  // takes point changes, which the new rung gets when it takes over.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    EXPECT_EQ(ladder->rung(), 0);
    if (i == 1) ladder->add_queries(std::vector<Query>{{"c", 50.f, 8.f}});
    if (i == 2) ladder->remove_queries(std::vector<std::string>{"b"});
  }
  EXPECT_EQ(old_frames.load(), 8);
  EXPECT_FALSE(ladder->take_switch());
  slow_set_up.open();

  // It takes over at a frame's start once it has caught up; a bounded wait.
  int frames = 0;
  while (ladder->rung() == 0 && frames < 2000) {
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ++frames;
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(ladder->rung(), 1);
  EXPECT_FALSE(ladder->switching());
  const auto done = ladder->take_switch();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->from, 0);
  EXPECT_EQ(done->to, 1);
  EXPECT_TRUE(done->error.empty()) << done->error;
  EXPECT_FALSE(ladder->take_switch()) << "reported once";
  // The new tracker saw the frame the switch was asked at and every frame after it.
  EXPECT_EQ(new_frames.load(), 1 + 5 + frames);
  EXPECT_EQ(old_frames.load(), 8 + frames - 1);

  std::set<std::string> ids;
  for (const TrackPoint& p : out) ids.insert(p.id);
  EXPECT_EQ(ids, (std::set<std::string>{"a", "c"}));
  const TrackPoint* a = find(out, "a");
  const TrackPoint* c = find(out, "c");
  ASSERT_TRUE(a && c);
  EXPECT_NEAR(a->x, 10.f, 1e-3);  // in the camera's model pixels, through the 32-pixel rung
  EXPECT_NEAR(a->y, 12.f, 1e-3);
  EXPECT_NEAR(c->x, 50.f, 1e-3);
  EXPECT_NEAR(c->y, 8.f, 1e-3);
}

TEST(RungBuild, ARungSlowerThanTheOneInForceStillTakesOver) {
  // The new rung takes 2 ms a frame, the one in force nothing, and the camera gives
  // frames as fast as it can: the build is busy whenever it is asked. After
  // kFramesBeforeWaiting frames the camera waits for it to catch up.
  std::atomic<int> old_frames{0}, new_frames{0};
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(32)},
      [&](const config::Rung& r, std::string&) -> std::unique_ptr<Tracker> {
        if (r.width == 64) return std::make_unique<StillTracker>(old_frames);
        return std::make_unique<StillTracker>(new_frames, 2ms);
      },
      error);
  ASSERT_TRUE(ladder) << error;
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(begin_switch_with_a_point(*ladder, frame, out));
  int frames = 0;
  const int most = 4 * static_cast<int>(pipeline::RungBuild::kMaxBacklog);  // before, it never took over
  while (ladder->rung() == 0 && frames < most) {
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ++frames;
  }
  ASSERT_EQ(ladder->rung(), 1) << "after " << frames << " frames";
  const auto done = ladder->take_switch();
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->error.empty()) << done->error;
  EXPECT_EQ(new_frames.load(), 1 + frames) << "the new rung saw the switch's frame and every frame after it";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "a");
}

TEST(RungBuild, ABuildThatFailsLeavesTheRungInForceAndSaysWhy) {
  std::atomic<int> frames_seen{0};
  std::string error;
  auto ladder = pipeline::LadderedTracker::make(
      camera_at(64), {rung(64), rung(32)},
      [&](const config::Rung& r, std::string& make_error) -> std::unique_ptr<Tracker> {
        if (r.width == 64) return std::make_unique<StillTracker>(frames_seen);
        make_error = "cudaMallocAsync: out of memory (injected)";
        return nullptr;
      },
      error);
  ASSERT_TRUE(ladder) << error;
  const test::NetworkLessFrame frame(64);
  std::vector<TrackPoint> out;
  ASSERT_TRUE(begin_switch_with_a_point(*ladder, frame, out));
  std::optional<pipeline::LadderedTracker::Switch> done;
  for (int i = 0; i < 2000 && !done; ++i) {
    ASSERT_TRUE(ladder->push_frame(frame.view(), out).is_ok());
    ASSERT_EQ(out.size(), 1u);
    done = ladder->take_switch();
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(done->to, 1);
  EXPECT_NE(done->error.find("out of memory (injected)"), std::string::npos) << done->error;
  EXPECT_EQ(ladder->rung(), 0);
  EXPECT_FALSE(ladder->switching());
}

TEST(Governor, CamerasOverBudgetTogetherStepOneAtATime) {
  pipeline::GovernorPeers peers;
  const auto settings = quick_governor();
  pipeline::LatencyGovernor a(settings, 50.0, 4, &peers), b(settings, 50.0, 4, &peers);
  double t = 0;
  std::vector<std::pair<char, int>> changes;  // (camera, frame)
  for (int frame = 0; frame < 60; ++frame) {
    t += 0.033;
    // Both over budget on the same frames, as cameras sharing an overloaded device are.
    if (a.observe(80.0, t)) changes.push_back({'a', frame});
    if (b.observe(80.0, t)) changes.push_back({'b', frame});
  }
  ASSERT_GE(changes.size(), 2u);
  for (std::size_t i = 1; i < changes.size(); ++i) {
    const int apart = changes[i].second - changes[i - 1].second;
    // The other camera's evidence starts again after each change: down_after fresh
    // frames (and the spacing) before the next.
    EXPECT_GE(apart, settings.down_after) << "changes " << i - 1 << " and " << i << " came together";
    EXPECT_GE(apart * 0.033, pipeline::GovernorPeers::kChangeSpacingS - 1e-9);
  }
  EXPECT_NE(changes[0].first, changes[1].first) << "the camera that waited steps next";
}

TEST(Governor, StepsDownPastARungWhoseTrackerFailed) {
  pipeline::LatencyGovernor g(quick_governor(), 50.0, 4);
  double t = 0;
  g.rung_failed(1, 0, t);  // rung 1 could not be built; the camera stayed on 0
  std::optional<pipeline::LatencyGovernor::Change> change;
  for (int i = 0; i < 100 && !change; ++i) change = g.observe(80.0, t += 0.033);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->from, 0);
  EXPECT_EQ(change->to, 2);
}
