// Running trackers through the seam: the time model (a query is added right
// after its frame was pushed), forward and backward passes, the mapping to the
// tracker's frame size, lost tracks scored as occluded at their last
// position, klt on a generated sequence, and the edgetap weights chosen by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "edgetap/eval/tracker_registry.hpp"
#include "edgetap/eval/tracker_runner.hpp"
#include "edgetap/synth/generator.hpp"
#include "edgetap/synth/layer_images.hpp"
#include "fixtures.hpp"
#include "metrics_cases.hpp"

using namespace edgetap;
using namespace edgetap::test;

namespace {

// Moves every track by +1 px in x per pushed frame (in either time direction)
// and gives up track `lose_id` on push number `lose_at`. Records when queries arrive.
class ScriptedTracker final : public Tracker {
 public:
  ScriptedTracker(std::string lose_id, int lose_at) : lose_id_(std::move(lose_id)), lose_at_(lose_at) {}
  std::string_view name() const noexcept override { return "scripted"; }
  void add_queries(std::span<const Query> queries) override {
    for (const Query& q : queries) {
      tracks_[q.id] = {q.x, q.y};
      added_after_push_[q.id] = pushes_;
    }
  }
  std::size_t remove_queries(std::span<const std::string>) override { return 0; }
  std::size_t size() const noexcept override { return tracks_.size(); }
  void encode_ahead(std::span<const ImageView> frames) override {
    for (const ImageView& f : frames) announced_.push_back(f.data);
  }
  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override {
    out.clear();
    last_width_ = frame.width;
    pushed_.push_back(frame.data);
    ++pushes_;
    for (auto it = tracks_.begin(); it != tracks_.end();) {
      if (it->first == lose_id_ && pushes_ == lose_at_) {
        out.push_back({it->first, it->second.x, it->second.y, false, 0.f, true});
        it = tracks_.erase(it);
        continue;
      }
      it->second.x += 1.f;
      out.push_back({it->first, it->second.x, it->second.y, true, 1.f, false});
      ++it;
    }
    return Status::ok();
  }
  std::map<std::string, int> added_after_push_;
  int last_width_ = 0;
  std::vector<const std::uint8_t*> announced_, pushed_;  // the images encode_ahead and push_frame were given

 private:
  struct Pos {
    float x, y;
  };
  std::string lose_id_;
  int lose_at_;
  int pushes_ = 0;
  std::map<std::string, Pos> tracks_;
};

std::vector<cv::Mat> blank_frames(int n, int width, int height) {
  return std::vector<cv::Mat>(static_cast<std::size_t>(n), cv::Mat(height, width, CV_8UC3, cv::Scalar::all(0)));
}

// n frames, each its own image in memory.
std::vector<cv::Mat> distinct_frames(int n, int width, int height) {
  std::vector<cv::Mat> frames;
  for (int i = 0; i < n; ++i) frames.emplace_back(height, width, CV_8UC3, cv::Scalar::all(i));
  return frames;
}

// A sequence of the fixture images in `dir` with no occluders; `adjust` sets the rest.
synth::GeneratedSequence background_only_sequence(const TempDir& dir,
                                                  const std::function<void(synth::SynthOptions&)>& adjust) {
  write_fixture_images(dir.path(), 2);
  synth::SynthOptions o = fixture_options(dir.path());
  o.occluders = 0;
  adjust(o);
  return synth::make_sequence(o, 0, synth::list_images(o.backgrounds), {});
}

}  // namespace

TEST(TrackerRunner, QueriesArriveRightAfterTheirFrameAndLostTracksStayPut) {
  const auto frames = blank_frames(6, 64, 64);
  const std::vector<eval::QuerySpec> queries = {{0, 0, 10, 20}, {0, 2, 30, 40}};
  eval::Predictions out(2, std::vector<eval::PredSample>(6));
  ScriptedTracker tracker("q1", 5);  // q1 (added after push 3) is lost on push 5 (frame 4)
  eval::track_pass(tracker, frames, eval::PixelMap{}, queries, eval::TimeDirection::forward, out);
  EXPECT_EQ(tracker.added_after_push_.at("q0"), 1);  // after frame 0 was pushed
  EXPECT_EQ(tracker.added_after_push_.at("q1"), 3);  // after frame 2
  for (int t = 1; t < 6; ++t) {
    EXPECT_DOUBLE_EQ(out[0][static_cast<std::size_t>(t)].x, 10 + t) << t;
    EXPECT_TRUE(out[0][static_cast<std::size_t>(t)].visible) << t;
  }
  EXPECT_DOUBLE_EQ(out[1][3].x, 31);
  EXPECT_TRUE(out[1][3].visible);
  // Lost at frame 4 where it stood after frame 3; occluded there from then on.
  for (std::size_t t : {4u, 5u}) {
    EXPECT_DOUBLE_EQ(out[1][t].x, 31) << t;
    EXPECT_DOUBLE_EQ(out[1][t].y, 40) << t;
    EXPECT_FALSE(out[1][t].visible) << t;
  }
}

