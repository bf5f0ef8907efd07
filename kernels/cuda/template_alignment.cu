// Template alignment kernels (template_alignment.hpp). The arithmetic follows
// engine/src/template_alignment.cpp step by step. Where it differs, the parity
// tests bound the difference: sums are float over the warp's lanes; a patch's
// mean and deviation come from sums shifted by its centre's grey level (one
// pass instead of two); the 6x6 system is solved in float after scaling it to
// a unit diagonal (Cholesky, as the reference's double one).
#include "device_common.cuh"
#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/template_alignment.hpp"

namespace edgetap::kernels::cuda {
namespace {

using detail::kWarp;

constexpr int kWarpsPerBlock = 4;         // one track per warp
constexpr float kDeviationFloor = 1e-6f;  // as the reference's constants
constexpr float kNoContrast = 1e-3f;
constexpr float kDamping = 1e-3f;

struct Frame {
  const float4* px;
  int width, height;
};

__device__ __forceinline__ float warp_sum(float v) { return detail::warp_reduce(v, detail::Sum{}); }

// All four channels at (x, y), bilinear, coordinates clamped to the frame
// (the border value beyond it); a coordinate that is not a number reads 0.
__device__ __forceinline__ float4 sample(const Frame& f, float x, float y) {
  x = fminf(fmaxf(x, 0.f), static_cast<float>(f.width - 1));
  y = fminf(fmaxf(y, 0.f), static_cast<float>(f.height - 1));
  const int x0 = min(static_cast<int>(x), f.width - 1), y0 = min(static_cast<int>(y), f.height - 1);
  const int x1 = min(x0 + 1, f.width - 1), y1 = min(y0 + 1, f.height - 1);
  const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
  const float4 a = __ldg(f.px + y0 * f.width + x0), b = __ldg(f.px + y0 * f.width + x1);
  const float4 c = __ldg(f.px + y1 * f.width + x0), d = __ldg(f.px + y1 * f.width + x1);
  const float w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx;
  return {w00 * a.x + w01 * b.x + w10 * c.x + w11 * d.x, w00 * a.y + w01 * b.y + w10 * c.y + w11 * d.y,
          w00 * a.z + w01 * b.z + w10 * c.z + w11 * d.z, 0.f};
}

// A patch: its centre, warp (row-major 2x2) and radius; cell k is the offset
// (k % n - r, k / n - r), n = 2 r + 1, row by row as the reference's.
struct Patch {
  float x, y;
  float a[4];
  int r;
  __device__ int cells() const { return (2 * r + 1) * (2 * r + 1); }
  __device__ float ox(int k) const { return static_cast<float>(k % (2 * r + 1) - r); }
  __device__ float oy(int k) const { return static_cast<float>(k / (2 * r + 1) - r); }
  __device__ float4 at(const Frame& f, int k) const {
    const float u = ox(k), v = oy(k);
    return sample(f, x + a[0] * u + a[1] * v, y + a[2] * u + a[3] * v);
  }
};

// The sample deviation of n values from their sum s and sum of squares ss,
// both taken about the same shift.
__device__ __forceinline__ float deviation_of(float s, float ss, float n) {
  return sqrtf(fmaxf((ss - s * s / n) / (n - 1), 0.f));
}

struct PatchStats {
  float mean, deviation, inv;  // inv = 1 / (deviation + floor)
  float gx_mean, gy_mean;
};

// The patch's grey mean and sample deviation and its gradients' means, in
// every lane. The sums are shifted by the centre's grey level, which lies
// within the patch's range, so that the deviation keeps its precision.
__device__ PatchStats patch_stats(const Frame& f, const Patch& p, int lane) {
  const float shift = sample(f, p.x, p.y).x;
  const int n = p.cells();
  float s = 0, ss = 0, sx = 0, sy = 0;
  for (int k = lane; k < n; k += kWarp) {
    const float4 v = p.at(f, k);
    const float d = v.x - shift;
    s += d;
    ss += d * d;
    sx += v.y;
    sy += v.z;
  }
  s = warp_sum(s), ss = warp_sum(ss), sx = warp_sum(sx), sy = warp_sum(sy);
  const float count = static_cast<float>(n);
  PatchStats st;
  st.mean = shift + s / count;
  st.deviation = deviation_of(s, ss, count);
  st.inv = 1.f / (st.deviation + kDeviationFloor);
  st.gx_mean = sx / count;
  st.gy_mean = sy / count;
  return st;
}

// Solves the 6x6 symmetric system h d = b (h full), scaled to a unit diagonal
// first; false where it is not positive definite.
__device__ bool solve6(float (&h)[36], float (&b)[6], float (&d)[6]) {
  float scale[6];
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    if (!(h[i * 6 + i] > 0.f)) return false;
    scale[i] = 1.f / sqrtf(h[i * 6 + i]);
  }
#pragma unroll
  for (int i = 0; i < 6; ++i) {
#pragma unroll
    for (int j = 0; j < 6; ++j) h[i * 6 + j] *= scale[i] * scale[j];
    b[i] *= scale[i];
  }
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    float s = h[j * 6 + j];
#pragma unroll
    for (int k = 0; k < j; ++k) s -= h[j * 6 + k] * h[j * 6 + k];
    if (!(s > 0.f)) return false;
    h[j * 6 + j] = sqrtf(s);
#pragma unroll
    for (int i = j + 1; i < 6; ++i) {
      float t = h[i * 6 + j];
#pragma unroll
      for (int k = 0; k < j; ++k) t -= h[i * 6 + k] * h[j * 6 + k];
      h[i * 6 + j] = t / h[j * 6 + j];
    }
  }
#pragma unroll
  for (int i = 0; i < 6; ++i) {
#pragma unroll
    for (int k = 0; k < i; ++k) b[i] -= h[i * 6 + k] * b[k];
    b[i] /= h[i * 6 + i];
  }
#pragma unroll
  for (int i = 5; i >= 0; --i) {
#pragma unroll
    for (int k = i + 1; k < 6; ++k) b[i] -= h[k * 6 + i] * b[k];
    b[i] /= h[i * 6 + i];
  }
#pragma unroll
  for (int i = 0; i < 6; ++i) d[i] = b[i] * scale[i];
  return true;
}

