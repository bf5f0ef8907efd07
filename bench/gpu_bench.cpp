// edgetap-bench: the CUDA engine's speed on the workloads of bench/NOTES-gpu.md.
//   W1  offline clip: 47 frames, 256 points queried at the first frame, batch 1;
//       time from the first frame's upload to the last frame's estimates.
//   W2  streaming: per-frame latency (push to estimates on the host), p50 and
//       p99 over the frames after the first, at 256, 1024 and 4096 points,
//       with the frame replayed as a CUDA graph and without, and (where the
//       model declares template refinement or support tracks) as the daemon
//       publishes: in a graph beside the model's support grid, then refined on
//       the GPU (line "published"); the per-stage split from CUDA events
//       (a separate run without graphs).
//   W3  N cameras: N sessions, one host thread and stream each, streaming at
//       once; frames per second over all of them.
//   profile  W2's frames after three warm ones between cudaProfilerStart and
//       Stop, for `ncu --profile-from-start off` (bench/ncu_summary.py).
//   memory  device memory (cudaMemGetInfo, so the memory pool's reserve
//       counts) of published sessions as the daemon makes them, 1 to 4 of
//       them at W2's point counts: after the session's set-up, its first
//       frame (the support grid), the points, and 10 more frames; and of a
//       camera's growth, what the default memory pool reserved and what the
//       buffers use of it (the rest: libraries' handles, graphs, modules).
//   ceilings  the device's measured ceilings: a 1 GiB device-to-device copy
//       (bytes read + written per second) and 8192^3 matrix products through
//       the engine's own cuBLAS path (FP16 in, float accumulation; FP32).
// Each for FP32 and FP16 storage. Depends only on core and the CUDA engine,
// so it builds on a bare GPU host. Frames are bench/texture_frame.hpp's.
//
// usage: edgetap-bench [--model FILE.safetensors] [--precision fp32|fp16|both]
//          [--size N] [--runs R] [--workloads w1,w2,w3,profile,memory,ceilings] [--w2-points P,P,...] [--w2-frames F]
//          [--cameras N,N,...]   (-h for help)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <cuda_profiler_api.h>

#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/cli/command_line.hpp"
#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/gpu/cuda_session.hpp"
#include "edgetap/gpu/cuda_stream.hpp"
#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/gemm.hpp"
#include "edgetap/kernels/gpu_probe.hpp"
#include "texture_frame.hpp"

using namespace edgetap;

