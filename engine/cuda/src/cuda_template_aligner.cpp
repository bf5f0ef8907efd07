#include "edgetap/gpu/cuda_template_aligner.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/gpu/cuda_stream.hpp"
#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/kernels/cuda/template_alignment.hpp"

namespace edgetap::gpu {

namespace k = kernels::cuda;

struct CudaTemplateAligner::Impl {
  engine::TemplateAlignmentConfig config;
  k::AlignmentSettings settings;
  CudaStream owned_stream;  // before every buffer: destroyed after them
  cudaStream_t stream = owned_stream.get();
  int width = 0, height = 0;  // the current frame's; 0: none
  int capacity = 0;           // template rows
  bool aligned_once = false, captured_once = false;  // whether each kernel was launched yet
  std::vector<bool> has_row;  // by handle: whether its row holds a template
  PinnedBuffer<std::uint8_t> rgb_host;
  DeviceBuffer<std::uint8_t> rgb;
  DeviceBuffer<float4> grey;
  DeviceBuffer<float> templates;  // [capacity][cells]
  PinnedBuffer<float2> points_host;
  PinnedBuffer<int> slots_host, flags_host;
  DeviceBuffer<float2> points;
  DeviceBuffer<int> slots, flags;
  PinnedBuffer<k::AlignmentTask> tasks_host;
  PinnedBuffer<k::AlignmentOutcome> outcomes_host;
  DeviceBuffer<k::AlignmentTask> tasks;
  DeviceBuffer<k::AlignmentOutcome> outcomes;

  std::size_t cells() const { return static_cast<std::size_t>(config.cells()); }

  void ensure_capacity(int handle) {
    if (handle < capacity) return;
    int grown = std::max(capacity, 1);
    while (grown <= handle) grown *= 2;
    templates.grow_keeping(static_cast<std::size_t>(grown) * cells(), stream);  // ordered after the old rows' writers
    capacity = grown;
  }
};

// Making and destroying the aligner is set-up (device_setup.hpp).
CudaTemplateAligner::CudaTemplateAligner(const engine::TemplateAlignmentConfig& config, int capacity) {
  DeviceSetupSection setup;
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.config = config;
  m.settings = k::AlignmentSettings{config.radius, config.iters, config.min_ncc, config.max_shift};
  m.ensure_capacity(std::max(capacity, 1) - 1);
}

CudaTemplateAligner::~CudaTemplateAligner() {
  DeviceSetupSection setup;
  impl_.reset();
}

void CudaTemplateAligner::set_frame(const ImageView& frame) {
  Impl& m = *impl_;
  if (frame.empty()) {
    m.width = m.height = 0;
    return;
  }
  const std::size_t row = 3 * static_cast<std::size_t>(frame.width);
  const std::size_t bytes = frame.packed_bytes();
  m.owned_stream.wait();  // the last frame's copy has left the pinned buffer
  m.rgb_host.resize(bytes);
  m.rgb.resize(bytes, m.stream);
  m.grey.resize(static_cast<std::size_t>(frame.width) * static_cast<std::size_t>(frame.height), m.stream);
  copy_rows_packed(frame, m.rgb_host.data());
  EDGETAP_CUDA_CHECK(cudaMemcpyAsync(m.rgb.data(), m.rgb_host.data(), bytes, cudaMemcpyHostToDevice, m.stream));
  k::grey_frame(m.rgb.data(), frame.width, frame.height, row, m.grey.data(), m.stream);
  m.width = frame.width;
  m.height = frame.height;
}

// Set-up, as a session's add_tracks (device_setup.hpp), up to the launch, the
// first time: the kernel's first launch may load its module (the buffers grow
// stream-ordered, the pinned ones in a section of their own). The kernel is
// waited for outside the section: 16 cameras capturing their first points'
// templates (warmed up) do not wait for each other.
std::vector<bool> CudaTemplateAligner::capture(std::span<const int> handles, std::span<const engine::Point2> points) {
  Impl& m = *impl_;
  if (handles.size() != points.size()) throw std::invalid_argument("capture: one point per handle");
  const int n = static_cast<int>(handles.size());
  std::vector<bool> has_template(handles.size(), false);
  {
    std::optional<DeviceSetupSection> first_use;
    if (!m.captured_once) first_use.emplace();
    for (int h : handles) {
      if (h < 0) throw std::out_of_range("capture: handle " + std::to_string(h));
      m.ensure_capacity(h);
      if (static_cast<std::size_t>(h) >= m.has_row.size()) m.has_row.resize(static_cast<std::size_t>(h) + 1, false);
      m.has_row[static_cast<std::size_t>(h)] = false;
    }
    if (n == 0 || m.width == 0) return has_template;
    m.points_host.resize(handles.size());
    m.slots_host.resize(handles.size());
    m.flags_host.resize(handles.size());
    m.points.resize(handles.size(), m.stream);
    m.slots.resize(handles.size(), m.stream);
    m.flags.resize(handles.size(), m.stream);
    for (int i = 0; i < n; ++i) {
      m.points_host.data()[i] = float2{points[static_cast<std::size_t>(i)].x, points[static_cast<std::size_t>(i)].y};
      m.slots_host.data()[i] = handles[static_cast<std::size_t>(i)];
    }
    const std::size_t count = handles.size();
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(m.points.data(), m.points_host.data(), count * sizeof(float2),
                                       cudaMemcpyHostToDevice, m.stream));
    EDGETAP_CUDA_CHECK(
        cudaMemcpyAsync(m.slots.data(), m.slots_host.data(), count * sizeof(int), cudaMemcpyHostToDevice, m.stream));
    k::capture_templates(m.grey.data(), m.width, m.height, m.points.data(), m.slots.data(), n, m.config.radius,
                         m.templates.data(), m.flags.data(), m.stream);
    m.captured_once = true;
    EDGETAP_CUDA_CHECK(
        cudaMemcpyAsync(m.flags_host.data(), m.flags.data(), count * sizeof(int), cudaMemcpyDeviceToHost, m.stream));
  }
  m.owned_stream.wait();
  for (int i = 0; i < n; ++i) {
    const bool kept = m.flags_host.data()[i] != 0;
    has_template[static_cast<std::size_t>(i)] = kept;
    m.has_row[static_cast<std::size_t>(handles[static_cast<std::size_t>(i)])] = kept;
  }
  return has_template;
}

