#include "edgetap/engine/template_alignment.hpp"

#include <algorithm>
#include <cmath>

namespace edgetap::engine {
namespace {

constexpr float kDeviationFloor = 1e-6f;  // added to a patch's deviation before dividing by it
constexpr float kNoContrast = 1e-3f;      // a template whose deviation is below this is not kept
constexpr double kDamping = 1e-3;         // Levenberg term: kDamping * (mean of the diagonal + 1)

struct PatchStats {
  double mean = 0, deviation = 0;  // the sample deviation (divides by n - 1)
};

PatchStats stats_of(const std::vector<float>& v) {
  PatchStats s;
  for (float x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  double ss = 0;
  for (float x : v) ss += (x - s.mean) * (x - s.mean);
  s.deviation = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return s;
}

// Solves the 6x6 symmetric positive definite system h d = b (Cholesky); false if it is not.
bool solve6(std::array<double, 36> h, std::array<double, 6> b, std::array<double, 6>& d) {
  for (int j = 0; j < 6; ++j) {
    double s = h[j * 6 + j];
    for (int k = 0; k < j; ++k) s -= h[j * 6 + k] * h[j * 6 + k];
    if (!(s > 0)) return false;
    h[j * 6 + j] = std::sqrt(s);
    for (int i = j + 1; i < 6; ++i) {
      double t = h[i * 6 + j];
      for (int k = 0; k < j; ++k) t -= h[i * 6 + k] * h[j * 6 + k];
      h[i * 6 + j] = t / h[j * 6 + j];
    }
  }
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= h[i * 6 + k] * b[k];
    b[i] /= h[i * 6 + i];
  }
  for (int i = 5; i >= 0; --i) {
    for (int k = i + 1; k < 6; ++k) b[i] -= h[k * 6 + i] * b[k];
    b[i] /= h[i * 6 + i];
  }
  d = b;
  return true;
}

// Grey values and gradients of the patch at p + A (ox, oy), offsets row by row.
struct WarpedPatch {
  std::vector<float> value, dx, dy;
};

void sample_patch(const GreyFrame& f, float x, float y, const AffineWarp& w, int r, WarpedPatch& out) {
  const std::size_t n = static_cast<std::size_t>(2 * r + 1) * static_cast<std::size_t>(2 * r + 1);
  out.value.resize(n);
  out.dx.resize(n);
  out.dy.resize(n);
  const float x_max = static_cast<float>(f.width - 1), y_max = static_cast<float>(f.height - 1);
  const float* px = f.interleaved.data();
  std::size_t k = 0;
  for (int iy = -r; iy <= r; ++iy) {
    const auto oy = static_cast<float>(iy);
    for (int ix = -r; ix <= r; ++ix, ++k) {
      const auto ox = static_cast<float>(ix);
      // bilinear, clamped to the frame: the same arithmetic as sample_clamped, three planes at once
      const float sx = std::clamp(x + w.a[0] * ox + w.a[1] * oy, 0.f, x_max);
      const float sy = std::clamp(y + w.a[2] * ox + w.a[3] * oy, 0.f, y_max);
      const int x0 = std::min(static_cast<int>(sx), f.width - 1), y0 = std::min(static_cast<int>(sy), f.height - 1);
      const int x1 = std::min(x0 + 1, f.width - 1), y1 = std::min(y0 + 1, f.height - 1);
      const float fx = sx - static_cast<float>(x0), fy = sy - static_cast<float>(y0);
      const float w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx;
      const float* a = px + 3 * (static_cast<std::size_t>(y0) * f.width + x0);
      const float* b = px + 3 * (static_cast<std::size_t>(y0) * f.width + x1);
      const float* c = px + 3 * (static_cast<std::size_t>(y1) * f.width + x0);
      const float* d = px + 3 * (static_cast<std::size_t>(y1) * f.width + x1);
      out.value[k] = w00 * a[0] + w01 * b[0] + w10 * c[0] + w11 * d[0];
      out.dx[k] = w00 * a[1] + w01 * b[1] + w10 * c[1] + w11 * d[1];
      out.dy[k] = w00 * a[2] + w01 * b[2] + w10 * c[2] + w11 * d[2];
    }
  }
}

// The normalized correlation of the patch at (x, y, w) with the template.
float ncc_at(const GreyFrame& f, const std::vector<float>& tmpl, float x, float y, const AffineWarp& w, int r,
             WarpedPatch& scratch) {
  sample_patch(f, x, y, w, r, scratch);
  const PatchStats s = stats_of(scratch.value);
  const double inv = 1.0 / (s.deviation + kDeviationFloor);
  double sum = 0;
  for (std::size_t k = 0; k < tmpl.size(); ++k) sum += (scratch.value[k] - s.mean) * inv * tmpl[k];
  return static_cast<float>(sum / static_cast<double>(tmpl.size() - 1));
}

}  // namespace

GreyFrame grey_frame(const ImageView& frame) {
  GreyFrame g;
  g.width = frame.width;
  g.height = frame.height;
  const std::size_t n = static_cast<std::size_t>(frame.width) * static_cast<std::size_t>(frame.height);
  g.grey.resize(n);
  g.dx.assign(n, 0.f);
  g.dy.assign(n, 0.f);
  for (int y = 0; y < frame.height; ++y) {
    const std::uint8_t* row = frame.row(y);
    for (int x = 0; x < frame.width; ++x) {
      g.grey[static_cast<std::size_t>(y) * frame.width + x] =
          0.299f * row[3 * x] + 0.587f * row[3 * x + 1] + 0.114f * row[3 * x + 2];
    }
  }
  const int W = frame.width;
  for (int y = 0; y < frame.height; ++y) {
    for (int x = 1; x + 1 < W; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * W + x;
      g.dx[i] = 0.5f * (g.grey[i + 1] - g.grey[i - 1]);
    }
  }
  for (int y = 1; y + 1 < frame.height; ++y) {
    for (int x = 0; x < W; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * W + x;
      g.dy[i] = 0.5f * (g.grey[i + W] - g.grey[i - W]);
    }
  }
  g.interleaved.resize(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    g.interleaved[3 * i] = g.grey[i];
    g.interleaved[3 * i + 1] = g.dx[i];
    g.interleaved[3 * i + 2] = g.dy[i];
  }
  return g;
}

float sample_clamped(const std::vector<float>& plane, int width, int height, float x, float y) noexcept {
  x = std::clamp(x, 0.f, static_cast<float>(width - 1));
  y = std::clamp(y, 0.f, static_cast<float>(height - 1));
  const int x0 = std::min(static_cast<int>(x), width - 1), y0 = std::min(static_cast<int>(y), height - 1);
  const int x1 = std::min(x0 + 1, width - 1), y1 = std::min(y0 + 1, height - 1);
  const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
  const auto at = [&](int xx, int yy) { return plane[static_cast<std::size_t>(yy) * width + xx]; };
  return (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x1, y0)) + fy * ((1 - fx) * at(x0, y1) + fx * at(x1, y1));
}

