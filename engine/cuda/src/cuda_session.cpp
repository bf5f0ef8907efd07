#include "edgetap/gpu/cuda_session.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/gpu/cuda_encoder.hpp"
#include "edgetap/gpu/cuda_stream.hpp"
#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/gpu/device_weights.hpp"
#include "edgetap/gpu/gemm.hpp"
#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"
#include "cross_track_blocks.hpp"
#include "event_timer.hpp"
#include "frame_graphs.hpp"
#include "frames_ahead.hpp"
#include "fused_kernels.hpp"
#include "session_ops.hpp"
#include "tile_layers.hpp"
#include "track_slots.hpp"
#include "window_cache_layout.hpp"

namespace edgetap::gpu {

namespace k = edgetap::kernels::cuda;

namespace {

void check_model_fits(const engine::ModelConfig& c) {
  if (c.levels() > k::kMaxLevels) {
    throw std::invalid_argument("the CUDA engine takes at most " + std::to_string(k::kMaxLevels) + " pyramid levels");
  }
  if (c.window > k::kMaxWindow) {
    throw std::invalid_argument("the CUDA engine takes a window of at most " + std::to_string(k::kMaxWindow) + " frames");
  }
}

}  // namespace

template <class T>
struct CudaStreamingSession<T>::Impl {
  Impl(const engine::Network& network, int initial_capacity, int iters_)
      : c(network.config),
        reads(network.config.correlation_reads()),
        iters(network.config.iterations(iters_)),
        fused(fused_kernels_for<T>(network.config)),
        stream(owned_stream.get()),
        encoder(network.config, network.weights, stream),
        ahead(encoder, stream),
        blas(stream),
        w(upload_tracker_weights<T>(network.weights, stream)),
        timer(stream) {
    check_model_fits(c);
    if (initial_capacity <= 0) throw std::invalid_argument("the initial track capacity must be positive");
    if constexpr (std::is_same_v<T, __half>) {
      if (fused.products) tiles.emplace(c, w, blas, cross_blocks, fused.program, fused.cross_attention);
    }
    clock_dev.resize(1, stream);
    clock_host.resize(1);
    *clock_host.data() = k::FrameClock{};
    reserve(initial_capacity);
  }

  // Sizes of one slot's state and of the step's rows.
  std::size_t set_stride() const { return static_cast<std::size_t>(c.levels()) * c.query_cells() * c.feat_dim; }
  std::size_t desc_stride() const { return set_stride() * c.descriptor_sets(); }
  std::size_t cache_stride() const { return cache_slot_stride(c); }

  // Makes room for `cap` tracks: the per-slot state keeps its contents, the
  // per-row work buffers are only sized. The captured graph, which holds the
  // old addresses, is dropped.
  void reserve(int cap_) {
    if (cap_ <= capacity) return;
    const std::size_t cap = static_cast<std::size_t>(cap_);
    const std::size_t width = static_cast<std::size_t>(c.width);
    query.grow_keeping(cap, stream);
    position.grow_keeping(cap, stream);
    previous.grow_keeping(cap, stream);
    query_frame.grow_keeping(cap, stream);
    estimate_dev.grow_keeping(cap, stream);
    descs.grow_keeping(cap * desc_stride(), stream);
    keys.grow_keeping(cap * cache_stride(), stream);
    values.grow_keeping(cap * cache_stride(), stream);

    slots_dev.resize(cap, stream);
    points.resize(cap, stream);
    corr.resize(cap * c.n_corr(), stream);
    // The MLP's hidden layer: its products' float sums in acc unless the tile products add
    // its bias and GELU themselves; the activations in hidden.
    const std::size_t mlp_hidden = static_cast<std::size_t>(c.mlp_ratio) * width;
    acc.resize(cap * std::max({static_cast<std::size_t>(c.corr_hidden), 3 * width, fused.products ? 0 : mlp_hidden}),
               stream);
    hidden.resize(cap * std::max(static_cast<std::size_t>(c.corr_hidden), mlp_hidden), stream);
    token.resize(cap * c.token_in(), stream);
    x.resize(cap * width, stream);
    normed.resize(cap * width, stream);
    qkv.resize(cap * 3 * width, stream);
    attended.resize(cap * width, stream);
    head_acc.resize(cap * 4, stream);
    if (!c.cross_after.empty() && !fused.cross_attention) cross_blocks.reserve(cap_, c.heads, c.head_dim(), stream);
    slots_host.resize(cap);
    points_host.resize(cap);
    estimate_host.resize(cap);
    slots.resize(cap_);
    estimates.resize(cap);
    capacity = cap_;
    graphs_held.clear();  // they address the old buffers
  }

