// edgetap-bench: the CUDA engine's speed on the workloads of bench/NOTES.md.
//   W1  offline clip: 47 frames, 256 points queried at the first frame, batch 1;
//       time from the first frame's upload to the last frame's estimates.
//   W2  streaming: per-frame latency (push to estimates on the host), p50 and
//       p99 over the frames after the first, at 256, 1024 and 4096 points,
//       with the frame replayed as a CUDA graph and without; the per-stage
//       split from CUDA events (a separate run without graphs).
//   W3  N cameras: N sessions, one host thread and stream each, streaming at
//       once; frames per second over all of them.
// Each for FP32 and FP16 storage. Depends only on core and the CUDA engine,
// so it builds on a bare GPU host. Frames are bench/texture_frame.hpp's.
//
// usage: edgetap-bench [--model FILE.safetensors] [--precision fp32|fp16|both]
//          [--size N] [--runs R] [--workloads w1,w2,w3] [--w2-points P,P,...] [--w2-frames F]
//          [--cameras N,N,...]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/gpu/cuda_session.hpp"
#include "edgetap/kernels/gpu_probe.hpp"
#include "texture_frame.hpp"

using namespace edgetap;

namespace {

using Clock = std::chrono::steady_clock;
using Clip = std::vector<std::vector<std::uint8_t>>;

struct Options {
  std::string model = std::string(EDGETAP_SOURCE_DIR) + "/models/edgetap-small.safetensors";
  std::vector<std::string> precisions = {"fp32", "fp16"};
  int size = 256, runs = 5, w1_frames = 47, w1_points = 256, w2_frames = 100;
  std::vector<int> w2_points = {256, 1024, 4096};
  std::vector<int> cameras = {1, 2, 4};
  std::string workloads = "w1,w2,w3";
  bool runs_workload(const std::string& w) const { return workloads.find(w) != std::string::npos; }
};

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--model") o.model = value;
    else if (arg == "--precision") o.precisions = value == "both" ? std::vector<std::string>{"fp32", "fp16"} : std::vector<std::string>{value};
    else if (arg == "--size") o.size = std::atoi(value.c_str());
    else if (arg == "--runs") o.runs = std::atoi(value.c_str());
    else if (arg == "--w2-points") o.w2_points = int_list(value);
    else if (arg == "--w2-frames") o.w2_frames = std::atoi(value.c_str());
    else if (arg == "--cameras") o.cameras = int_list(value);
    else if (arg == "--workloads") o.workloads = value;
    else throw std::invalid_argument("unknown option " + arg);
  }
  for (const std::string& p : o.precisions) {
    if (p != "fp32" && p != "fp16") throw std::invalid_argument("--precision takes fp32, fp16 or both, not " + p);
  }
  return o;
}

std::vector<engine::Point2> grid(int size, int points) {
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(points))));
  const float cell = static_cast<float>(size) / static_cast<float>(side);
  std::vector<engine::Point2> g;
  for (int i = 0; i < points; ++i) {
    g.push_back({(static_cast<float>(i % side) + 0.5f) * cell, (static_cast<float>(i / side) + 0.5f) * cell});
  }
  return g;
}

