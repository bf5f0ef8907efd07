// klt throughput on the CPU: frames/s of a klt camera's TrackSession (its ladder of one klt rung, grid re-seeding)
// at a model size and point count, over frames decoded beforehand from a clip
// so that only tracking is timed. Reports the median of several runs.
//
// usage: edgetap-klt-bench [--clip FILE] [--size N] [--grid G]... [--runs R]  (-h for help)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "edgetap/cli/command_line.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/capture/capture.hpp"
#include "edgetap/ladder/track_session.hpp"

using namespace edgetap;

namespace {

std::vector<pipeline::Frame> decode(const std::string& clip, int size) {
  const std::string yaml = "cameras:\n  - {name: bench, source: 'file://" + clip + "', model_size: [" +
                           std::to_string(size) + ", " + std::to_string(size) +
                           "], capture: {pace: fast, at_eof: stop}}\n";
  const config::CameraConfig camera = config::load_string(yaml, "bench", "/").cameras.at(0);
  pipeline::FrameQueue queue(8, pipeline::FrameQueue::Overflow::block);
  pipeline::Capture capture(camera, queue, daemon::make_logger("capture"));
  std::string error;
  if (!capture.start(error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::exit(1);
  }
  std::vector<pipeline::Frame> frames;
  while (auto frame = queue.pop(std::chrono::milliseconds(2000))) frames.push_back(std::move(*frame));
  capture.stop();
  return frames;
}

// A klt camera of `grid` x `grid` points, built as the daemon builds one (a ladder of one klt rung).
std::unique_ptr<pipeline::TrackSession> klt_session(int size, int grid) {
  const std::string yaml = "cameras:\n  - {name: bench, tracker: klt, source: 'test:ball', model_size: [" +
                           std::to_string(size) + ", " + std::to_string(size) + "], queries: {grid: [" +
                           std::to_string(grid) + ", " + std::to_string(grid) + "]}}\n";
  const config::CameraConfig camera = config::load_string(yaml, "bench", "/").cameras.at(0);
  pipeline::ModelCache models;
  std::vector<std::string> skipped;
  std::string error;
  std::unique_ptr<pipeline::TrackSession> session = pipeline::TrackSession::build(camera, models, skipped, error);
  if (!session) {
    std::fprintf(stderr, "klt session: %s\n", error.c_str());
    std::exit(1);
  }
  return session;
}

double run_once(const std::vector<pipeline::Frame>& frames, int size, int grid, std::size_t& tracked_points) {
  const std::unique_ptr<pipeline::TrackSession> built = klt_session(size, grid);
  pipeline::TrackSession& session = *built;
  std::vector<TrackPoint> points;
  tracked_points = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const pipeline::Frame& frame : frames) {
    if (!session.process(frame, points)) std::exit(1);
    tracked_points += points.size();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string clip = std::string(EDGETAP_SOURCE_ASSETS_DIR) + "/demo/vtest-pedestrians.avi";
  int size = 256, runs = 5;
  std::vector<int> grids;
  const std::string description = "klt throughput on the CPU: frames/s of a klt camera's tracking, median of runs.";
  CLI::App app(description, "edgetap-klt-bench");
  cli::configure_app(app, description, "");
  app.add_option("--clip", clip, "the clip decoded beforehand (default: the demo clip)");
  cli::add_int_option(app, "--size", "model size, square (default 256)", 16, 4096, size);
  cli::add_int_list_option(app, "--grid", "grid sides G of G x G points (default 16 and 32)", 1, 128, grids);
  cli::add_int_option(app, "--runs", "runs per grid (default 5)", 1, 1000, runs);
  if (const int exit = cli::parse_command_line(app, argc, argv); exit >= 0) return exit;
  if (grids.empty()) grids = {16, 32};
  daemon::set_log_level("warn");
  const std::vector<pipeline::Frame> frames = decode(clip, size);
  std::printf("clip %s: %zu frames at %dx%d, %d runs each, median reported\n", clip.c_str(), frames.size(), size,
              size, runs);
  std::printf("%8s %10s %10s %10s %10s\n", "points", "frames/s", "ms/frame", "min ms", "max ms");
  for (int grid : grids) {
    std::vector<double> seconds;
    std::size_t tracked = 0;
    for (int r = 0; r < runs; ++r) seconds.push_back(run_once(frames, size, grid, tracked));
    std::sort(seconds.begin(), seconds.end());
    const double n = static_cast<double>(frames.size());
    const double median = seconds[seconds.size() / 2];
    std::printf("%8d %10.1f %10.2f %10.2f %10.2f\n", grid * grid, n / median, 1e3 * median / n,
                1e3 * seconds.front() / n, 1e3 * seconds.back() / n);
  }
  return 0;
}