  // ---- The step: every iteration of every stepped row, enqueued on the stream.
  //
  // x, the residual stream, is also the hidden state carried from one
  // iteration to the next (engine::StreamingSession's h). The cuBLAS products
  // accumulate into x without their bias; that bias stays `pending` until the
  // next layer_norm_rows adds it to x (and writes x back), or, with the tile
  // products, until the next product into x adds it with its own. ln_out, the
  // last reader of an iteration, finds none left or clears it, so x then holds
  // the iteration's full output: the next iteration's h.

  void enqueue_step(int S, bool query_step) {
    const int width = c.width;
    const float* head_bias = w.head.bias.data();
    k::entry_points(slots_dev.data(), S, query.data(), position.data(), previous.data(), c.entry_velocity, query_step,
                    points.data(), stream);
    k::broadcast_row(w.h0.data(), S, width, x.data(), stream);  // h = h0
    for (int it = 0; it < iters; ++it) {
      timer.begin(Stage::correlation);
      correlate(S);
      timer.begin(Stage::token);
      linear(w.corr1, corr.data(), S, acc.data());
      k::bias_activation(acc.data(), w.corr1.bias.data(), S, c.corr_hidden, true, hidden.data(), stream);
      linear(w.corr2, hidden.data(), S, acc.data());
      k::token_inputs(acc.data(), w.corr2.bias.data(), c.corr_hidden, points.data(), query.data(), slots_dev.data(), S,
                      c.disp_scale, c.n_freq, query_step, token.data(), stream);
      linear(w.inp, token.data(), S, x.data(), true);  // x = h + inp(token)
      const float* pending = w.inp.bias.data();
      timer.begin(Stage::transformer);
      if (tiles) {
        enqueue_tiles(it, S, query_step, pending);
      } else {
        for (int b = 0; b < c.blocks; ++b) {
          pending = block(b, it, S, query_step, pending);
          if (const int xi = c.cross_layer(b); xi >= 0) {
            pending = cross_track(w.cross[static_cast<std::size_t>(xi)], S, query_step, pending);
          }
        }
        timer.begin(Stage::head);
        // Adds the last pending bias: x is now this iteration's output, the next one's h.
        normed_linear(pending, w.ln_out, w.head, S, head_acc.data());
      }
      k::apply_head(head_acc.data(), head_bias, S, query_step, points.data(), stream);
    }
    k::finish_step(head_acc.data(), head_bias, slots_dev.data(), S, query_step, points.data(), position.data(),
                   previous.data(), estimate_dev.data(), stream);
    // The next frame's recent descriptors: this frame's, at this output.
    if (c.recent_descriptors) {
      k::sample_descriptors(pyramid, slots_dev.data(), points.data(), S, c.query_patch, descs.data() + set_stride(),
                            desc_stride(), stream);
    }
    timer.end();
  }

  // Iteration it's blocks, cross-track layers and head product through the tile products (a
  // profile counts the head's product in the transformer stage).
  void enqueue_tiles(int it, int S, bool query_step, const float* pending) {
    if constexpr (std::is_same_v<T, __half>) {
      const TileLayerBuffers buffers{x.data(),
                                     qkv.data(),
                                     head_acc.data(),
                                     attended.data(),
                                     hidden.data(),
                                     {slots_dev.data(), c.window, keys.data(), values.data(), cache_stride(),
                                      w.rel_bias.data(), query_frame.data(), clock_dev.data()}};
      tiles->enqueue(buffers, it, S, query_step, pending, stream);
    }
  }

  // The window correlation of the S stepped rows; FP16 on the tensor cores.
  void correlate(int S) {
    const auto args = std::tuple(pyramid, slots_dev.data(), points.data(), S, c.radius, descs.data(), desc_stride(),
                                 set_stride(), reads.data(), static_cast<int>(reads.size()), c.query_patch, corr.data(),
                                 stream);
    if constexpr (std::is_same_v<T, __half>) {
      std::apply(k::window_correlation_tensor_cores, args);
    } else {
      std::apply(k::window_correlation<T>, args);
    }
  }

