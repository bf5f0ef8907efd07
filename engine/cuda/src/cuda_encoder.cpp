// CudaEncoder: engine::CpuEncoder's network as a fixed program of steps, each
// a cuDNN convolution (NHWC activations, KRSC filters: the CPU layouts as they
// are) followed by one epilogue kernel (bias, residual, upsample-add, ReLU).
// prepare() builds the program for a frame size: descriptors, algorithms
// (conv_algorithms.hpp), one workspace and one arena for every activation;
// encode() only replays it.
#include "edgetap/gpu/cuda_encoder.hpp"

#include <cudnn.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "edgetap/gpu/cudnn_check.hpp"
#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/encoder_ops.hpp"
#include "conv_algorithms.hpp"

namespace edgetap::gpu {

namespace {

namespace kc = kernels::cuda;

// Every activation in the arena starts on this boundary (cuDNN's vectorized
// kernels want at least 16 bytes; 256 is what cudaMalloc itself gives).
constexpr std::size_t kAlignBytes = 256;

// Owner of one cuDNN object (handle or descriptor): created on construction,
// destroyed once, movable.
template <class Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class CudnnOwned {
 public:
  CudnnOwned() { EDGETAP_CUDNN_CHECK(Create(&handle_)); }
  CudnnOwned(CudnnOwned&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  CudnnOwned& operator=(CudnnOwned&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }
  CudnnOwned(const CudnnOwned&) = delete;
  CudnnOwned& operator=(const CudnnOwned&) = delete;
  ~CudnnOwned() {
    if (handle_ != nullptr) Destroy(handle_);
  }
  Handle get() const noexcept { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using CudnnHandle = CudnnOwned<cudnnHandle_t, cudnnCreate, cudnnDestroy>;
using TensorDesc = CudnnOwned<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = CudnnOwned<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    CudnnOwned<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;

// cuDNN's names for a storage precision. Accumulation is float for both.
// FP32 asks for FMA math: CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor cores
// on Ampere and later (10-bit mantissa), which would not match the CPU.
template <class T>
struct Precision;
template <>
struct Precision<float> {
  static constexpr cudnnDataType_t data = CUDNN_DATA_FLOAT;
  static constexpr cudnnMathType_t math = CUDNN_FMA_MATH;
};
template <>
struct Precision<__half> {
  static constexpr cudnnDataType_t data = CUDNN_DATA_HALF;
  static constexpr cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;
};

// One convolution's weights on the device, independent of the frame size.
template <class T>
struct DeviceConv {
  int cin = 0, cout = 0, k = 0, stride = 1;
  DeviceBuffer<T> weight;    // [cout][k][k][cin] = cuDNN's NHWC filter (KRSC)
  DeviceBuffer<float> bias;  // [cout], added in float by the epilogue
  FilterDesc filter;
};

template <class T>
DeviceConv<T> upload_conv(const engine::Conv& c, cudaStream_t stream) {
  // cuDNN pads symmetrically; the CPU pads k/2 before and after, which agrees
  // (and gives ceil(in / stride) outputs) only for odd k.
  if (c.k % 2 != 1 || c.stride < 1 || c.cin < 1 || c.cout < 1) {
    throw std::invalid_argument("CudaEncoder: unsupported convolution (k " + std::to_string(c.k) + ", stride " +
                                std::to_string(c.stride) + ")");
  }
  DeviceConv<T> d;
  d.cin = c.cin;
  d.cout = c.cout;
  d.k = c.k;
  d.stride = c.stride;
  d.weight = to_device<T>(c.weight, stream);
  d.bias = to_device<float>(c.bias, stream);
  EDGETAP_CUDNN_CHECK(
      cudnnSetFilter4dDescriptor(d.filter.get(), Precision<T>::data, CUDNN_TENSOR_NHWC, c.cout, c.cin, c.k, c.k));
  return d;
}

// One step of the program: a convolution of `in` into `acc`, then the
// epilogue (whose acc, bias and shape are this step's).
template <class T>
struct ConvStep {
  const DeviceConv<T>* conv = nullptr;
  TensorDesc in_desc, out_desc;
  ConvDesc desc;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::size_t workspace_bytes = 0;
  const T* in = nullptr;
  T* acc = nullptr;  // the convolution's output, without bias
  kc::ConvEpilogue<T> epilogue;
};

// Builds one step's descriptors for `frames` in_h x in_w inputs (a batch) and
// picks its algorithm. `epilogue` comes with residual, coarse, relu and out set (out
// null: in place on acc).
template <class T>
ConvStep<T> plan_step(cudnnHandle_t handle, const DeviceConv<T>& conv, const T* in, int in_h, int in_w, int frames,
                      T* acc, kc::ConvEpilogue<T> epilogue) {
  constexpr cudnnDataType_t data = Precision<T>::data;
  ConvStep<T> s;
  s.conv = &conv;
  s.in = in;
  s.acc = acc;
  const int out_h = (in_h + conv.stride - 1) / conv.stride, out_w = (in_w + conv.stride - 1) / conv.stride;
  EDGETAP_CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(s.in_desc.get(), CUDNN_TENSOR_NHWC, data, frames, conv.cin, in_h, in_w));
  EDGETAP_CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(s.out_desc.get(), CUDNN_TENSOR_NHWC, data, frames, conv.cout, out_h, out_w));
  const int pad = conv.k / 2;
  EDGETAP_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(s.desc.get(), pad, pad, conv.stride, conv.stride, 1, 1,
                                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  EDGETAP_CUDNN_CHECK(cudnnSetConvolutionMathType(s.desc.get(), Precision<T>::math));

  // The CPU's output size, ceil(in / stride), must be cuDNN's too.
  int n = 0, c = 0, h = 0, w = 0;
  EDGETAP_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(s.desc.get(), s.in_desc.get(), conv.filter.get(), &n, &c, &h, &w));
  if (n != frames || c != conv.cout || h != out_h || w != out_w) {
    throw std::logic_error("CudaEncoder: cuDNN's output size differs from the CPU encoder's");
  }

  const ConvShape shape{data, frames, conv.cin, in_h, in_w, conv.cout, conv.k, conv.stride};
  const cudnnConvolutionFwdAlgoPerf_t best =
      forward_algorithm(handle, shape, s.in_desc.get(), conv.filter.get(), s.desc.get(), s.out_desc.get());
  // The math type belongs with the algorithm (cuDNN decides tensor-core use
  // from both), so FP16's descriptor takes the one the ranking was made for;
  // FP32's stays FMA, whatever its entry says.
  if (data != CUDNN_DATA_FLOAT) EDGETAP_CUDNN_CHECK(cudnnSetConvolutionMathType(s.desc.get(), best.mathType));
  s.algo = best.algo;
  s.workspace_bytes = best.memory;

  epilogue.acc = acc;
  epilogue.bias = conv.bias.data();
  epilogue.height = out_h;
  epilogue.width = out_w;
  epilogue.channels = conv.cout;
  epilogue.frames = frames;
  if (epilogue.out == nullptr) epilogue.out = acc;
  s.epilogue = epilogue;
  return s;
}

// Enqueues one step: the convolution into the step's acc, then its epilogue.
template <class T>
void run_step(cudnnHandle_t handle, const ConvStep<T>& s, void* workspace, std::size_t workspace_bytes,
              cudaStream_t stream) {
  const float alpha = 1.f, beta = 0.f;  // float scalars: the compute type is float for both precisions
  EDGETAP_CUDNN_CHECK(cudnnConvolutionForward(handle, &alpha, s.in_desc.get(), s.in, s.conv->filter.get(),
                                              s.conv->weight.data(), s.desc.get(), s.algo, workspace,
                                              workspace_bytes, &beta, s.out_desc.get(), s.acc));
  kc::conv_epilogue(s.epilogue, stream);
}

// Element offsets of the arena's arrays, each aligned to kAlignBytes.
class ArenaLayout {
 public:
  template <class T>
  std::size_t add(std::size_t count) {
    constexpr std::size_t align = kAlignBytes / sizeof(T);
    const std::size_t offset = (total_ + align - 1) / align * align;
    total_ = offset + count;
    return offset;
  }
  std::size_t total() const noexcept { return total_; }

 private:
  std::size_t total_ = 0;
};

// The program for one frame size and batch: descriptors, algorithms, one
// workspace and one arena for the normalized input and every activation.
template <class T>
struct Program {
  int height = 0, width = 0, frames = 0;
  DeviceBuffer<T> arena;
  DeviceBuffer<unsigned char> workspace;
  std::size_t workspace_bytes = 0;
  T* input = nullptr;
  std::vector<ConvStep<T>> steps;
  kc::PyramidView<T> pyramid;  // frame 0; each level's frames follow one another

  bool made_for(int h, int w, int n) const noexcept { return h == height && w == width && n == frames; }
};

// Where the arena's arrays start for `frames` H x W frames (elements of T).
struct ArenaPlan {
  std::size_t input = 0, backbone[5] = {}, c2 = 0, tmp = 0, level[5] = {}, total = 0;
};

template <class T>
ArenaPlan plan_arena(const engine::ModelConfig& config, int H, int W, int frames) {
  const bool fine = config.fine_level();
  const int D = config.feat_dim;
  const auto& ch = config.enc_channels;  // widths at strides 2, 4, 8, 16, 32
  const std::size_t n = static_cast<std::size_t>(frames);
  auto cells = [&](int i) { return n * static_cast<std::size_t>(H >> (i + 1)) * static_cast<std::size_t>(W >> (i + 1)); };
  ArenaPlan a;
  ArenaLayout layout;
  a.input = layout.add<T>(n * static_cast<std::size_t>(H) * W * 3);
  for (int i = 0; i < 5; ++i) a.backbone[i] = layout.add<T>(cells(i) * ch[static_cast<std::size_t>(i)]);
  a.c2 = layout.add<T>(fine ? cells(0) * ch[0] : 0);
  // A residual stage's conv output (the only one that cannot be written in place).
  a.tmp = layout.add<T>(std::max({cells(1) * ch[1], cells(2) * ch[2], cells(3) * ch[3]}));
  for (int i = fine ? 0 : 1; i < 5; ++i) a.level[i] = layout.add<T>(cells(i) * D);
  a.total = layout.total();
  return a;
}

}  // namespace

template <class T>
struct CudaEncoder<T>::Impl {
  engine::ModelConfig config;
  cudaStream_t stream = nullptr;
  CudnnHandle cudnn;
  DeviceConv<T> stem, down4, res4, down8, res8, down16, res16a, res16b, down32, lat4, lat8, lat16, lat32;
  std::optional<DeviceConv<T>> fine2, lat2;  // the stride-2 level's side branch

