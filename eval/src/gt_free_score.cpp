#include "edgetap/eval/gt_free_score.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "edgetap/eval/tapvid_metrics.hpp"
#include "edgetap/pixel_scale.hpp"

namespace edgetap::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<QuerySpec> grid_queries(int grid, int width, int height) {
  std::vector<QuerySpec> queries;
  for (int r = 0; r < grid; ++r) {
    for (int c = 0; c < grid; ++c) {
      queries.push_back({static_cast<int>(queries.size()), 0, cell_centre(c, grid, static_cast<double>(width)),
                         cell_centre(r, grid, static_cast<double>(height))});
    }
  }
  return queries;
}

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(values.begin(), mid)) / 2;
}

}  // namespace

GtFreeResult score_without_ground_truth(const std::string& name, std::span<const cv::Mat> frames,
                                        const TrackerFactory& make_tracker, const GtFreeOptions& options,
                                        const FrameProgress& progress) {
  GtFreeResult result;
  result.name = name;
  result.frames = static_cast<int>(frames.size());
  if (frames.size() < 2) return result;
  const int w = frames[0].cols, h = frames[0].rows;
  const double sx = kMetricSize / w, sy = kMetricSize / h;
  auto metric_distance = [&](double x0, double y0, double x1, double y1) {
    return std::hypot((x1 - x0) * sx, (y1 - y0) * sy);
  };
  const PixelMap identity{1.0, 1.0};
  const int n = result.frames;
  const auto last = static_cast<std::size_t>(n - 1);

  // Forward from the first frame.
  const std::vector<QuerySpec> seeds = grid_queries(options.grid, w, h);
  result.seeded = static_cast<int>(seeds.size());
  Predictions forward(seeds.size(), std::vector<PredSample>(frames.size()));
  {
    auto tracker = make_tracker();
    track_pass(*tracker, frames, identity, seeds, TimeDirection::forward, forward, progress, 0, 2 * n);
  }
  std::vector<QuerySpec> returning;
  std::vector<std::size_t> origin;
  double squared_steps = 0;
  int steps = 0;
  for (std::size_t q = 0; q < seeds.size(); ++q) {
    forward[q][0] = {seeds[q].x, seeds[q].y, true};
    const bool survived = std::all_of(forward[q].begin(), forward[q].end(), [](const PredSample& s) { return s.visible; });
    if (!survived) continue;
    ++result.kept_forward;
    returning.push_back({static_cast<int>(q), n - 1, forward[q][last].x, forward[q][last].y});
    origin.push_back(q);
    const bool is_static = std::all_of(forward[q].begin(), forward[q].end(), [&](const PredSample& s) {
      return metric_distance(seeds[q].x, seeds[q].y, s.x, s.y) < options.static_radius_px;
    });
    if (!is_static) continue;
    ++result.static_tracks;
    for (std::size_t t = 1; t < frames.size(); ++t) {
      const double d = metric_distance(forward[q][t - 1].x, forward[q][t - 1].y, forward[q][t].x, forward[q][t].y);
      squared_steps += d * d;
      ++steps;
    }
  }
  result.jitter_rms_px = steps > 0 ? std::sqrt(squared_steps / steps) : kNaN;

  // Back from where the survivors ended.
  Predictions backward(returning.size(), std::vector<PredSample>(frames.size()));
  {
    auto tracker = make_tracker();
    track_pass(*tracker, frames, identity, returning, TimeDirection::backward, backward, progress, n, 2 * n);
  }
  std::vector<double> errors;
  int consistent = 0;
  for (std::size_t i = 0; i < returning.size(); ++i) {
    if (!std::all_of(backward[i].begin(), backward[i].end() - 1, [](const PredSample& s) { return s.visible; })) continue;
    const QuerySpec& seed = seeds[origin[i]];
    const double error = metric_distance(seed.x, seed.y, backward[i][0].x, backward[i][0].y);
    errors.push_back(error);
    consistent += error < options.cycle_good_px ? 1 : 0;
  }
  result.kept_cycle = static_cast<int>(errors.size());
  result.cycle_median_px = median(errors);
  result.cycle_mean_px = errors.empty() ? kNaN : [&] {
    double sum = 0;
    for (double e : errors) sum += e;
    return sum / static_cast<double>(errors.size());
  }();
  result.cycle_consistent = static_cast<double>(consistent) / result.seeded;
  return result;
}

std::string format_gt_free_table(const std::vector<GtFreeResult>& results) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %6s %6s %8s %8s %10s %10s %9s %7s %10s\n", "clip", "frames", "tracks",
                "fwd-kept", "fb-kept", "fb-median", "fb-mean", "fb<2px", "static", "jitter-rms");
  out += line;
  for (const GtFreeResult& r : results) {
    std::snprintf(line, sizeof line, "%-24s %6d %6d %8d %8d %10.3f %10.3f %9.3f %7d %10.3f\n", r.name.c_str(),
                  r.frames, r.seeded, r.kept_forward, r.kept_cycle, r.cycle_median_px, r.cycle_mean_px,
                  r.cycle_consistent, r.static_tracks, r.jitter_rms_px);
    out += line;
  }
  return out;
}

std::string format_gt_free_json(const std::vector<GtFreeResult>& results, const std::string& tracker,
                                const std::string& frame_size, const GtFreeOptions& options) {
  using nlohmann::json;
  auto value = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
  json clips = json::array();
  for (const GtFreeResult& r : results) {
    clips.push_back({{"name", r.name},
                     {"frames", r.frames},
                     {"seeded", r.seeded},
                     {"kept_forward", r.kept_forward},
                     {"kept_cycle", r.kept_cycle},
                     {"cycle_median_px", value(r.cycle_median_px)},
                     {"cycle_mean_px", value(r.cycle_mean_px)},
                     {"cycle_consistent", value(r.cycle_consistent)},
                     {"static_tracks", r.static_tracks},
                     {"jitter_rms_px", value(r.jitter_rms_px)}});
  }
  return json{{"tracker", tracker},
              {"frame_size", frame_size},
              {"metric_size", kMetricSize},
              {"grid", options.grid},
              {"static_radius_px", options.static_radius_px},
              {"cycle_good_px", options.cycle_good_px},
              {"clips", clips}}
             .dump(2) +
         "\n";
}

}  // namespace edgetap::eval