  // out (float) = in (T) * W^T; the bias is added by whoever reads out.
  void linear(const DeviceLinear<T>& l, const T* in, int rows, float* out, bool accumulate = false) {
    blas.gemm_nt<T>(rows, l.out, l.in, in, l.in, l.weight.data(), l.in, out, l.out, accumulate);
  }

  // x += pending (written back), then out (float) = LayerNorm(x) * W^T.
  void normed_linear(const float* pending, const DeviceLayerNorm& ln, const DeviceLinear<T>& l, int S, float* out) {
    k::layer_norm_rows(x.data(), pending, S, c.width, ln.gamma.data(), ln.beta.data(), normed.data(), stream);
    linear(l, normed.data(), S, out);
  }

  // x += transformer block b, given x's pending bias; returns the new one
  // (fc2's). The qkv and fc1 biases are added by the kernels that read them.
  const float* block(int b, int it, int S, bool query_step, const float* pending) {
    const DeviceBlock<T>& bw = w.blocks[static_cast<std::size_t>(b)];
    normed_linear(pending, bw.ln1, bw.qkv, S, qkv.data());
    k::attend_cached(qkv.data(), bw.qkv.bias.data(), slots_dev.data(), S, c.heads, c.head_dim(), c.window, query_step,
                     keys.data(), values.data(), cache_stride(), cache_layer_offset(c, it, b), w.rel_bias.data(),
                     query_frame.data(), clock_dev.data(), attended.data(), stream);
    linear(bw.proj, attended.data(), S, x.data(), true);  // x += proj(o), its bias pending
    k::layer_norm_rows(x.data(), bw.proj.bias.data(), S, c.width, bw.ln2.gamma.data(), bw.ln2.beta.data(),
                       normed.data(), stream);
    linear(bw.fc1, normed.data(), S, acc.data());
    k::bias_activation(acc.data(), bw.fc1.bias.data(), S, bw.fc1.out, true, hidden.data(), stream);
    linear(bw.fc2, hidden.data(), S, x.data(), true);  // x += mlp(x), its bias pending
    return bw.fc2.bias.data();
  }

  // x += the cross-track layer (engine::StreamingSession::cross_track): every
  // stepped track attends to all of them; on the query step only to itself.
  // Takes x's pending bias; returns the new one (the projection's).
  const float* cross_track(const DeviceCrossTrack<T>& cw, int S, bool query_step, const float* pending) {
    normed_linear(pending, cw.ln, cw.qkv, S, qkv.data());
    if (query_step) {
      k::take_values(qkv.data(), cw.qkv.bias.data(), S, c.width, attended.data(), stream);
    } else {
      attend_across(cw.qkv.bias.data(), S);
    }
    linear(cw.proj, attended.data(), S, x.data(), true);  // x += proj(o), its bias pending
    return cw.proj.bias.data();
  }

  // attended = every stepped row's attention over all of them, from qkv + bias: in
  // one kernel where fused.cross_attention, else by blocks of rows through cuBLAS.
  void attend_across(const float* bias, int S) {
    if constexpr (std::is_same_v<T, __half>) {
      if (fused.cross_attention) {
        k::cross_attention(qkv.data(), bias, S, c.heads, c.head_dim(), attended.data(), stream);
        return;
      }
    }
    cross_blocks.attend(blas, qkv.data(), bias, S, c.heads, c.head_dim(), attended.data(), stream);
  }

  // ---- Frames.

  // The frame into pinned memory (rows packed) unless it comes from the
  // encoder's batch (`batch_frame`, its index there), the clock advanced on
  // the host side.
  void stage_frame(const ImageView& frame, std::optional<int> batch_frame) {
    if (!batch_frame) {
      rgb_host.resize(frame.packed_bytes());
      rgb_dev.resize(frame.packed_bytes(), stream);
      copy_rows_packed(frame, rgb_host.data());
    }
    ++t;
    k::FrameClock& clk = *clock_host.data();
    clk.t = t;
    clk.slot_frame[t % c.window] = t;
    clk.batch_frame = batch_frame.value_or(0);
  }

