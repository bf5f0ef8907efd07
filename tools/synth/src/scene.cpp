#include "edgetap/synth/scene.hpp"

#include <opencv2/imgproc.hpp>

#include <cmath>

namespace edgetap::synth {
namespace {

cv::Matx33d translation(double x, double y) { return {1, 0, x, 0, 1, y, 0, 0, 1}; }
cv::Matx33d rotation_scale(double angle, double scale) {
  const double c = std::cos(angle) * scale, s = std::sin(angle) * scale;
  return {c, -s, 0, s, c, 0, 0, 0, 1};
}

cv::Point2d apply(const cv::Matx33d& m, cv::Point2d p) {
  const cv::Vec3d q = m * cv::Vec3d(p.x, p.y, 1.0);
  return {q[0] / q[2], q[1] / q[2]};
}

// Bilinear sample of a cut-out's matte; 0 outside it, like the
// BORDER_CONSTANT warp that renders cut-outs.
double alpha_of(const cv::Mat& rgba, cv::Point2d p) {
  const int x0 = static_cast<int>(std::floor(p.x)), y0 = static_cast<int>(std::floor(p.y));
  const double fx = p.x - x0, fy = p.y - y0;
  auto at = [&](int x, int y) -> double {
    if (x < 0 || y < 0 || x >= rgba.cols || y >= rgba.rows) return 0.0;
    return rgba.at<cv::Vec4f>(y, x)[3];
  };
  return (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) +
         fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1));
}

}  // namespace

cv::Matx33d Scene::layer_to_frame(int layer, double t) const {
  if (layer == 0) {
    // Frame -> photo: centre the frame, keystone, zoom and roll, then move to
    // the camera's place on the photo. The layer map is its inverse.
    const BackgroundLayer& b = background;
    const cv::Matx33d keystone(1, 0, 0, 0, 1, 0, b.kx.at(t), b.ky.at(t), 1);
    const cv::Matx33d frame_to_photo =
        translation(0.5 * (b.image.cols - 1) + b.ox.at(t), 0.5 * (b.image.rows - 1) + b.oy.at(t)) *
        rotation_scale(b.angle.at(t), std::exp(b.log_zoom.at(t))) * keystone *
        translation(-0.5 * (width - 1), -0.5 * (height - 1));
    return frame_to_photo.inv();
  }
  const CutoutLayer& c = cutouts.at(static_cast<std::size_t>(layer - 1));
  return translation(c.cx.at(t), c.cy.at(t)) * rotation_scale(c.angle.at(t), std::exp(c.log_scale.at(t))) *
         translation(-0.5 * (c.image.cols - 1), -0.5 * (c.image.rows - 1));
}

cv::Point2d Scene::project(int layer, cv::Point2d layer_point, double t) const {
  return apply(layer_to_frame(layer, t), layer_point);
}

cv::Point2d Scene::unproject(int layer, cv::Point2d frame_point, double t) const {
  return apply(layer_to_frame(layer, t).inv(), frame_point);
}

double Scene::alpha_at(int layer, cv::Point2d frame_point, double t) const {
  return alpha_of(cutouts.at(static_cast<std::size_t>(layer - 1)).image, unproject(layer, frame_point, t));
}

bool Scene::on_layer(int layer, cv::Point2d p, double min_alpha) const {
  if (layer == 0) {
    return p.x >= 0 && p.y >= 0 && p.x <= background.image.cols - 1 && p.y <= background.image.rows - 1;
  }
  return alpha_of(cutouts.at(static_cast<std::size_t>(layer - 1)).image, p) >= min_alpha;
}

bool Scene::visible(int layer, cv::Point2d layer_point, int t) const {
  const cv::Point2d f = project(layer, layer_point, t);
  if (!(f.x >= 0 && f.y >= 0 && f.x <= width - 1 && f.y <= height - 1)) return false;
  for (int front = layer + 1; front < layers(); ++front) {
    if (alpha_at(front, f, t) >= kCoverAlpha) return false;
  }
  return true;
}

cv::Mat Scene::render(int t) const {
  const cv::Size size(width, height);
  cv::Mat sum = cv::Mat::zeros(size, CV_32FC3);
  const int samples = std::max(1, blur_samples);
  for (int s = 0; s < samples; ++s) {
    const double tau = samples == 1 ? t : t + shutter * (static_cast<double>(s) / (samples - 1) - 0.5);
    cv::Mat canvas;
    cv::warpPerspective(background.image, canvas, cv::Mat(layer_to_frame(0, tau)), size, cv::INTER_LINEAR,
                        cv::BORDER_REFLECT101);
    canvas *= background.gain.at(tau);
    for (int layer = 1; layer < layers(); ++layer) {
      const CutoutLayer& c = cutouts[static_cast<std::size_t>(layer - 1)];
      const cv::Matx33d m = layer_to_frame(layer, tau);
      const cv::Matx23d affine(m(0, 0), m(0, 1), m(0, 2), m(1, 0), m(1, 1), m(1, 2));
      cv::Mat warped;
      cv::warpAffine(c.image, warped, cv::Mat(affine), size, cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar::all(0));
      cv::Mat planes[4];
      cv::split(warped, planes);
      cv::Mat rgb, alpha3;
      cv::merge(planes, 3, rgb);
      cv::merge(std::vector<cv::Mat>{planes[3], planes[3], planes[3]}, alpha3);
      // Premultiplied "over": what is behind shows through (1 - alpha).
      canvas = canvas.mul(cv::Scalar::all(1.0) - alpha3) + rgb * c.gain.at(tau);
    }
    sum += canvas;
  }
  sum *= 1.0 / samples;
  const double t_mid = t;
  cv::multiply(sum, cv::Scalar(colour[0].at(t_mid), colour[1].at(t_mid), colour[2].at(t_mid)), sum);
  if (noise > 0) {
    cv::Mat n(size, CV_32FC3);
    cv::RNG rng(noise_seed + static_cast<std::uint64_t>(t) * 0x9e3779b97f4a7c15ULL);
    rng.fill(n, cv::RNG::NORMAL, 0.0, noise);
    sum += n;
  }
  cv::Mat out;
  sum.convertTo(out, CV_8UC3);
  return out;
}

}  // namespace edgetap::synth