std::vector<float> capture_template(const GreyFrame& frame, float x, float y, const TemplateAlignmentConfig& config) {
  WarpedPatch patch;
  sample_patch(frame, x, y, AffineWarp{}, config.radius, patch);
  const PatchStats s = stats_of(patch.value);
  if (!(s.deviation >= kNoContrast)) return {};
  const double inv = 1.0 / (s.deviation + kDeviationFloor);
  std::vector<float> t(patch.value.size());
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = static_cast<float>((patch.value[k] - s.mean) * inv);
  return t;
}

AlignmentResult align_template(const GreyFrame& frame, const std::vector<float>& tmpl, float x0, float y0,
                               const AffineWarp& start, const TemplateAlignmentConfig& config) {
  AlignmentResult out;
  out.x = x0;
  out.y = y0;
  out.warp = start;
  const int r = config.radius;
  if (tmpl.size() != static_cast<std::size_t>(config.cells())) return out;
  float x = x0, y = y0;
  AffineWarp w = start;
  WarpedPatch p;
  for (int it = 0; it < config.iters; ++it) {
    sample_patch(frame, x, y, w, r, p);
    const PatchStats s = stats_of(p.value);
    double gx_mean = 0, gy_mean = 0;
    for (std::size_t k = 0; k < p.dx.size(); ++k) {
      gx_mean += p.dx[k];
      gy_mean += p.dy[k];
    }
    gx_mean /= static_cast<double>(p.dx.size());
    gy_mean /= static_cast<double>(p.dy.size());
    const double inv = 1.0 / (s.deviation + kDeviationFloor);
    // J^T J and J^T r in float (361 terms of similar size; the solve is in double)
    std::array<float, 21> hf{};
    std::array<float, 6> bf{};
    const auto fmx = static_cast<float>(gx_mean), fmy = static_cast<float>(gy_mean);
    const auto finv = static_cast<float>(inv), fmean = static_cast<float>(s.mean);
    std::size_t k = 0;
    for (int oy = -r; oy <= r; ++oy) {
      const auto fy = static_cast<float>(oy);
      for (int ox = -r; ox <= r; ++ox, ++k) {
        const auto fx = static_cast<float>(ox);
        const float gx = (p.dx[k] - fmx) * finv, gy = (p.dy[k] - fmy) * finv;
        const float residual = tmpl[k] - (p.value[k] - fmean) * finv;
        const float j[6] = {gx * fx, gx * fy, gy * fx, gy * fy, gx, gy};
        int e = 0;
        for (int m = 0; m < 6; ++m) {
          bf[static_cast<std::size_t>(m)] += j[m] * residual;
          for (int q = 0; q <= m; ++q) hf[static_cast<std::size_t>(e++)] += j[m] * j[q];
        }
      }
    }
    std::array<double, 36> h{};
    std::array<double, 6> b{};
    for (int m = 0, e = 0; m < 6; ++m) {
      b[static_cast<std::size_t>(m)] = bf[static_cast<std::size_t>(m)];
      for (int q = 0; q <= m; ++q) h[static_cast<std::size_t>(m * 6 + q)] = hf[static_cast<std::size_t>(e++)];
    }
    double diag = 0;
    for (int m = 0; m < 6; ++m) diag += h[m * 6 + m];
    const double damping = kDamping * (diag / 6 + 1);
    for (int m = 0; m < 6; ++m) {
      h[m * 6 + m] += damping;
      for (int n = 0; n < m; ++n) h[n * 6 + m] = h[m * 6 + n];
    }
    std::array<double, 6> d{};
    if (!solve6(h, b, d)) return out;
    for (int m = 0; m < 4; ++m) w.a[static_cast<std::size_t>(m)] += static_cast<float>(d[m]);
    x += static_cast<float>(d[4]);
    y += static_cast<float>(d[5]);
  }
  out.warp = w;
  out.ncc = ncc_at(frame, tmpl, x, y, w, r, p);
  const float shift = std::hypot(x - x0, y - y0);
  if (std::isfinite(x) && std::isfinite(y) && out.ncc > config.min_ncc && shift < config.max_shift) {
    out.accepted = true;
    out.x = x;
    out.y = y;
  }
  return out;
}

}  // namespace edgetap::engine