  // Copies in, encoder (or the frame's pyramid from the encoder's batch), step,
  // estimates out: one frame's device work.
  void enqueue_frame(const FrameGraphs::Shape& shape) {
    const auto [S, height, width, from_batch] = shape;
    if (!from_batch) {
      const std::size_t bytes = static_cast<std::size_t>(width) * height * 3;
      EDGETAP_CUDA_CHECK(cudaMemcpyAsync(rgb_dev.data(), rgb_host.data(), bytes, cudaMemcpyHostToDevice, stream));
    }
    EDGETAP_CUDA_CHECK(
        cudaMemcpyAsync(clock_dev.data(), clock_host.data(), sizeof(k::FrameClock), cudaMemcpyHostToDevice, stream));
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(slots_dev.data(), slots_host.data(), static_cast<std::size_t>(S) * sizeof(int),
                                       cudaMemcpyHostToDevice, stream));
    timer.begin(Stage::encoder);
    pyramid = from_batch ? encoder.take_batched(&clock_dev.data()->batch_frame)
                         : encoder.encode(rgb_dev.data(), height, width);
    if (S > 0) enqueue_step(S, false);
    timer.end();
    download_estimates();
  }

  void push(const ImageView& frame) {
    if (frame.empty() || frame.width % c.size_multiple != 0 || frame.height % c.size_multiple != 0) {
      throw std::invalid_argument("the network needs frame sides that are multiples of " +
                                  std::to_string(c.size_multiple) + ", got " + std::to_string(frame.width) + "x" +
                                  std::to_string(frame.height));
    }
    encoder.prepare(frame.height, frame.width);
    const std::optional<int> batch_frame = ahead.take(frame);
    stage_frame(frame, batch_frame);
    const int S = slots.list(slots_host.data());  // the stepped tracks, in slot order
    const FrameGraphs::Shape shape{S, frame.height, frame.width, batch_frame.has_value()};
    if (graphs && !profiling) {
      run_graph(shape);
    } else {
      timer.reset(profiling);
      enqueue_frame(shape);
    }
    owned_stream.wait();
    if (profiling) profile = timer.profile();
    read_estimates(S);
  }

  // Replays the captured frame of this shape, capturing it first when none is held.
  void run_graph(const FrameGraphs::Shape& shape) {
    const int S = shape[0];
    const cudaGraphExec_t exec = graphs_held.get(shape, [&] {
      const cudaGraphExec_t made = S > 0 && !captured_tracks ? first_capture(shape) : shared_capture(shape);
      captured_tracks = captured_tracks || S > 0;
      return made;
    });
    EDGETAP_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  }

  // Side by side with other cameras' captures (device_setup.hpp).
  cudaGraphExec_t shared_capture(const FrameGraphs::Shape& shape) {
    CaptureSection capturing;
    return capture_frame(shape);
  }
  // The session's first frame with tracks launches kernels that may never have
  // run in this process (their modules load then): set-up, alone.
  cudaGraphExec_t first_capture(const FrameGraphs::Shape& shape) {
    DeviceSetupSection setup;
    return capture_frame(shape);
  }

  cudaGraphExec_t capture_frame(const FrameGraphs::Shape& shape) {
    timer.reset(false);
    return capture_graph(stream, [&] { enqueue_frame(shape); });
  }