TEST(TrackerRunner, AStridedCadenceHoldsTheLastAnswersBetweenTrackedFrames) {
  // Every 2nd frame is pushed (0, 2, 4), and frame 3 too, where q1 starts.
  const auto frames = blank_frames(6, 64, 64);
  const std::vector<eval::QuerySpec> queries = {{0, 0, 10, 20}, {0, 3, 30, 40}};
  eval::Predictions out(2, std::vector<eval::PredSample>(6));
  ScriptedTracker tracker("", 0);
  eval::track_pass(tracker, frames, eval::PixelMap{}, queries, eval::TimeDirection::forward, out, {}, 0, 0, 2);
  EXPECT_EQ(tracker.added_after_push_.at("q0"), 1);  // after frame 0
  EXPECT_EQ(tracker.added_after_push_.at("q1"), 3);  // after frames 0, 2 and 3
  const double q0_x[] = {10, 10, 11, 12, 13, 13};    // frames 1 and 5 hold the frame before's answer
  for (std::size_t t = 1; t < 6; ++t) {
    EXPECT_DOUBLE_EQ(out[0][t].x, q0_x[t]) << t;
    EXPECT_TRUE(out[0][t].visible) << t;
  }
  EXPECT_DOUBLE_EQ(out[1][4].x, 31);
  EXPECT_DOUBLE_EQ(out[1][5].x, 31);
}

TEST(TrackerRunner, AStridedCadenceCountsFromThePasssFirstFrameBackwardToo) {
  const auto frames = blank_frames(5, 64, 64);
  const std::vector<eval::QuerySpec> queries = {{0, 4, 10, 10}};
  const eval::TrackerFactory factory = [] { return std::make_unique<ScriptedTracker>("", 0); };
  const auto out = eval::predict(factory, frames, 64, 64, queries, eval::QueryMode::strided, {}, 2);
  // Backward from frame 4: frames 4, 2 and 0 are pushed; 3 and 1 hold.
  const double x[] = {12, 11, 11, 10, 10};
  for (std::size_t t = 0; t < 5; ++t) EXPECT_DOUBLE_EQ(out[0][t].x, x[t]) << t;
}

// A pass announces to the tracker exactly the images it then pushes, in push
// order (a GPU tracker encodes them in batches only while they match).
TEST(TrackerRunner, APassAnnouncesTheFramesItPushesInOrder) {
  const auto frames = distinct_frames(7, 64, 64);
  const std::vector<eval::QuerySpec> queries = {{0, 0, 10, 20}, {0, 3, 30, 40}, {0, 6, 5, 5}};
  for (const eval::TimeDirection direction : {eval::TimeDirection::forward, eval::TimeDirection::backward}) {
    for (const int every : {1, 2, 3}) {
      eval::Predictions out(3, std::vector<eval::PredSample>(7));
      ScriptedTracker tracker("", 0);
      eval::track_pass(tracker, frames, eval::PixelMap{}, queries, direction, out, {}, 0, 0, every);
      EXPECT_EQ(tracker.announced_, tracker.pushed_) << "every " << every;
      EXPECT_GE(tracker.pushed_.size(), static_cast<std::size_t>(7 / every)) << "every " << every;
    }
  }
}

TEST(TrackerRunner, StridedRunsBackwardForFramesBeforeTheQuery) {
  const auto frames = blank_frames(5, 64, 64);
  const std::vector<eval::QuerySpec> queries = {{0, 2, 10, 10}};
  const eval::TrackerFactory factory = [] { return std::make_unique<ScriptedTracker>("", 0); };
  const auto first = eval::predict(factory, frames, 64, 64, queries, eval::QueryMode::first);
  const auto strided = eval::predict(factory, frames, 64, 64, queries, eval::QueryMode::strided);
  // The query frame holds the query; forward frames move +1 per push.
  EXPECT_DOUBLE_EQ(first[0][2].x, 10);
  EXPECT_TRUE(first[0][2].visible);
  EXPECT_DOUBLE_EQ(first[0][4].x, 12);
  EXPECT_FALSE(first[0][0].visible);  // before the query: not tracked in query-first mode
  // Backward: frame 1 is one push after the query frame, frame 0 two.
  EXPECT_DOUBLE_EQ(strided[0][1].x, 11);
  EXPECT_DOUBLE_EQ(strided[0][0].x, 12);
  EXPECT_TRUE(strided[0][0].visible);
  EXPECT_DOUBLE_EQ(strided[0][4].x, 12);
}