  Program<T> single;   // encode()'s: one frame
  Program<T> batched;  // encode_batch()'s

  Impl(const engine::ModelConfig& cfg, const engine::Weights& w, cudaStream_t s);
  void build(Program<T>& p, int h, int w, int frames);
  void prepare(Program<T>& p, int h, int w, int frames);
  void run_steps(Program<T>& p) {
    for (const ConvStep<T>& s : p.steps) run_step(cudnn.get(), s, p.workspace.data(), p.workspace_bytes, stream);
  }
  void normalize(const Program<T>& p, const std::uint8_t* rgb, int frames) {
    const float scale = 1.f / (255.f * config.pixel_std), shift = -config.pixel_mean / config.pixel_std;
    kc::normalize_rgb(rgb, p.height * frames, p.width, scale, shift, p.input, stream);
  }
};

template <class T>
CudaEncoder<T>::Impl::Impl(const engine::ModelConfig& cfg, const engine::Weights& w, cudaStream_t s)
    : config(cfg),
      stream(s),
      stem(upload_conv<T>(w.stem, s)),
      down4(upload_conv<T>(w.down4, s)),
      res4(upload_conv<T>(w.res4, s)),
      down8(upload_conv<T>(w.down8, s)),
      res8(upload_conv<T>(w.res8, s)),
      down16(upload_conv<T>(w.down16, s)),
      res16a(upload_conv<T>(w.res16a, s)),
      res16b(upload_conv<T>(w.res16b, s)),
      down32(upload_conv<T>(w.down32, s)),
      lat4(upload_conv<T>(w.lat4, s)),
      lat8(upload_conv<T>(w.lat8, s)),
      lat16(upload_conv<T>(w.lat16, s)),
      lat32(upload_conv<T>(w.lat32, s)) {
  // The pyramid is strides 4, 8, 16, 32, with 2 first for the fine level.
  const int first_stride = config.fine_level() ? 2 : 4;
  bool strides_ok = config.levels() == (config.fine_level() ? 5 : 4) && config.levels() <= kc::kMaxLevels;
  for (int l = 0; strides_ok && l < config.levels(); ++l) {
    strides_ok = config.strides[static_cast<std::size_t>(l)] == first_stride << l;
  }
  if (!strides_ok) {
    throw std::invalid_argument("CudaEncoder: the encoder makes strides 4..32, and 2 with the fine level");
  }
  if (config.fine_level()) {
    fine2.emplace(upload_conv<T>(w.fine2, s));
    lat2.emplace(upload_conv<T>(w.lat2, s));
  }
  // Every cuDNN call of this encoder is enqueued on the session's stream.
  EDGETAP_CUDNN_CHECK(cudnnSetStream(cudnn.get(), stream));
}

// The program of CpuEncoder::encode, step for step, over `frames` frames at
// once: the backbone with its residual stages in place, the fine branch, then
// the top-down sums coarse to fine, each level written where the pyramid view
// points.
template <class T>
void CudaEncoder<T>::Impl::build(Program<T>& p, int H, int W, int frames) {
  const bool fine = config.fine_level();
  const int D = config.feat_dim;
  const int hs[5] = {H / 2, H / 4, H / 8, H / 16, H / 32}, ws[5] = {W / 2, W / 4, W / 8, W / 16, W / 32};
  const int first = fine ? 0 : 1;  // the finest pyramid level's index among strides 2..32

  const ArenaPlan at = plan_arena<T>(config, H, W, frames);
  p.arena.resize(at.total, stream);
  T* base = p.arena.data();
  p.input = base + at.input;
  T* x2 = base + at.backbone[0];
  T *c4 = base + at.backbone[1], *c8 = base + at.backbone[2], *c16 = base + at.backbone[3];
  T* c32 = base + at.backbone[4];
  T* c2 = base + at.c2;
  T* tmp = base + at.tmp;

  p.steps.clear();
  auto step = [&](const DeviceConv<T>& conv, const T* in, int level, T* acc, kc::ConvEpilogue<T> e) {
    // level: the input's index among strides 1 (the image), 2, ..., 32
    const int in_h = level == 0 ? H : hs[level - 1], in_w = level == 0 ? W : ws[level - 1];
    p.steps.push_back(plan_step(cudnn.get(), conv, in, in_h, in_w, frames, acc, e));
  };
  auto relu = [](const T* residual = nullptr, T* out = nullptr) {
    kc::ConvEpilogue<T> e;
    e.relu = true;
    e.residual = residual;
    e.out = out;
    return e;
  };
  // Backbone: x = relu(conv(x)); residual stages x = relu(x + res(x)).
  step(stem, p.input, 0, x2, relu());
  step(down4, x2, 1, c4, relu());
  step(res4, c4, 2, tmp, relu(c4, c4));
  step(down8, c4, 2, c8, relu());
  step(res8, c8, 3, tmp, relu(c8, c8));
  step(down16, c8, 3, c16, relu());
  step(res16a, c16, 4, tmp, relu(c16, c16));
  step(res16b, c16, 4, tmp, relu(c16, c16));
  step(down32, c16, 4, c32, relu());
  // The stride-2 side branch, off the backbone's path: relu(x2 + fine2(x2)).
  if (fine) step(*fine2, x2, 1, c2, relu(x2));

  // Top-down: f32 = lat32(c32); f_s = lat_s(c_s) + upsample2(f_2s), no ReLU.
  const DeviceConv<T>* lat[5] = {fine ? &*lat2 : nullptr, &lat4, &lat8, &lat16, &lat32};
  const T* src[5] = {c2, c4, c8, c16, c32};
  p.pyramid = kc::PyramidView<T>{};
  p.pyramid.levels = 5 - first;
  p.pyramid.channels = D;
  for (int i = 4; i >= first; --i) {
    T* level = base + at.level[i];
    kc::ConvEpilogue<T> e;
    if (i < 4) e.coarse = base + at.level[i + 1];
    step(*lat[i], src[i], i + 1, level, e);
    const int l = i - first;
    p.pyramid.level[l] = level;
    p.pyramid.height[l] = hs[i];
    p.pyramid.width[l] = ws[i];
    p.pyramid.stride[l] = static_cast<float>(config.strides[static_cast<std::size_t>(l)]);
  }

  p.workspace_bytes = 0;
  for (const ConvStep<T>& s : p.steps) p.workspace_bytes = std::max(p.workspace_bytes, s.workspace_bytes);
  p.workspace.resize(std::max<std::size_t>(p.workspace_bytes, 1), stream);
  p.height = H;
  p.width = W;
  p.frames = frames;
}

template <class T>
void CudaEncoder<T>::Impl::prepare(Program<T>& p, int height, int width, int frames) {
  if (p.made_for(height, width, frames)) return;
  // Every level must halve exactly down to stride 32 (as the CPU encoder assumes).
  const int multiple = std::max(config.size_multiple, 32);
  if (height <= 0 || width <= 0 || height % multiple != 0 || width % multiple != 0) {
    throw std::invalid_argument("CudaEncoder: frame " + std::to_string(width) + "x" + std::to_string(height) +
                                " is not a multiple of " + std::to_string(multiple));
  }
  if (frames < 1) throw std::invalid_argument("CudaEncoder: a batch of " + std::to_string(frames) + " frames");
  DeviceSetupSection setup;  // new buffers, cuDNN's heuristics and its first run of each algorithm
  p.height = p.width = p.frames = 0;  // nothing prepared should a step below throw
  build(p, height, width, frames);
  // One run on zeroed memory, waited for: cuDNN's first use of an algorithm
  // (module loading, any one-time set-up) happens here, outside the frame
  // path and outside any graph capture that follows.
  EDGETAP_CUDA_CHECK(cudaMemsetAsync(p.arena.data(), 0, p.arena.bytes(), stream));
  run_steps(p);
  EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Making and destroying the cuDNN handle, uploading and freeing the weights: set-up (device_setup.hpp).
template <class T>
CudaEncoder<T>::CudaEncoder(const engine::ModelConfig& config, const engine::Weights& weights, cudaStream_t stream) {
  DeviceSetupSection setup;
  impl_ = std::make_unique<Impl>(config, weights, stream);
}

template <class T>
CudaEncoder<T>::~CudaEncoder() {
  DeviceSetupSection setup;
  impl_.reset();
}

template <class T>
void CudaEncoder<T>::prepare(int height, int width) {
  impl_->prepare(impl_->single, height, width, 1);
}

template <class T>
kc::PyramidView<T> CudaEncoder<T>::encode(const std::uint8_t* rgb, int height, int width) {
  Impl& m = *impl_;
  m.prepare(m.single, height, width, 1);
  m.normalize(m.single, rgb, 1);
  m.run_steps(m.single);
  return m.single.pyramid;
}

template <class T>
std::size_t CudaEncoder<T>::frame_bytes(int height, int width) const {
  return plan_arena<T>(impl_->config, height, width, 1).total * sizeof(T);
}

template <class T>
void CudaEncoder<T>::prepare_batch(int height, int width, int frames) {
  impl_->prepare(impl_->batched, height, width, frames);
}

template <class T>
void CudaEncoder<T>::encode_batch(const std::uint8_t* rgb, int frames, int height, int width) {
  Impl& m = *impl_;
  if (!m.batched.made_for(height, width, m.batched.frames) || frames < 1 || frames > m.batched.frames) {
    throw std::logic_error("CudaEncoder: encode_batch of " + std::to_string(frames) + " frames of " +
                           std::to_string(width) + "x" + std::to_string(height) + " without prepare_batch for them");
  }
  m.normalize(m.batched, rgb, frames);
  m.run_steps(m.batched);
}

template <class T>
kc::PyramidView<T> CudaEncoder<T>::take_batched(const int* frame) {
  Impl& m = *impl_;
  if (!m.single.made_for(m.batched.height, m.batched.width, 1)) m.prepare(m.single, m.batched.height, m.batched.width, 1);
  kc::BatchedFrameCopy copy;
  const kc::PyramidView<T>& from = m.batched.pyramid;
  const kc::PyramidView<T>& to = m.single.pyramid;
  copy.maps = from.levels;
  for (int l = 0; l < from.levels; ++l) {
    const std::size_t bytes = static_cast<std::size_t>(from.height[l]) * from.width[l] * from.channels * sizeof(T);
    if (bytes % sizeof(uint4) != 0) throw std::logic_error("CudaEncoder: a pyramid level is not whole 16-byte words");
    copy.map[l].from = reinterpret_cast<const uint4*>(from.level[l]);
    copy.map[l].to = reinterpret_cast<uint4*>(const_cast<T*>(to.level[l]));  // the arena this encoder owns
    copy.map[l].vectors = static_cast<unsigned>(bytes / sizeof(uint4));
  }
  kc::copy_batched_frame(copy, frame, m.stream);
  return to;
}

template class CudaEncoder<float>;
template class CudaEncoder<__half>;

}  // namespace edgetap::gpu