  // Forgets every track and frame; keeps the buffers, the encoder's plans and the captured graphs.
  void restart() {
    EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream));
    ahead.clear();
    slots.clear();
    t = -1;
    *clock_host.data() = k::FrameClock{};
  }

  // Every slot's estimate into pinned memory (read after the stream synchronizes).
  void download_estimates() {
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(estimate_host.data(), estimate_dev.data(),
                                       static_cast<std::size_t>(capacity) * sizeof(float4), cudaMemcpyDeviceToHost,
                                       stream));
  }

  void read_estimates(int S) {
    for (int i = 0; i < S; ++i) {
      const int s = slots_host.data()[i];
      const float4 e = estimate_host.data()[s];
      estimates[static_cast<std::size_t>(s)] = engine::TrackEstimate{e.x, e.y, e.z, e.w};
    }
  }

  // ---- Tracks.

  // Set-up: room for `n` tracks before any is added, so that a warm-up grows the
  // buffers ahead of its first capture and keeps every graph it captures.
  void make_room(int n) {
    DeviceSetupSection setup;
    reserve(n);
  }

  // Set-up (device_setup.hpp) up to the last launch where there is any: growing
  // the per-track buffers, or a query step of a size this session has not run
  // (its products may launch kernels that never ran in the process). Otherwise
  // (a warmed-up session's first points) the launches run beside other cameras'
  // captures; the step is always waited for outside the section: 16 cameras
  // adding their points at once do not wait for each other.
  std::vector<int> add(std::span<const engine::Point2> pts) {
    if (t < 0) throw std::logic_error("add_tracks needs a pushed frame");
    const int n = static_cast<int>(pts.size());
    if (n == 0) return {};
    std::vector<int> handles = enqueue_added(pts);
    owned_stream.wait();
    read_estimates(n);
    return handles;
  }

  std::vector<int> enqueue_added(std::span<const engine::Point2> pts) {
    const int n = static_cast<int>(pts.size());
    const bool grows = n > capacity - slots.alive_count();
    std::optional<DeviceSetupSection> setup;
    if (grows || !query_sizes_run.contains(n)) setup.emplace();
    // A quarter more than the last capacity, at least: the cross-track scores grow with its
    // square, so doubling for one added point would take 4x their memory.
    if (grows) reserve(std::max(capacity + capacity / 4 + 1, slots.alive_count() + n));
    std::vector<int> handles;
    for (int i = 0; i < n; ++i) {
      const int handle = slots.take();
      slots_host.data()[i] = handle;
      points_host.data()[i] = float2{pts[static_cast<std::size_t>(i)].x, pts[static_cast<std::size_t>(i)].y};
      handles.push_back(handle);
      clear_cache(handle);
    }
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(slots_dev.data(), slots_host.data(), static_cast<std::size_t>(n) * sizeof(int),
                                       cudaMemcpyHostToDevice, stream));
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(points.data(), points_host.data(),
                                       static_cast<std::size_t>(n) * sizeof(float2), cudaMemcpyHostToDevice, stream));
    start_tracks(slots_dev.data(), points.data(), n, t, query.data(), position.data(), previous.data(),
                 query_frame.data(), stream);
    for (int set = 0; set < c.descriptor_sets(); ++set) {  // the recent set starts as the query's
      k::sample_descriptors(pyramid, slots_dev.data(), points.data(), n, c.query_patch,
                            descs.data() + set * set_stride(), desc_stride(), stream);
    }
    timer.reset(false);
    enqueue_step(n, true);
    query_sizes_run.insert(n);
    download_estimates();
    return handles;
  }

  // A new track's caches start at zero, as the CPU engine's.
  void clear_cache(int slot) {
    const std::size_t offset = static_cast<std::size_t>(slot) * cache_stride(), bytes = cache_stride() * sizeof(T);
    EDGETAP_CUDA_CHECK(cudaMemsetAsync(keys.data() + offset, 0, bytes, stream));
    EDGETAP_CUDA_CHECK(cudaMemsetAsync(values.data() + offset, 0, bytes, stream));
  }

  const engine::ModelConfig& c;
  const std::vector<engine::CorrelationRead> reads;  // the correlation reads, in corr1's input order
  const int iters;
  int capacity = 0;
  const FusedKernels fused;  // the fused kernels this session's step runs (fused_kernels.hpp)
  CudaStream owned_stream;  // before every buffer: destroyed after them
  cudaStream_t stream = nullptr;
  CudaEncoder<T> encoder;
  FramesAhead<T> ahead;  // the frames encode_ahead announced
  Blas blas;
  DeviceTrackerWeights<T> w;
  EventTimer timer;
  k::PyramidView<T> pyramid;
  std::int64_t t = -1;

  // Per slot, on the device.
  DeviceBuffer<float2> query, position, previous;
  DeviceBuffer<std::int64_t> query_frame;
  DeviceBuffer<float4> estimate_dev;
  DeviceBuffer<T> descs, keys, values;
  // Per stepped row.
  DeviceBuffer<int> slots_dev;
  DeviceBuffer<float2> points;  // each row's estimate (the new tracks' query points when adding)
  DeviceBuffer<T> corr, hidden, token, normed, attended;
  DeviceBuffer<float> acc, x, qkv, head_acc;  // x: the residual stream and hidden state
  CrossTrackBlocks<T> cross_blocks;  // the cross-track attention through cuBLAS, where it runs
  std::optional<TileLayers> tiles;   // FP16's layers after inp through the tile products, where they run
  DeviceBuffer<k::FrameClock> clock_dev;
  DeviceBuffer<std::uint8_t> rgb_dev;
  // Host side.
  PinnedBuffer<k::FrameClock> clock_host;
  PinnedBuffer<std::uint8_t> rgb_host;
  PinnedBuffer<int> slots_host;
  PinnedBuffer<float2> points_host;
  PinnedBuffer<float4> estimate_host;
  TrackSlots slots;  // the track handles
  std::vector<engine::TrackEstimate> estimates;

  bool graphs = true;
  bool profiling = false;
  engine::StepProfile profile;
  FrameGraphs graphs_held;  // after the buffers: destroyed before them
  bool captured_tracks = false;  // whether a frame with tracks was captured yet
  std::set<int> query_sizes_run;  // the sizes of the query steps run so far (kept by restart)
};