void CudaTemplateAligner::warm_up(int width, int height, int tracks) {
  if (tracks <= 0 || width <= 0 || height <= 0) return;
  // A checkerboard of 8-pixel squares: every patch has contrast, so every capture
  // keeps a template and every alignment runs.
  constexpr int kSquare = 8;
  constexpr std::uint8_t kDark = 48, kLight = 208;
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::uint8_t v = (x / kSquare + y / kSquare) % 2 == 0 ? kDark : kLight;
      std::fill_n(pattern.begin() + (static_cast<std::ptrdiff_t>(y) * width + x) * 3, 3, v);
    }
  }
  set_frame(ImageView{pattern.data(), width, height, static_cast<std::size_t>(width) * 3});
  std::vector<int> handles(static_cast<std::size_t>(tracks));
  std::iota(handles.begin(), handles.end(), 0);
  const std::vector<engine::Point2> points = engine::grid_points(tracks, width, height);
  const std::vector<bool> kept = capture(handles, points);
  std::vector<engine::AlignmentJob> jobs;
  for (int h = 0; h < tracks; ++h) {
    const engine::Point2 p = points[static_cast<std::size_t>(h)];
    if (kept[static_cast<std::size_t>(h)]) jobs.push_back(engine::AlignmentJob{h, p.x, p.y, engine::AffineWarp{}});
  }
  std::vector<engine::AlignmentResult> results;
  align(jobs, results);
  Impl& m = *impl_;
  std::fill(m.has_row.begin(), m.has_row.end(), false);  // no handle keeps the warm-up's template
  m.width = m.height = 0;
}

void CudaTemplateAligner::align(std::span<const engine::AlignmentJob> jobs,
                                std::vector<engine::AlignmentResult>& results) {
  Impl& m = *impl_;
  const std::size_t n = jobs.size();
  results.assign(n, engine::AlignmentResult{});
  if (n == 0) return;
  m.tasks_host.resize(n);
  m.outcomes_host.resize(n);
  m.tasks.resize(n, m.stream);
  m.outcomes.resize(n, m.stream);
  for (std::size_t i = 0; i < n; ++i) {
    const engine::AlignmentJob& j = jobs[i];
    if (j.handle < 0 || static_cast<std::size_t>(j.handle) >= m.has_row.size() ||
        !m.has_row[static_cast<std::size_t>(j.handle)]) {
      throw std::out_of_range("align: handle " + std::to_string(j.handle) + " has no template");
    }
    k::AlignmentTask& t = m.tasks_host.data()[i];
    t = k::AlignmentTask{};
    t.x = j.x;
    t.y = j.y;
    std::copy(j.warp.a.begin(), j.warp.a.end(), t.warp);
    t.slot = j.handle;
    results[i].x = j.x;  // as the reference where there is no frame: the start, not accepted
    results[i].y = j.y;
    results[i].warp = j.warp;
  }
  if (m.width == 0) return;
  {
    std::optional<DeviceSetupSection> first_use;  // the alignment kernel may not have run in this process yet
    if (!m.aligned_once) first_use.emplace();
    m.aligned_once = true;
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(m.tasks.data(), m.tasks_host.data(), n * sizeof(k::AlignmentTask),
                                       cudaMemcpyHostToDevice, m.stream));
    k::align_templates(m.grey.data(), m.width, m.height, m.templates.data(), m.tasks.data(), static_cast<int>(n),
                       m.settings, m.outcomes.data(), m.stream);
    EDGETAP_CUDA_CHECK(cudaMemcpyAsync(m.outcomes_host.data(), m.outcomes.data(), n * sizeof(k::AlignmentOutcome),
                                       cudaMemcpyDeviceToHost, m.stream));
  }
  m.owned_stream.wait();
  for (std::size_t i = 0; i < n; ++i) {
    const k::AlignmentOutcome& o = m.outcomes_host.data()[i];
    engine::AlignmentResult& r = results[i];
    r.accepted = o.accepted != 0;
    r.x = o.x;
    r.y = o.y;
    r.ncc = o.ncc;
    std::copy(o.warp, o.warp + 4, r.warp.a.begin());
  }
}

}  // namespace edgetap::gpu