// One Gauss-Newton step's update (a11, a12, a21, a22, x, y) of the patch
// against the template, as the reference's normal_equations and solve6: the
// 24 moments (gx^2, gx gy, gy^2 times 1, u, v, uu, uv, vv; gx r, gy r times 1,
// u, v) of the normalized gradients gx, gy and the residual r, summed over the
// warp. False where the system cannot be solved.
__device__ bool gauss_newton_step(const Frame& f, const Patch& p, const float* tmpl, int lane, float (&d)[6]) {
  const PatchStats st = patch_stats(f, p, lane);
  float m[24];
#pragma unroll
  for (int q = 0; q < 24; ++q) m[q] = 0.f;
  const int n = p.cells();
  for (int k = lane; k < n; k += kWarp) {
    const float4 v = p.at(f, k);
    const float gx = (v.y - st.gx_mean) * st.inv, gy = (v.z - st.gy_mean) * st.inv;
    const float res = __ldg(tmpl + k) - (v.x - st.mean) * st.inv;
    const float u = p.ox(k), w = p.oy(k);
    const float uv[6] = {1.f, u, w, u * u, u * w, w * w};
    const float g[3] = {gx * gx, gx * gy, gy * gy}, r[2] = {gx * res, gy * res};
#pragma unroll
    for (int a = 0; a < 3; ++a) {
#pragma unroll
      for (int c = 0; c < 6; ++c) m[6 * a + c] += g[a] * uv[c];
    }
#pragma unroll
    for (int a = 0; a < 2; ++a) {
#pragma unroll
      for (int c = 0; c < 3; ++c) m[18 + 3 * a + c] += r[a] * uv[c];
    }
  }
#pragma unroll
  for (int q = 0; q < 24; ++q) m[q] = warp_sum(m[q]);
  enum { ONE = 0, U = 1, V = 2, UU = 3, UV = 4, VV = 5, XX = 0, XY = 6, YY = 12 };
  float h[36];
  h[0] = m[XX + UU];
  h[6] = m[XX + UV], h[7] = m[XX + VV];
  h[12] = m[XY + UU], h[13] = m[XY + UV], h[14] = m[YY + UU];
  h[18] = m[XY + UV], h[19] = m[XY + VV], h[20] = m[YY + UV], h[21] = m[YY + VV];
  h[24] = m[XX + U], h[25] = m[XX + V], h[26] = m[XY + U], h[27] = m[XY + V], h[28] = m[XX + ONE];
  h[30] = m[XY + U], h[31] = m[XY + V], h[32] = m[YY + U], h[33] = m[YY + V], h[34] = m[XY + ONE], h[35] = m[YY + ONE];
  float b[6] = {m[19], m[20], m[22], m[23], m[18], m[21]};
  float diag = 0.f;
#pragma unroll
  for (int i = 0; i < 6; ++i) diag += h[i * 6 + i];
  const float damping = kDamping * (diag / 6 + 1);
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    h[i * 6 + i] += damping;
#pragma unroll
    for (int j = 0; j < i; ++j) h[j * 6 + i] = h[i * 6 + j];
  }
  return solve6(h, b, d);
}

// The normalized correlation of the patch with the template (divided by n - 1).
__device__ float ncc(const Frame& f, const Patch& p, const float* tmpl, int lane) {
  const float shift = sample(f, p.x, p.y).x;
  const int n = p.cells();
  float s = 0, ss = 0, st = 0, sdt = 0;
  for (int k = lane; k < n; k += kWarp) {
    const float d = p.at(f, k).x - shift, t = __ldg(tmpl + k);
    s += d;
    ss += d * d;
    st += t;
    sdt += d * t;
  }
  s = warp_sum(s), ss = warp_sum(ss), st = warp_sum(st), sdt = warp_sum(sdt);
  const float count = static_cast<float>(n);
  const float deviation = deviation_of(s, ss, count);
  // sum (v - mean) t = sum (v - shift) t - (mean - shift) sum t
  return (sdt - s / count * st) / (deviation + kDeviationFloor) / (count - 1);
}