ImageView view(const std::vector<std::uint8_t>& rgb, int size) {
  return {rgb.data(), size, size, static_cast<std::size_t>(size) * 3};
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void check(const Status& s) {
  if (!s.is_ok()) throw std::runtime_error(s.message());
}

// Streams `clip` through a fresh session with `points` tracks from the first
// frame; returns each frame's milliseconds (the first frame includes adding the tracks).
template <class T>
std::vector<double> stream(const engine::Network& net, const Clip& clip, int size, int points, bool graphs,
                           engine::StepProfile* stages = nullptr) {
  gpu::CudaStreamingSession<T> session(net, points);
  session.set_graphs(graphs);
  session.set_profiling(stages != nullptr);
  std::vector<double> ms;
  const std::vector<engine::Point2> queries = grid(size, points);
  for (std::size_t t = 0; t < clip.size(); ++t) {
    const auto start = Clock::now();
    check(session.push_frame(view(clip[t], size)));
    if (t == 0) session.add_tracks(queries);
    ms.push_back(ms_since(start));
    if (stages != nullptr && t > 0) {
      const engine::StepProfile& p = session.last_profile();
      stages->encoder += p.encoder, stages->correlation += p.correlation, stages->token += p.token;
      stages->transformer += p.transformer, stages->head += p.head;
    }
  }
  return ms;
}

template <class T>
void w1(const engine::Network& net, const Options& o, const char* precision) {
  const Clip clip = [&] {
    Clip c;
    for (int t = 0; t < o.w1_frames; ++t) c.push_back(bench::texture_frame(o.size, o.size, t));
    return c;
  }();
  stream<T>(net, clip, o.size, o.w1_points, true);  // warm-up: module load, cuBLAS and cuDNN set-up
  std::vector<double> totals;
  for (int r = 0; r < o.runs; ++r) {
    const std::vector<double> ms = stream<T>(net, clip, o.size, o.w1_points, true);
    double sum = 0;
    for (double m : ms) sum += m;
    totals.push_back(sum);
  }
  std::printf("W1 %s: %d frames %dx%d, %d points: %.2f ms per clip (median of %d; min %.2f, max %.2f)\n", precision,
              o.w1_frames, o.size, o.size, o.w1_points, percentile(totals, 0.5), o.runs, percentile(totals, 0.0),
              percentile(totals, 1.0));
}

template <class T>
void w2(const engine::Network& net, const Options& o, const char* precision) {
  Clip clip;
  for (int t = 0; t < o.w2_frames; ++t) clip.push_back(bench::texture_frame(o.size, o.size, t));
  for (int points : o.w2_points) {
    for (bool graphs : {true, false}) {
      std::vector<double> ms = stream<T>(net, clip, o.size, points, graphs);
      ms.erase(ms.begin(), ms.begin() + 2);  // the query frame and the frame that captures the graph
      std::printf("W2 %s: %5d points, %-8s p50 %7.3f ms  p99 %7.3f ms per frame\n", precision, points,
                  graphs ? "graph" : "no graph", percentile(ms, 0.5), percentile(ms, 0.99));
    }
    engine::StepProfile stages;
    stream<T>(net, clip, o.size, points, false, &stages);
    const double n = static_cast<double>(clip.size() - 1);
    std::printf("   stages (events, no graph): encoder %.3f  correlation %.3f  token %.3f  transformer %.3f  head %.3f ms\n",
                stages.encoder / n, stages.correlation / n, stages.token / n, stages.transformer / n, stages.head / n);
  }
}

template <class T>
void w3(const engine::Network& net, const Options& o, const char* precision) {
  Clip clip;
  for (int t = 0; t < o.w2_frames; ++t) clip.push_back(bench::texture_frame(o.size, o.size, t));
  for (int cameras : o.cameras) {
    std::vector<std::thread> threads;
    std::vector<std::vector<double>> per_camera(static_cast<std::size_t>(cameras));
    const auto start = Clock::now();
    for (int c = 0; c < cameras; ++c) {
      threads.emplace_back([&, c] { per_camera[static_cast<std::size_t>(c)] = stream<T>(net, clip, o.size, 256, true); });
    }
    for (std::thread& t : threads) t.join();
    const double wall = ms_since(start);
    std::vector<double> all;
    for (const auto& ms : per_camera) all.insert(all.end(), ms.begin() + 2, ms.end());
    std::printf("W3 %s: %d cameras x 256 points: %.0f frames/s in all, per-frame p50 %.3f ms (set-up included in the wall time)\n",
                precision, cameras, 1e3 * cameras * static_cast<double>(clip.size()) / wall, percentile(all, 0.5));
  }
}

template <class T>
void run_precision(const engine::Network& net, const Options& o, const char* precision) {
  if (o.runs_workload("w1")) w1<T>(net, o, precision);
  if (o.runs_workload("w2")) w2<T>(net, o, precision);
  if (o.runs_workload("w3")) w3<T>(net, o, precision);
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const kernels::GpuProbe probe = kernels::probe_gpus();
  std::printf("%s\n", kernels::describe_backend_choice(probe).c_str());
  if (probe.devices.empty()) return 2;
  const engine::Network net =
      engine::load_network(o.model, std::filesystem::path(o.model).replace_extension(".json").string());
  std::printf("model %s (%zu parameters, %d iterations), device %s\n", o.model.c_str(), net.weights.parameter_count(),
              net.config.iters, probe.devices.front().name.c_str());
  for (const std::string& p : o.precisions) {
    if (p == "fp32") run_precision<float>(net, o, "fp32");
    else run_precision<__half>(net, o, "fp16");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgetap-bench: %s\n", e.what());
    return 2;
  }
}
