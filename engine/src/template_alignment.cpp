#include "edgetap/engine/template_alignment.hpp"

#include <algorithm>
#include <cmath>

namespace edgetap::engine {
namespace {

constexpr float kDeviationFloor = 1e-6f;  // added to a patch's deviation before dividing by it
constexpr float kNoContrast = 1e-3f;      // a template whose deviation is below this is not kept
constexpr double kDamping = 1e-3;         // Levenberg term: kDamping * (mean of the diagonal + 1)
constexpr int kLanes = 8;  // values summed side by side: independent sums the compiler vectorizes

struct PatchStats {
  double mean = 0, deviation = 0;  // the sample deviation (divides by n - 1)
};

PatchStats stats_of(const std::vector<float>& v) {
  // float sums, kLanes side by side; totals in double
  const std::size_t n = v.size(), full = n / kLanes * kLanes;
  float lane[kLanes] = {};
  for (std::size_t i = 0; i < full; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] += v[i + static_cast<std::size_t>(l)];
  }
  PatchStats s;
  for (float x : lane) s.mean += x;
  for (std::size_t i = full; i < n; ++i) s.mean += v[i];
  s.mean /= static_cast<double>(n);
  const auto m = static_cast<float>(s.mean);
  float sq[kLanes] = {};
  for (std::size_t i = 0; i < full; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float d = v[i + static_cast<std::size_t>(l)] - m;
      sq[l] += d * d;
    }
  }
  double ss = 0;
  for (float x : sq) ss += x;
  for (std::size_t i = full; i < n; ++i) ss += (v[i] - m) * (v[i] - m);
  s.deviation = std::sqrt(ss / static_cast<double>(n - 1));
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

// The four neighbours of (x, y) (pointers to their grey channel in f.planes; the other
// channels follow each) and their bilinear weights. `inside`: (x, y) lies in
// [0, width - 1) x [0, height - 1), so nothing needs clamping.
struct Bilinear {
  const float *a, *b, *c, *d;  // (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1), clamped to the frame
  float w00, w01, w10, w11;
  [[gnu::always_inline]] float blend(int channel) const noexcept {
    return w00 * a[channel] + w01 * b[channel] + w10 * c[channel] + w11 * d[channel];
  }
};

[[gnu::always_inline]] inline Bilinear bilinear(const GreyFrame& f, float x, float y, bool inside) noexcept {
  std::size_t step_x = 3, step_y = 3 * static_cast<std::size_t>(f.width);
  int x0, y0;
  if (inside) {
    x0 = static_cast<int>(x);
    y0 = static_cast<int>(y);
  } else {
    x = std::clamp(x, 0.f, static_cast<float>(f.width - 1));
    y = std::clamp(y, 0.f, static_cast<float>(f.height - 1));
    x0 = std::min(static_cast<int>(x), f.width - 1);
    y0 = std::min(static_cast<int>(y), f.height - 1);
    if (x0 + 1 > f.width - 1) step_x = 0;
    if (y0 + 1 > f.height - 1) step_y = 0;
  }
  const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
  const float* a = f.planes.data() + 3 * (static_cast<std::size_t>(y0) * f.width + x0);
  return {a, a + step_x, a + step_y, a + step_y + step_x, (1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx};
}

void sample_patch(const GreyFrame& f, float x, float y, const AffineWarp& w, int r, WarpedPatch& out) {
  const std::size_t n = static_cast<std::size_t>(2 * r + 1) * static_cast<std::size_t>(2 * r + 1);
  out.value.resize(n);
  out.dx.resize(n);
  out.dy.resize(n);
  // The patch's corners bound it (the warp is affine): strictly inside the last pixel centre, no
  // sample needs clamping and every neighbour (x0 + 1, y0 + 1) exists.
  const auto rf = static_cast<float>(r);
  const float ex = rf * (std::abs(w.a[0]) + std::abs(w.a[1])), ey = rf * (std::abs(w.a[2]) + std::abs(w.a[3]));
  const bool inside = x - ex >= 0.f && x + ex < static_cast<float>(f.width - 1) && y - ey >= 0.f &&
                      y + ey < static_cast<float>(f.height - 1);
  std::size_t k = 0;
  for (int iy = -r; iy <= r; ++iy) {
    const auto oy = static_cast<float>(iy);
    for (int ix = -r; ix <= r; ++ix, ++k) {
      const auto ox = static_cast<float>(ix);
      const Bilinear s = bilinear(f, x + w.a[0] * ox + w.a[1] * oy, y + w.a[2] * ox + w.a[3] * oy, inside);
      out.value[k] = s.blend(GreyFrame::kGrey);
      out.dx[k] = s.blend(GreyFrame::kDx);
      out.dy[k] = s.blend(GreyFrame::kDy);
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

// The Gauss-Newton system of one step: h = J^T J (lower triangle filled) and b = J^T r, with
// J = [gx ox, gx oy, gy ox, gy oy, gx, gy] the normalized patch's derivatives by the warp's
// (a11, a12, a21, a22, x, y) and r the template minus the normalized patch. Accumulated in float
// as 24 moments (gx^2, gx gy, gy^2 times 1, ox, oy, ox^2, ox oy, oy^2; gx r, gy r times 1, ox, oy),
// kLanes pixels at a time.
void normal_equations(const WarpedPatch& p, const std::vector<float>& tmpl, int r, float gx_mean, float gy_mean,
                      float mean, float inv, std::array<double, 36>& h, std::array<double, 6>& b) {
  const int n = 2 * r + 1, cells = n * n;
  float acc[24][kLanes] = {};
  for (int k0 = 0; k0 < cells; k0 += kLanes) {
    float gx[kLanes], gy[kLanes], res[kLanes], ox[kLanes], oy[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const int k = k0 + l;
      const bool in = k < cells;
      const auto kk = static_cast<std::size_t>(in ? k : 0);
      gx[l] = in ? (p.dx[kk] - gx_mean) * inv : 0.f;
      gy[l] = in ? (p.dy[kk] - gy_mean) * inv : 0.f;
      res[l] = in ? tmpl[kk] - (p.value[kk] - mean) * inv : 0.f;
      ox[l] = static_cast<float>(k % n - r);
      oy[l] = static_cast<float>(k / n - r);
    }
    float w[3][kLanes], rr[2][kLanes], uv[6][kLanes];  // gx^2, gx gy, gy^2; gx r, gy r; 1, u, v, uu, uv, vv
    for (int l = 0; l < kLanes; ++l) {
      w[0][l] = gx[l] * gx[l];
      w[1][l] = gx[l] * gy[l];
      w[2][l] = gy[l] * gy[l];
      rr[0][l] = gx[l] * res[l];
      rr[1][l] = gy[l] * res[l];
      uv[0][l] = 1.f;
      uv[1][l] = ox[l];
      uv[2][l] = oy[l];
      uv[3][l] = ox[l] * ox[l];
      uv[4][l] = ox[l] * oy[l];
      uv[5][l] = oy[l] * oy[l];
    }
    for (int a = 0; a < 3; ++a) {
      for (int m = 0; m < 6; ++m) {
        for (int l = 0; l < kLanes; ++l) acc[6 * a + m][l] += w[a][l] * uv[m][l];
      }
    }
    for (int a = 0; a < 2; ++a) {
      for (int m = 0; m < 3; ++m) {
        for (int l = 0; l < kLanes; ++l) acc[18 + 3 * a + m][l] += rr[a][l] * uv[m][l];
      }
    }
  }
  double sum[24];
  for (int q = 0; q < 24; ++q) {
    sum[q] = 0;
    for (int l = 0; l < kLanes; ++l) sum[q] += acc[q][l];
  }
  // moments: 0-5 gx^2 (1, u, v, uu, uv, vv), 6-11 gx gy, 12-17 gy^2, 18-20 gx r (1, u, v), 21-23 gy r
  enum { ONE = 0, U = 1, V = 2, UU = 3, UV = 4, VV = 5 };
  const auto XX = [&](int i) { return sum[i]; };
  const auto XY = [&](int i) { return sum[6 + i]; };
  const auto YY = [&](int i) { return sum[12 + i]; };
  const auto at = [&](int row, int col) -> double& { return h[static_cast<std::size_t>(row * 6 + col)]; };
  at(0, 0) = XX(UU);
  at(1, 0) = XX(UV), at(1, 1) = XX(VV);
  at(2, 0) = XY(UU), at(2, 1) = XY(UV), at(2, 2) = YY(UU);
  at(3, 0) = XY(UV), at(3, 1) = XY(VV), at(3, 2) = YY(UV), at(3, 3) = YY(VV);
  at(4, 0) = XX(U), at(4, 1) = XX(V), at(4, 2) = XY(U), at(4, 3) = XY(V), at(4, 4) = XX(ONE);
  at(5, 0) = XY(U), at(5, 1) = XY(V), at(5, 2) = YY(U), at(5, 3) = YY(V), at(5, 4) = XY(ONE), at(5, 5) = YY(ONE);
  b = {sum[19], sum[20], sum[22], sum[23], sum[18], sum[21]};
}

}  // namespace

GreyFrame grey_frame(const ImageView& frame) {
  GreyFrame g;
  g.width = frame.width;
  g.height = frame.height;
  const int W = frame.width;
  g.planes.assign(3 * static_cast<std::size_t>(W) * static_cast<std::size_t>(frame.height), 0.f);
  float* p = g.planes.data();
  for (int y = 0; y < frame.height; ++y) {
    const std::uint8_t* row = frame.row(y);
    for (int x = 0; x < W; ++x) {
      p[3 * (static_cast<std::size_t>(y) * W + x)] = 0.299f * row[3 * x] + 0.587f * row[3 * x + 1] + 0.114f * row[3 * x + 2];
    }
  }
  const std::size_t row_step = 3 * static_cast<std::size_t>(W);
  for (int y = 0; y < frame.height; ++y) {
    for (int x = 0; x < W; ++x) {
      const std::size_t i = 3 * (static_cast<std::size_t>(y) * W + x);
      if (x > 0 && x + 1 < W) p[i + GreyFrame::kDx] = 0.5f * (p[i + 3] - p[i - 3]);
      if (y > 0 && y + 1 < frame.height) p[i + GreyFrame::kDy] = 0.5f * (p[i + row_step] - p[i - row_step]);
    }
  }
  return g;
}

float sample_clamped(const GreyFrame& frame, GreyFrame::Channel c, float x, float y) noexcept {
  return bilinear(frame, x, y, false).blend(c);
}

std::vector<float> capture_template(const GreyFrame& frame, float x, float y, const TemplateAlignmentConfig& config) {
  if (frame.width <= 0 || frame.height <= 0 || !std::isfinite(x) || !std::isfinite(y)) return {};
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
  if (tmpl.size() != static_cast<std::size_t>(config.cells()) || frame.width <= 0 || frame.height <= 0 ||
      !std::isfinite(x0) || !std::isfinite(y0)) {
    return out;
  }
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
    std::array<double, 36> h{};
    std::array<double, 6> b{};
    normal_equations(p, tmpl, r, static_cast<float>(gx_mean), static_cast<float>(gy_mean),
                     static_cast<float>(s.mean), static_cast<float>(inv), h, b);
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
