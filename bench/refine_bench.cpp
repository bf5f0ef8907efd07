// Template refinement's CPU cost (engine::align_template, the step RefinedSession
// adds after the network): milliseconds per frame to align P tracks, each from
// 0.8 px off its true position, on the benchmarks' drifting texture. Depends
// only on core.
//
// usage: edgetap-refine-bench [--size N] [--points P]... [--frames F] [--runs R]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "texture_frame.hpp"

using namespace edgetap;

int main(int argc, char** argv) {
  int size = 256, frames = 10, runs = 5;
  std::vector<int> point_counts;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--size") size = std::atoi(argv[i + 1]);
    else if (arg == "--points") point_counts.push_back(std::atoi(argv[i + 1]));
    else if (arg == "--frames") frames = std::atoi(argv[i + 1]);
    else if (arg == "--runs") runs = std::atoi(argv[i + 1]);
  }
  if (point_counts.empty()) point_counts = {64, 256, 1024};
  const engine::TemplateAlignmentConfig config;
  std::vector<engine::GreyFrame> clip;
  for (int t = 0; t <= frames; ++t) {
    const std::vector<std::uint8_t> rgb = bench::texture_frame(size, size, t);
    clip.push_back(engine::grey_frame(ImageView{rgb.data(), size, size, static_cast<std::size_t>(size) * 3}));
  }
  std::printf("template refinement, %dx%d, radius %d, %d iterations, %d frames, median of %d runs\n", size, size,
              config.radius, config.iters, frames, runs);
  std::printf("%7s %10s %10s\n", "points", "ms/frame", "accepted");
  for (int points : point_counts) {
    const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(points))));
    const float cell = static_cast<float>(size - 40) / static_cast<float>(side);
    std::vector<engine::Point2> grid;
    std::vector<std::vector<float>> templates;
    for (int i = 0; i < points; ++i) {
      grid.push_back({20.f + (static_cast<float>(i % side) + 0.5f) * cell, 20.f + (static_cast<float>(i / side) + 0.5f) * cell});
      templates.push_back(engine::capture_template(clip[0], grid.back().x, grid.back().y, config));
    }
    std::vector<double> ms;
    int accepted = 0;
    for (int r = 0; r < runs; ++r) {
      accepted = 0;
      const auto start = std::chrono::steady_clock::now();
      for (int t = 1; t <= frames; ++t) {
        for (int i = 0; i < points; ++i) {  // the texture drifts (-2, -1) px per frame
          const float x = grid[static_cast<std::size_t>(i)].x - 2.f * static_cast<float>(t) + 0.6f;
          const float y = grid[static_cast<std::size_t>(i)].y - static_cast<float>(t) - 0.5f;
          accepted += engine::align_template(clip[static_cast<std::size_t>(t)], templates[static_cast<std::size_t>(i)],
                                             x, y, engine::AffineWarp{}, config).accepted;
        }
      }
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / frames);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%7d %10.2f %10d\n", points, ms[ms.size() / 2], accepted);
  }
  return 0;
}
