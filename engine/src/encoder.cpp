#include "edgetap/engine/encoder.hpp"

#include "edgetap/kernels/cpu.hpp"

namespace edgetap::engine {

namespace k = edgetap::kernels::cpu;

void CpuEncoder::conv(const Conv& c, const std::vector<float>& in, int H, int W, std::vector<float>& out) {
  const int Ho = (H + c.stride - 1) / c.stride, Wo = (W + c.stride - 1) / c.stride;
  out.resize(static_cast<std::size_t>(Ho) * Wo * c.cout);
  const std::size_t need = k::conv2d_scratch_floats(H, W, c.cin, c.k, c.stride);
  if (scratch_.size() < need) scratch_.resize(need);
  k::conv2d_hwc(in.data(), H, W, c.cin, c.weight.data(), c.bias.data(), c.cout, c.k, c.stride, out.data(),
                scratch_.data());
}

void CpuEncoder::encode(const ImageView& frame, Pyramid& out) {
  const int H = frame.height, W = frame.width;
  input_.resize(static_cast<std::size_t>(H) * W * 3);
  const float scale = 1.f / (255.f * config_.pixel_std), shift = -config_.pixel_mean / config_.pixel_std;
  for (int y = 0; y < H; ++y) {
    const std::uint8_t* row = frame.row(y);
    float* dst = input_.data() + static_cast<std::size_t>(y) * W * 3;
    for (int i = 0; i < W * 3; ++i) dst[i] = static_cast<float>(row[i]) * scale + shift;
  }
  const Weights& w = weights_;
  // Residual stage: x = relu(x + res(x)).
  auto residual = [&](const Conv& res, std::vector<float>& x, int h, int wd) {
    conv(res, x, h, wd, tmp_);
    k::relu_inplace(x.data(), x.size(), tmp_.data());
  };
  conv(w.stem, input_, H, W, x2_);
  k::relu_inplace(x2_.data(), x2_.size());
  const int H4 = H / 4, W4 = W / 4, H8 = H / 8, W8 = W / 8, H16 = H / 16, W16 = W / 16, H32 = H / 32, W32 = W / 32;
  conv(w.down4, x2_, H / 2, W / 2, c4_);
  k::relu_inplace(c4_.data(), c4_.size());
  residual(w.res4, c4_, H4, W4);
  conv(w.down8, c4_, H4, W4, c8_);
  k::relu_inplace(c8_.data(), c8_.size());
  residual(w.res8, c8_, H8, W8);
  conv(w.down16, c8_, H8, W8, c16_);
  k::relu_inplace(c16_.data(), c16_.size());
  residual(w.res16a, c16_, H16, W16);
  residual(w.res16b, c16_, H16, W16);
  conv(w.down32, c16_, H16, W16, c32_);
  k::relu_inplace(c32_.data(), c32_.size());

  // The stride-2 side branch, off the backbone's path: relu(x2 + fine2(x2)).
  const bool fine = config_.fine_level();
  if (fine) {
    conv(w.fine2, x2_, H / 2, W / 2, c2_);
    k::relu_inplace(c2_.data(), c2_.size(), x2_.data());
  }

  // Top-down: f32 = lat32(c32); f16 = lat16(c16) + up(f32); ... down to f4 (f2 with the fine level).
  const int D = config_.feat_dim;
  const std::array<const Conv*, 5> lat = {&w.lat2, &w.lat4, &w.lat8, &w.lat16, &w.lat32};
  const std::array<const std::vector<float>*, 5> src = {&c2_, &c4_, &c8_, &c16_, &c32_};
  const std::array<int, 5> hs = {H / 2, H4, H8, H16, H32}, ws = {W / 2, W4, W8, W16, W32};
  const int first = fine ? 0 : 1;  // index into the five strides 2..32 of the finest level made
  out.levels.resize(5 - first);
  for (int i = 4; i >= first; --i) {
    const int l = i - first;
    FeatureMap& f = out.levels[l];
    f.height = hs[i];
    f.width = ws[i];
    f.channels = D;
    conv(*lat[i], *src[i], hs[i], ws[i], f.data);
    if (i < 4) k::add_upsample2_hwc(out.levels[l + 1].data.data(), hs[i + 1], ws[i + 1], D, f.data.data());
  }
}

}  // namespace edgetap::engine