namespace {

using Clock = std::chrono::steady_clock;
using Clip = std::vector<std::vector<std::uint8_t>>;

struct Options {
  // The source tree's bundled model; EDGETAP_SOURCE_DIR in the environment names another tree (a carried build).
  std::string model = std::string(std::getenv("EDGETAP_SOURCE_DIR") ? std::getenv("EDGETAP_SOURCE_DIR") : EDGETAP_SOURCE_DIR) +
                      "/models/edgetap-small.safetensors";
  std::vector<std::string> precisions = {"fp32", "fp16"};
  int size = 256, runs = 5, w1_frames = 47, w1_points = 256, w2_frames = 100;
  std::vector<int> w2_points = {256, 1024, 4096};
  std::vector<int> cameras = {1, 2, 4};
  std::string workloads = "w1,w2,w3";
  bool runs_workload(const std::string& w) const { return workloads.find(w) != std::string::npos; }
};

// Returns -1 when parsed, else the exit status (0 after the help, 2 for bad arguments).
int parse(int argc, char** argv, Options& o) {
  const std::string description = "The CUDA engine's speed on the workloads of bench/NOTES-gpu.md.";
  CLI::App app(description, "edgetap-bench");
  cli::configure_app(app, description, "Workloads: w1, w2, w3, profile, memory, ceilings (this file's header).");
  app.add_option("--model", o.model, "the network's weights, its .json beside (default: edgetap-small)")
      ->type_name("FILE");
  std::string precision = "both";
  app.add_option("--precision", precision, "fp32, fp16 or both (default)")->check(CLI::IsMember({"fp32", "fp16", "both"}));
  cli::add_int_option(app, "--size", "frame side in pixels (default 256)", 16, 4096, o.size);
  cli::add_int_option(app, "--runs", "runs of W1 and W3, the median reported (default 5)", 1, 1000, o.runs);
  app.add_option("--workloads", o.workloads, "comma-separated (default w1,w2,w3)")->type_name("LIST");
  cli::add_int_list_option(app, "--w2-points", "W2's point counts (default 256,1024,4096)", 1, 1 << 16, o.w2_points);
  cli::add_int_option(app, "--w2-frames", "W2's frames (default 100)", 2, 100000, o.w2_frames);
  cli::add_int_list_option(app, "--cameras", "W3's camera counts (default 1,2,4)", 1, 256, o.cameras);
  if (const int status = cli::parse_command_line(app, argc, argv); status >= 0) return status;
  if (precision != "both") o.precisions = {precision};
  return -1;
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

// Streams `clip` through `session` with `points` tracks from the first frame;
// returns each frame's milliseconds (the first frame includes adding the tracks).
// `after_frame(t)` runs after frame t's time is taken. `ahead`: the clip is
// announced first (TrackingSession::encode_ahead), in the first frame's time.
std::vector<double> time_frames(engine::TrackingSession& session, const Clip& clip, int size, int points,
                                const std::function<void(std::size_t)>& after_frame = {}, bool ahead = false) {
  std::vector<double> ms;
  const std::vector<engine::Point2> queries = engine::grid_points(points, size, size);
  if (ahead) {  // the whole clip announced: its frames encoded in batches, in the first frame's time
    const auto start = Clock::now();
    std::vector<ImageView> views;
    for (const auto& frame : clip) views.push_back(view(frame, size));
    session.encode_ahead(views);
    ms.push_back(ms_since(start));
  }
  for (std::size_t t = 0; t < clip.size(); ++t) {
    const auto start = Clock::now();
    check(session.push_frame(view(clip[t], size)));
    if (t == 0) session.add_tracks(queries);
    if (ahead && t == 0) {
      ms.front() += ms_since(start);
    } else {
      ms.push_back(ms_since(start));
    }
    if (after_frame) after_frame(t);
  }
  return ms;
}

// time_frames through the network's own session; `stages` gets the frames' per-stage sums (CUDA events).
template <class T>
std::vector<double> stream_into(gpu::CudaStreamingSession<T>& session, const Clip& clip, int size, int points,
                                engine::StepProfile* stages = nullptr, bool ahead = false) {
  session.set_profiling(stages != nullptr);
  if (stages == nullptr) return time_frames(session, clip, size, points, {}, ahead);
  return time_frames(session, clip, size, points, [&](std::size_t t) {
    if (t == 0) return;
    const engine::StepProfile& p = session.last_profile();
    stages->encoder += p.encoder, stages->correlation += p.correlation, stages->token += p.token;
    stages->transformer += p.transformer, stages->head += p.head;
  });
}

// The same through a fresh session (its set-up not timed, its first frames' plans and captures timed).
template <class T>
std::vector<double> stream(const engine::Network& net, const Clip& clip, int size, int points, bool graphs,
                           engine::StepProfile* stages = nullptr) {
  gpu::CudaStreamingSession<T> session(net, points);
  session.set_graphs(graphs);
  return stream_into(session, clip, size, points, stages);
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

template <class T>
void w1(const engine::Network& net, const Options& o, const char* precision) {
  const Clip clip = [&] {
    Clip c;
    for (int t = 0; t < o.w1_frames; ++t) c.push_back(bench::texture_frame(o.size, o.size, t));
    return c;
  }();
  // A fresh session per clip: the frame size's encoder plan and the graph captures are in the time.
  stream<T>(net, clip, o.size, o.w1_points, true);  // warm-up: module load, cuBLAS and cuDNN set-up
  std::vector<double> fresh, warm, fresh_first, fresh_second, fresh_rest;
  for (int r = 0; r < o.runs; ++r) {
    const std::vector<double> ms = stream<T>(net, clip, o.size, o.w1_points, true);
    fresh.push_back(sum(ms));
    fresh_first.push_back(ms[0]);
    fresh_second.push_back(ms.size() > 1 ? ms[1] : 0.0);
    fresh_rest.push_back(ms.size() > 2 ? percentile({ms.begin() + 2, ms.end()}, 0.5) : 0.0);
  }
  // One session restarted for every clip, as a service keeps it: plans and graphs made once.
  gpu::CudaStreamingSession<T> session(net, o.w1_points);
  stream_into(session, clip, o.size, o.w1_points);
  for (int r = 0; r < o.runs; ++r) {
    session.restart();
    warm.push_back(sum(stream_into(session, clip, o.size, o.w1_points)));
  }
  // The same with the clip announced ahead: its frames encoded in batches.
  std::vector<double> one_pass;
  session.restart();
  stream_into(session, clip, o.size, o.w1_points, nullptr, true);
  for (int r = 0; r < o.runs; ++r) {
    session.restart();
    one_pass.push_back(sum(stream_into(session, clip, o.size, o.w1_points, nullptr, true)));
  }
  std::printf("W1 %s: %d frames %dx%d, %d points: %.2f ms per clip in a restarted session, %.2f in a fresh one "
              "(medians of %d; min %.2f / %.2f)\n",
              precision, o.w1_frames, o.size, o.size, o.w1_points, percentile(warm, 0.5), percentile(fresh, 0.5), o.runs,
              percentile(warm, 0.0), percentile(fresh, 0.0));
  std::printf("W1 %s: %.2f ms per clip in a restarted session with the clip announced ahead (encode_ahead; min %.2f)\n",
              precision, percentile(one_pass, 0.5), percentile(one_pass, 0.0));
  std::printf("W1 %s: a fresh session's frame 1 %.2f ms (its tracks added), frame 2 %.2f, the rest %.3f each (medians)\n",
              precision, percentile(fresh_first, 0.5), percentile(fresh_second, 0.5), percentile(fresh_rest, 0.5));
  // A fresh session's first frame, split: its push (encoder plan, the frame without tracks captured) and
  // the tracks' adding (the query step's first run).
  std::vector<double> first_push, first_add;
  const std::vector<engine::Point2> queries = engine::grid_points(o.w1_points, o.size, o.size);
  for (int r = 0; r < o.runs; ++r) {
    gpu::CudaStreamingSession<T> fresh_session(net, o.w1_points);
    auto start = Clock::now();
    check(fresh_session.push_frame(view(clip[0], o.size)));
    first_push.push_back(ms_since(start));
    start = Clock::now();
    fresh_session.add_tracks(queries);
    first_add.push_back(ms_since(start));
  }
  std::printf("W1 %s: a fresh session's frame 1: its push %.2f ms, its tracks' adding %.2f (medians)\n", precision,
              percentile(first_push, 0.5), percentile(first_add, 0.5));
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
    if (net.config.refinement || net.config.support_grid > 0) {
      // what the daemon publishes: the network in a graph, beside the support grid the model
      // declares (its tracks on top of `points`), then the alignments on the GPU
      const auto published = backend::make_session(
          std::is_same_v<T, float> ? backend::EngineKind::cuda_fp32 : backend::EngineKind::cuda_fp16, net, 0);
      std::vector<double> ms = time_frames(*published, clip, o.size, points);
      ms.erase(ms.begin(), ms.begin() + 2);
      std::printf("W2 %s: %5d points, %-8s p50 %7.3f ms  p99 %7.3f ms per frame\n", precision, points, "published",
                  percentile(ms, 0.5), percentile(ms, 0.99));
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
void profile(const engine::Network& net, const Options& o) {
  for (int points : o.w2_points) {
    gpu::CudaStreamingSession<T> session(net, points);
    const int warm = 3;
    for (int t = 0; t < warm + o.w2_frames; ++t) {
      if (t == warm) cudaProfilerStart();
      check(session.push_frame(view(bench::texture_frame(o.size, o.size, t), o.size)));
      if (t == 0) session.add_tracks(engine::grid_points(points, o.size, o.size));
    }
    cudaProfilerStop();
  }
}

// Median milliseconds of `body` enqueued on `stream`, timed with CUDA events after two warm-ups.
template <class Body>
double event_ms(cudaStream_t stream, int runs, Body body) {
  cudaEvent_t start = nullptr, stop = nullptr;
  EDGETAP_CUDA_CHECK(cudaEventCreate(&start));
  EDGETAP_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int r = 0; r < runs + 2; ++r) {
    EDGETAP_CUDA_CHECK(cudaEventRecord(start, stream));
    body();
    EDGETAP_CUDA_CHECK(cudaEventRecord(stop, stream));
    EDGETAP_CUDA_CHECK(cudaEventSynchronize(stop));
    float m = 0.f;
    EDGETAP_CUDA_CHECK(cudaEventElapsedTime(&m, start, stop));
    if (r >= 2) ms.push_back(m);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return percentile(ms, 0.5);
}

template <class T>
double gemm_tflops(const gpu::Blas& blas, cudaStream_t stream, int n) {
  // Random-ish, not zero: products of zeros can run faster than real data.
  std::vector<float> host(static_cast<std::size_t>(n) * n);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f - 0.5f;
  const gpu::DeviceBuffer<T> a = gpu::to_device<T>(host, stream), b = gpu::to_device<T>(host, stream);
  gpu::DeviceBuffer<float> c(host.size(), stream);
  const double ms = event_ms(stream, 10, [&] { blas.gemm_nt<T>(n, n, n, a.data(), n, b.data(), n, c.data(), n); });
  return 2.0 * n * n * static_cast<double>(n) / (ms * 1e-3) / 1e12;
}

void ceilings() {
  const gpu::CudaStream owned_stream;  // outlives the buffers made on it
  const cudaStream_t stream = owned_stream.get();
  const std::size_t bytes = std::size_t{1} << 30;
  gpu::DeviceBuffer<std::uint8_t> from(bytes, stream), to(bytes, stream);
  EDGETAP_CUDA_CHECK(cudaMemsetAsync(from.data(), 1, bytes, stream));
  const double copy_ms = event_ms(stream, 10, [&] {
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  std::printf("ceiling: device-to-device copy %.0f GB/s (bytes read + written; 1 GiB, median of 10)\n",
              2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3) / 1e9);
  {
    const gpu::Blas blas(stream);
    std::printf("ceiling: 8192^3 product, FP16 in / float accumulation %.0f TFLOP/s; FP32 %.1f TFLOP/s (median of 10)\n",
                gemm_tflops<__half>(blas, stream, 8192), gemm_tflops<float>(blas, stream, 8192));
  }
}

double used_mib() {
  std::size_t free = 0, total = 0;
  EDGETAP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<double>(total - free) / (1 << 20);
}

// The device's default memory pool, which every DeviceBuffer comes from (cudaMallocAsync):
// what it holds from the device and what of that the buffers use, MiB.
struct PoolMib {
  double reserved = 0, used = 0;
};
PoolMib pool_mib() {
  int device = 0;
  EDGETAP_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  EDGETAP_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t reserved = 0, used = 0;
  EDGETAP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EDGETAP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return {static_cast<double>(reserved) / (1 << 20), static_cast<double>(used) / (1 << 20)};
}

void memory(const engine::Network& net, const Options& o, backend::EngineKind kind, const char* precision) {
  Clip clip;
  for (int t = 0; t < 11; ++t) clip.push_back(bench::texture_frame(o.size, o.size, t));
  for (int points : o.w2_points) {
    {  // modules, handles' libraries and the pool's first blocks: the process's, not a camera's
      const auto warm = backend::make_session(kind, net, 0);
      time_frames(*warm, clip, o.size, points);
    }
    const double before = used_mib();
    std::vector<std::unique_ptr<engine::TrackingSession>> sessions;
    for (int camera = 1; camera <= 4; ++camera) {
      const double start = used_mib();
      const PoolMib pool_start = pool_mib();
      sessions.push_back(backend::make_session(kind, net, 0));
      const double built = used_mib();
      engine::TrackingSession& session = *sessions.back();
      check(session.push_frame(view(clip[0], o.size)));
      const double first = used_mib();
      session.add_tracks(engine::grid_points(points, o.size, o.size));
      const double added = used_mib();
      for (std::size_t t = 1; t < clip.size(); ++t) check(session.push_frame(view(clip[t], o.size)));
      const double streamed = used_mib();
      const PoolMib pool = pool_mib();
      // The rest of a camera's memory, outside the pool: cuDNN's and cuBLAS's handles, the
      // instantiated graphs, modules loaded for it.
      std::printf("memory %s: %d points, camera %d: set-up %+.0f, first frame %+.0f, points %+.0f, 10 frames %+.0f "
                  "= %+.0f MiB; the pool %+.0f reserved, %+.0f used by buffers\n",
                  precision, points, camera, built - start, first - built, added - first, streamed - added,
                  streamed - start, pool.reserved - pool_start.reserved, pool.used - pool_start.used);
    }
    std::printf("memory %s: %d points: 4 cameras %.0f MiB over the warm process, %.0f per camera\n", precision, points,
                used_mib() - before, (used_mib() - before) / 4);
  }
}

template <class T>
void run_precision(const engine::Network& net, const Options& o, const char* precision) {
  if (o.runs_workload("w1")) w1<T>(net, o, precision);
  if (o.runs_workload("w2")) w2<T>(net, o, precision);
  if (o.runs_workload("w3")) w3<T>(net, o, precision);
  if (o.runs_workload("profile")) profile<T>(net, o);
  if (o.runs_workload("memory")) {
    memory(net, o, std::is_same_v<T, float> ? backend::EngineKind::cuda_fp32 : backend::EngineKind::cuda_fp16, precision);
  }
}

int run(int argc, char** argv) {
  Options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const kernels::GpuProbe probe = kernels::probe_gpus();
  std::printf("%s\n", kernels::describe_backend_choice(probe).c_str());
  if (probe.devices.empty()) return 2;
  const engine::Network net =
      engine::load_network(o.model, std::filesystem::path(o.model).replace_extension(".json").string());
  std::printf("model %s (%zu parameters, %d iterations), device %s\n", o.model.c_str(), net.weights.parameter_count(),
              net.config.iters, probe.devices.front().name.c_str());
  if (o.runs_workload("ceilings")) ceilings();
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
