// CPU engine throughput: streaming frames/s of the EdgeTAP network at a frame
// size and point count, with the per-stage split. Depends only on core and
// kernels (builds on a bare host). Frames are a procedural texture drifting a
// few pixels per frame; tracks start on a grid at the first frame. Where the
// model's .json declares template refinement, ms/frame includes it (as the
// daemon publishes) and its own column shows its part; --no-refinement times
// the network alone. Where it declares a support grid, its tracks run beside
// the P points (the network's columns include them); --no-support leaves them out.
//
// usage: edgetap-engine-bench [--model FILE.safetensors] [--size N] [--points P]... [--iters K] [--frames F] [--runs R]
//                             [--no-refinement] [--no-support]   (-h for help)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edgetap/cli/command_line.hpp"
#include "edgetap/engine/refined_session.hpp"
#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/engine/streaming_session.hpp"
#include "texture_frame.hpp"

using namespace edgetap;

namespace {

int run(int argc, char** argv) {
  std::string model = std::string(EDGETAP_SOURCE_DIR) + "/models/edgetap-small.safetensors";
  int size = 256, frames = 30, runs = 3, iters = 0;
  std::vector<int> point_counts;
  bool refinement = true, support = true;
  const std::string description = "The CPU engine's per-frame latency, as published and as the network alone.";
  CLI::App app(description, "edgetap-engine-bench");
  cli::configure_app(app, description, "");
  app.add_option("--model", model, "the network's weights, its .json beside (default: edgetap-small)")
      ->type_name("FILE");
  cli::add_int_option(app, "--size", "frame side in pixels (default 256)", 16, 4096, size);
  cli::add_int_list_option(app, "--points", "point counts (default 256 and 1024)", 1, 1 << 16, point_counts);
  cli::add_int_option(app, "--frames", "frames per run (default 30)", 2, 100000, frames);
  cli::add_int_option(app, "--runs", "runs, the median reported (default 3)", 1, 1000, runs);
  cli::add_int_option(app, "--iters", "refinement iterations (default: the model's own)", 1, 16, iters);
  bool unrefined = false, unsupported = false;
  app.add_flag("--no-refinement", unrefined, "without the template refinement the model's .json may declare");
  app.add_flag("--no-support", unsupported, "without the support grid the model's .json may declare");
  if (const int status = cli::parse_command_line(app, argc, argv); status >= 0) return status;
  refinement = !unrefined;
  support = !unsupported;
  if (point_counts.empty()) point_counts = {256, 1024};
  const engine::Network network =
      engine::load_network(model, std::filesystem::path(model).replace_extension(".json").string());
  std::vector<std::vector<std::uint8_t>> clip;
  for (int t = 0; t < frames; ++t) clip.push_back(bench::texture_frame(size, size, t));
  std::printf("model %s (%zu parameters), %dx%d, %d iterations, %d frames streamed, median of %d runs\n", model.c_str(),
              network.weights.parameter_count(), size, size, iters > 0 ? iters : network.config.iters, frames, runs);
  refinement = refinement && network.config.refinement.has_value();
  std::printf("template refinement after the network: %s\n", refinement ? "yes (the model declares it)" : "no");
  const int support_side = support ? network.config.support_grid : 0;
  std::printf("support tracks beside the points: %d (the model declares %d x %d)\n", support_side * support_side,
              network.config.support_grid, network.config.support_grid);
  std::printf("%7s %9s %9s | %8s %8s %8s %8s %8s %8s  (ms/frame)\n", "points", "frames/s", "ms/frame", "encoder", "corr",
              "token", "blocks", "head", "refine");
  for (int points : point_counts) {
    std::vector<double> seconds;
    engine::StepProfile sum;
    double refine_ms = 0;
    for (int r = 0; r < runs; ++r) {
      auto owned = std::make_unique<engine::StreamingSession>(network, iters);
      engine::StreamingSession& net = *owned;
      std::unique_ptr<engine::TrackingSession> published = std::move(owned);
      if (support_side > 0) published = std::make_unique<engine::SupportGridSession>(std::move(published), support_side);
      if (refinement) {
        published = std::make_unique<engine::RefinedSession>(std::move(published), *network.config.refinement,
                                                             network.config);
      }
      engine::TrackingSession& session = *published;
      const ImageView first{clip[0].data(), size, size, static_cast<std::size_t>(size) * 3};
      session.push_frame(first);
      session.add_tracks(engine::grid_points(points, size, size));
      const auto start = std::chrono::steady_clock::now();
      for (int t = 1; t < frames; ++t) {
        const auto push = std::chrono::steady_clock::now();
        session.push_frame({clip[t].data(), size, size, static_cast<std::size_t>(size) * 3});
        const double push_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - push).count();
        const engine::StepProfile& p = net.last_profile();
        sum.encoder += p.encoder, sum.correlation += p.correlation, sum.token += p.token;
        sum.transformer += p.transformer, sum.head += p.head;
        refine_ms += refinement ? push_ms - p.total() : 0.0;
      }
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double per_frame = seconds[seconds.size() / 2] / (frames - 1);
    const double n = static_cast<double>(runs) * (frames - 1);
    std::printf("%7d %9.2f %9.1f | %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", points, 1.0 / per_frame, 1e3 * per_frame,
                sum.encoder / n, sum.correlation / n, sum.token / n, sum.transformer / n, sum.head / n, refine_ms / n);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a model that does not load, iterations it does not have
    std::fprintf(stderr, "edgetap-engine-bench: %s\n", e.what());
    return 2;
  }
}
