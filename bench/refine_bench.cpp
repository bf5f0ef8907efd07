// Template refinement's cost per frame (the step RefinedSession adds after the
// network): milliseconds to take a frame (engine::TemplateAligner::set_frame:
// its grey levels and gradients) and align P tracks in it, each from 0.8 px
// off its true position, on the benchmarks' drifting texture. The CPU's
// aligner (on --threads threads) or, in a build with the CUDA engine, the
// GPU's (wall time of the whole call: upload, kernels, one synchronization).
//
// usage: edgetap-refine-bench [--aligner cpu|cuda] [--threads N] [--size N] [--points P]... [--frames F] [--runs R]   (-h for help)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "edgetap/cli/command_line.hpp"
#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/engine/template_aligner.hpp"
#include "texture_frame.hpp"

#ifdef EDGETAP_HAVE_GPU_ALIGNER
#include "edgetap/gpu/cuda_template_aligner.hpp"
#endif

using namespace edgetap;

namespace {

// The benchmark's points stay this far from the frame's edges (pixels).
constexpr int kMarginPx = 20;

std::unique_ptr<engine::TemplateAligner> make_aligner(const std::string& name, const engine::TemplateAlignmentConfig& config,
                                                      int threads) {
  if (name == "cpu") return std::make_unique<engine::CpuTemplateAligner>(config, threads);
#ifdef EDGETAP_HAVE_GPU_ALIGNER
  if (name == "cuda") return std::make_unique<gpu::CudaTemplateAligner>(config);
#endif
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  int size = 256, frames = 10, runs = 5, threads = 1;
  std::string aligner_name = "cpu";
  std::vector<int> point_counts;
  const std::string description = "Template refinement's speed: ms per frame at several point counts.";
  CLI::App app(description, "edgetap-refine-bench");
  cli::configure_app(app, description, "");
  app.add_option("--aligner", aligner_name, "cpu (default) or cuda (CUDA builds only)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cli::add_int_option(app, "--threads", "the CPU aligner's threads (default 1)", 1, 256, threads);
  cli::add_int_option(app, "--size", "frame side in pixels (default 256)", 64, 4096, size);
  cli::add_int_list_option(app, "--points", "point counts (default 64, 256 and 1024)", 1, 1 << 16, point_counts);
  cli::add_int_option(app, "--frames", "frames per run (default 10)", 2, 100000, frames);
  cli::add_int_option(app, "--runs", "runs, the median reported (default 5)", 1, 1000, runs);
  if (const int status = cli::parse_command_line(app, argc, argv); status >= 0) return status;
  if (point_counts.empty()) point_counts = {64, 256, 1024};
  const engine::TemplateAlignmentConfig config;
  std::unique_ptr<engine::TemplateAligner> probe;  // the aligner can be made here
  try {
    probe = make_aligner(aligner_name, config, threads);
  } catch (const std::exception& e) {  // no usable device
    std::fprintf(stderr, "edgetap-refine-bench: --aligner %s: %s\n", aligner_name.c_str(), e.what());
    return 1;
  }
  if (!probe) {
    std::fprintf(stderr, "edgetap-refine-bench: --aligner %s: this build has %s\n", aligner_name.c_str(),
#ifdef EDGETAP_HAVE_GPU_ALIGNER
                 "cpu and cuda");
#else
                 "cpu only (cuda needs a build with the CUDA engine)");
#endif
    return 2;
  }
  std::vector<std::vector<std::uint8_t>> clip;
  for (int t = 0; t <= frames; ++t) clip.push_back(bench::texture_frame(size, size, t));
  const auto view = [&](int t) {
    return ImageView{clip[static_cast<std::size_t>(t)].data(), size, size, static_cast<std::size_t>(size) * 3};
  };
  std::printf("template refinement, %s aligner%s, %dx%d, radius %d, %d iterations, %d frames, median of %d runs\n",
              aligner_name.c_str(), aligner_name == "cpu" ? (", " + std::to_string(threads) + " thread(s)").c_str() : "",
              size, size, config.radius, config.iters, frames, runs);
  std::printf("%7s %10s %10s\n", "points", "ms/frame", "accepted");
  for (int points : point_counts) {
    const auto aligner = make_aligner(aligner_name, config, threads);
    std::vector<engine::Point2> grid = engine::grid_points(points, size - 2 * kMarginPx, size - 2 * kMarginPx);
    for (engine::Point2& p : grid) {
      p.x += static_cast<float>(kMarginPx);
      p.y += static_cast<float>(kMarginPx);
    }
    std::vector<int> handles(static_cast<std::size_t>(points));
    std::iota(handles.begin(), handles.end(), 0);
    aligner->set_frame(view(0));
    const std::vector<bool> has_template = aligner->capture(handles, grid);
    std::vector<engine::AlignmentJob> jobs;
    std::vector<engine::AlignmentResult> results;
    std::vector<double> ms;
    int accepted = 0;
    for (int r = 0; r <= runs; ++r) {  // run 0 warms up
      accepted = 0;
      const auto start = std::chrono::steady_clock::now();
      for (int t = 1; t <= frames; ++t) {
        aligner->set_frame(view(t));
        jobs.clear();
        for (int i = 0; i < points; ++i) {  // the texture drifts (-2, -1) px per frame
          if (!has_template[static_cast<std::size_t>(i)]) continue;
          const engine::Point2& p = grid[static_cast<std::size_t>(i)];
          jobs.push_back({i, p.x - 2.f * static_cast<float>(t) + 0.6f, p.y - static_cast<float>(t) - 0.5f, {}});
        }
        aligner->align(jobs, results);
        for (const engine::AlignmentResult& a : results) accepted += a.accepted;
      }
      const double per_frame =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / frames;
      if (r > 0) ms.push_back(per_frame);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%7d %10.3f %10d\n", points, ms[ms.size() / 2], accepted);
  }
  return 0;
}