// Building and destroying a session is set-up (device_setup.hpp): handles,
// weights and buffers are made and freed while no other camera captures.
template <class T>
CudaStreamingSession<T>::CudaStreamingSession(const engine::Network& network, int capacity, int iters) {
  DeviceSetupSection setup;
  impl_ = std::make_unique<Impl>(network, capacity, iters);
}

template <class T>
CudaStreamingSession<T>::~CudaStreamingSession() {
  DeviceSetupSection setup;
  impl_.reset();
}

template <class T>
Status CudaStreamingSession<T>::push_frame(const ImageView& frame) noexcept {
  try {
    impl_->push(frame);
    return Status::ok();
  } catch (const std::invalid_argument& e) {
    return Status::error(Status::Code::bad_frame, e.what());
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("edgetap network (cuda): ") + e.what());
  }
}

template <class T>
std::vector<int> CudaStreamingSession<T>::add_tracks(std::span<const engine::Point2> points) {
  return impl_->add(points);
}

template <class T>
void CudaStreamingSession<T>::remove_track(int handle) {
  impl_->slots.release(handle);
}

template <class T>
bool CudaStreamingSession<T>::alive(int handle) const {
  return impl_->slots.alive(handle);
}

template <class T>
const engine::TrackEstimate& CudaStreamingSession<T>::estimate(int handle) const {
  return impl_->estimates.at(static_cast<std::size_t>(handle));
}

template <class T>
std::int64_t CudaStreamingSession<T>::frames() const noexcept {
  return impl_->t + 1;
}

template <class T>
void CudaStreamingSession<T>::encode_ahead(std::span<const ImageView> frames) {
  impl_->ahead.announce(frames, impl_->c.size_multiple);
}

template <class T>
void CudaStreamingSession<T>::warm_up(int width, int height, std::span<const int> batches) {
  if (frames() > 0) return;  // only a session that has seen nothing yet
  const int tracks = std::accumulate(batches.begin(), batches.end(), 0);
  constexpr std::uint8_t kBlankGrey = 128;
  const std::vector<std::uint8_t> blank(static_cast<std::size_t>(width) * height * 3, kBlankGrey);
  const ImageView frame{blank.data(), width, height, static_cast<std::size_t>(width) * 3};
  auto push = [&] {
    const Status status = push_frame(frame);
    if (!status) throw std::runtime_error(status.message());
  };
  try {
    impl_->make_room(tracks);  // growing later would drop the graph of the frame without tracks
    push();  // the frame without tracks
    if (tracks > 0) {
      for (const int batch : batches) {
        if (batch > 0) add_tracks(engine::grid_points(batch, width, height));  // its query step
      }
      push();  // their first step
      push();  // the frame's graph with them, captured
    }
  } catch (...) {
    restart();  // a warm-up that failed half-way leaves no frame and no track behind either
    throw;
  }
  restart();
}

template <class T>
int CudaStreamingSession<T>::capacity() const noexcept {
  return impl_->capacity;
}

template <class T>
void CudaStreamingSession<T>::restart() {
  impl_->restart();
}

template <class T>
void CudaStreamingSession<T>::set_graphs(bool on) {
  impl_->graphs = on;
}

template <class T>
void CudaStreamingSession<T>::set_profiling(bool on) {
  impl_->profiling = on;
}

template <class T>
const engine::StepProfile& CudaStreamingSession<T>::last_profile() const noexcept {
  return impl_->profile;
}

template <class T>
int CudaStreamingSession<T>::graph_captures() const noexcept {
  return impl_->graphs_held.captures();
}

template class CudaStreamingSession<float>;
template class CudaStreamingSession<__half>;

}  // namespace edgetap::gpu