__global__ void grey_frame_kernel(const std::uint8_t* rgb, int width, int height, std::size_t stride, float4* grey) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  // 0.299 R + 0.587 G + 0.114 B, rounded as the reference's float expression (no fused multiply-add)
  const auto level = [&](int u, int v) {
    const std::uint8_t* p = rgb + static_cast<std::size_t>(v) * stride + 3 * static_cast<std::size_t>(u);
    return __fadd_rn(__fadd_rn(__fmul_rn(0.299f, p[0]), __fmul_rn(0.587f, p[1])), __fmul_rn(0.114f, p[2]));
  };
  float4 out{level(x, y), 0.f, 0.f, 0.f};
  if (x > 0 && x + 1 < width) out.y = 0.5f * __fsub_rn(level(x + 1, y), level(x - 1, y));
  if (y > 0 && y + 1 < height) out.z = 0.5f * __fsub_rn(level(x, y + 1), level(x, y - 1));
  grey[static_cast<std::size_t>(y) * width + x] = out;
}

__global__ void capture_kernel(Frame f, const float2* points, const int* slots, int count, int radius,
                               float* templates, int* has_template) {
  const int i = blockIdx.x * kWarpsPerBlock + static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  if (i >= count) return;  // the whole warp
  const float2 q = points[i];
  if (!isfinite(q.x) || !isfinite(q.y)) {
    if (lane == 0) has_template[i] = 0;
    return;
  }
  const Patch p{q.x, q.y, {1.f, 0.f, 0.f, 1.f}, radius};
  const PatchStats st = patch_stats(f, p, lane);
  const bool contrast = st.deviation >= kNoContrast;
  if (lane == 0) has_template[i] = contrast ? 1 : 0;
  if (!contrast) return;
  const int n = p.cells();
  float* row = templates + static_cast<std::size_t>(slots[i]) * n;
  for (int k = lane; k < n; k += kWarp) row[k] = (p.at(f, k).x - st.mean) * st.inv;
}

__global__ void align_kernel(Frame f, const float* templates, const AlignmentTask* tasks, int count,
                             AlignmentSettings settings, AlignmentOutcome* outcomes) {
  const int i = blockIdx.x * kWarpsPerBlock + static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  if (i >= count) return;  // the whole warp
  const AlignmentTask task = tasks[i];
  AlignmentOutcome out{task.x, task.y, 0.f, 0, {task.warp[0], task.warp[1], task.warp[2], task.warp[3]}};
  if (!isfinite(task.x) || !isfinite(task.y)) {
    if (lane == 0) outcomes[i] = out;
    return;
  }
  Patch p{task.x, task.y, {task.warp[0], task.warp[1], task.warp[2], task.warp[3]}, settings.radius};
  const float* tmpl = templates + static_cast<std::size_t>(task.slot) * p.cells();
  for (int it = 0; it < settings.iters; ++it) {
    float d[6];
    if (!gauss_newton_step(f, p, tmpl, lane, d)) {  // every lane alike: the sums are the warp's
      if (lane == 0) outcomes[i] = out;
      return;
    }
#pragma unroll
    for (int m = 0; m < 4; ++m) p.a[m] += d[m];
    p.x += d[4];
    p.y += d[5];
  }
  const float score = ncc(f, p, tmpl, lane);
  if (lane != 0) return;
#pragma unroll
  for (int m = 0; m < 4; ++m) out.warp[m] = p.a[m];
  out.ncc = score;
  const float shift = hypotf(p.x - task.x, p.y - task.y);
  if (isfinite(p.x) && isfinite(p.y) && score > settings.min_ncc && shift < settings.max_shift) {
    out.accepted = 1;
    out.x = p.x;
    out.y = p.y;
  }
  outcomes[i] = out;
}

}  // namespace

void grey_frame(const std::uint8_t* rgb, int width, int height, std::size_t stride, float4* grey, cudaStream_t stream) {
  if (width <= 0 || height <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  grey_frame_kernel<<<grid, block, 0, stream>>>(rgb, width, height, stride, grey);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void capture_templates(const float4* grey, int width, int height, const float2* points, const int* slots, int count,
                       int radius, float* templates, int* has_template, cudaStream_t stream) {
  if (count <= 0) return;
  capture_kernel<<<detail::blocks_of(count, kWarpsPerBlock), kWarpsPerBlock * kWarp, 0, stream>>>(
      Frame{grey, width, height}, points, slots, count, radius, templates, has_template);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void align_templates(const float4* grey, int width, int height, const float* templates, const AlignmentTask* tasks,
                     int count, const AlignmentSettings& settings, AlignmentOutcome* outcomes, cudaStream_t stream) {
  if (count <= 0) return;
  align_kernel<<<detail::blocks_of(count, kWarpsPerBlock), kWarpsPerBlock * kWarp, 0, stream>>>(
      Frame{grey, width, height}, templates, tasks, count, settings, outcomes);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace edgetap::kernels::cuda