TEST(TrackerRunner, MapsPositionsToTheTrackersFrameSize) {
  // Sequence 128 px wide, tracker frames 64: one tracker pixel is two sequence pixels.
  const auto frames = blank_frames(2, 64, 32);
  const std::vector<eval::QuerySpec> queries = {{0, 0, 20.5, 9.5}};
  const eval::TrackerFactory factory = [] { return std::make_unique<ScriptedTracker>("", 0); };
  const auto out = eval::predict(factory, frames, 128, 64, queries, eval::QueryMode::first);
  // Query at tracker x = (20.5 + 0.5) / 2 - 0.5 = 10; moved to 11; back: (11 + 0.5) * 2 - 0.5 = 22.5.
  EXPECT_DOUBLE_EQ(out[0][1].x, 22.5);
  EXPECT_DOUBLE_EQ(out[0][1].y, 9.5);
}

TEST(TrackerRunner, UnknownTrackerIsAClearError) {
  try {
    eval::tracker_factory("nonesuch", eval::FrameSize{});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown tracker 'nonesuch'"), std::string::npos) << e.what();
  }
}

TEST(TrackerRunner, MissingEdgeTapModelIsAClearError) {
  const std::string missing = "/nonexistent/edgetap-none.safetensors";
  try {
    eval::tracker_factory("edgetap", eval::FrameSize{}, {.model = missing});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

TEST(TrackerRunner, NamedEdgeTapModelIsTheOneThatRuns) {
  // The same short sequence through the bundled network and through a small test
  // network: their tracks must differ, or the named weights were not the ones run.
  TempDir dir("runner-model");
  const auto seq = background_only_sequence(dir, [](synth::SynthOptions& o) { o.frames = 6; });
  const auto queries = eval::queries_first(seq.truth);
  ASSERT_FALSE(queries.empty());
  const auto run = [&](const std::string& model) {
    return eval::predict(eval::tracker_factory("edgetap", eval::FrameSize{}, {.model = model}), seq.frames, seq.truth.width,
                         seq.truth.height, queries, eval::QueryMode::first);
  };
  const auto bundled = run("");
  const auto named = run(EDGETAP_SOURCE_DIR "/tests/data/golden/edgetap-tiny-qp3.safetensors");
  ASSERT_EQ(bundled.size(), named.size());
  double largest_difference = 0;
  for (std::size_t q = 0; q < bundled.size(); ++q) {
    for (std::size_t t = 0; t < bundled[q].size(); ++t) {
      largest_difference = std::max(largest_difference, std::abs(bundled[q][t].x - named[q][t].x));
    }
  }
  EXPECT_GT(largest_difference, 0.5);
}

TEST(TrackerRunner, KltFollowsAGentleGeneratedSequence) {
  // Background only, slow smooth camera motion, no noise: klt must do well here.
  TempDir dir("runner-klt");
  const auto seq = background_only_sequence(dir, [](synth::SynthOptions& o) {
    o.speed = 1.0;
    o.rotation = 0.5;
    o.perspective = 0.0;
  });
  const auto queries = eval::queries_first(seq.truth);
  const auto predictions = eval::predict(eval::tracker_factory("klt", eval::FrameSize{}), seq.frames, seq.truth.width, seq.truth.height,
                                         queries, eval::QueryMode::first);
  const auto scores = eval::tapvid_scores(eval::count_tapvid(seq.truth, queries, predictions, eval::QueryMode::first));
  EXPECT_GT(scores.average_within, 0.85);
  EXPECT_GT(scores.occlusion_accuracy, 0.85);
  EXPECT_GT(scores.within[2], 0.95);  // within 4 px at 256x256
}

TEST(TrackerRunner, EdgeTapScoresRefinedOrNetworkPositionsAsAsked) {
  // The bundled network declares template refinement: with it the positions move (within the
  // refinement's 2 px), without it they are the network's.
  TempDir dir("runner-refinement");
  const auto seq = background_only_sequence(dir, [](synth::SynthOptions& o) { o.frames = 4; });
  const auto queries = eval::queries_first(seq.truth);
  ASSERT_FALSE(queries.empty());
  const auto run = [&](bool refine) {
    return eval::predict(eval::tracker_factory("edgetap", eval::FrameSize{}, {.template_refinement = refine}), seq.frames,
                         seq.truth.width, seq.truth.height, queries, eval::QueryMode::first);
  };
  const auto refined = run(true);
  const auto network = run(false);
  int moved = 0;
  for (std::size_t q = 0; q < refined.size(); ++q) {
    for (std::size_t t = 0; t < refined[q].size(); ++t) {
      const double d = std::hypot(refined[q][t].x - network[q][t].x, refined[q][t].y - network[q][t].y);
      EXPECT_LT(d, 2.0 + 1e-6) << q << " " << t;  // max_shift: the tracker sees the native frames here
      moved += d > 1e-6;
    }
  }
  EXPECT_GT(moved, 0);
}
