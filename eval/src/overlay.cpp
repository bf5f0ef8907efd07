#include "edgetap/eval/overlay.hpp"
#include "edgetap/pixel_scale.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace edgetap::eval {
namespace {

constexpr int kPanelSide = 384;        // longer side of a panel, pixels
constexpr double kGoodPx = 8.0;        // "within" colour threshold, at 256x256
const cv::Scalar kGreen(80, 220, 80), kCyan(255, 220, 0), kRed(40, 40, 255), kGrey(160, 160, 160),
    kYellow(0, 220, 255), kWhite(255, 255, 255);

}  // namespace

std::vector<int> overlay_frames(const Sequence& sequence, std::span<const QuerySpec> queries, QueryMode mode,
                                int panels) {
  std::vector<int> candidates;
  for (int t = 0; t < sequence.num_frames; ++t) {
    const bool scored = std::any_of(queries.begin(), queries.end(), [&](const QuerySpec& q) {
      return sequence.points[static_cast<std::size_t>(q.point)].frames[static_cast<std::size_t>(t)].known &&
             is_scored_frame(mode, q.frame, t);
    });
    if (scored) candidates.push_back(t);
  }
  if (static_cast<int>(candidates.size()) <= panels) return candidates;
  std::vector<int> chosen;
  for (int i = 0; i < panels; ++i) {
    const double last = static_cast<double>(candidates.size() - 1);
    const auto at = static_cast<std::size_t>(std::lround(i * last / (panels - 1)));
    chosen.push_back(candidates[at]);
  }
  return chosen;
}

cv::Mat draw_overlay(const Sequence& sequence, std::span<const cv::Mat> frames, std::span<const QuerySpec> queries,
                     const Predictions& predictions, QueryMode mode, int panels) {
  const std::vector<int> chosen = overlay_frames(sequence, queries, mode, panels);
  std::vector<cv::Mat> drawn;
  for (int t : chosen) {
    const cv::Mat& rgb = frames[static_cast<std::size_t>(t)];
    const double scale = static_cast<double>(kPanelSide) / std::max(rgb.cols, rgb.rows);
    cv::Mat panel;
    cv::resize(rgb, panel, cv::Size(), scale, scale, cv::INTER_LINEAR);
    cv::cvtColor(panel, panel, cv::COLOR_RGB2BGR);
    const double px = static_cast<double>(panel.cols) / sequence.width;
    const double py = static_cast<double>(panel.rows) / sequence.height;
    auto at = [&](double x, double y) {
      return cv::Point(static_cast<int>(std::lround(rescale_pixel(x, px))), static_cast<int>(std::lround(rescale_pixel(y, py))));
    };
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const GtSample& gt = sequence.points[static_cast<std::size_t>(queries[q].point)].frames[static_cast<std::size_t>(t)];
      if (!gt.known || !is_scored_frame(mode, queries[q].frame, t)) continue;
      const PredSample& pred = predictions[q][static_cast<std::size_t>(t)];
      if (gt.visible) {
        cv::line(panel, at(gt.x, gt.y), at(pred.x, pred.y), kYellow, 1, cv::LINE_AA);
        cv::circle(panel, at(gt.x, gt.y), 5, kGreen, 1, cv::LINE_AA);
      }
      if (!pred.visible) {
        const cv::Point p = at(pred.x, pred.y);
        cv::rectangle(panel, p - cv::Point(2, 2), p + cv::Point(2, 2), kGrey, 1);
        continue;
      }
      const double dx = (pred.x - gt.x) * kMetricSize / sequence.width;
      const double dy = (pred.y - gt.y) * kMetricSize / sequence.height;
      const bool good = gt.visible && std::hypot(dx, dy) < kGoodPx;
      cv::circle(panel, at(pred.x, pred.y), 2, good ? kCyan : kRed, cv::FILLED, cv::LINE_AA);
    }
    cv::putText(panel, "t=" + std::to_string(t), {6, 18}, cv::FONT_HERSHEY_SIMPLEX, 0.5, kWhite, 1, cv::LINE_AA);
    drawn.push_back(panel);
  }
  if (drawn.empty()) return {};
  // Panels may differ in size only if frames do; pad to the tallest.
  int height = 0;
  for (const cv::Mat& p : drawn) height = std::max(height, p.rows);
  for (cv::Mat& p : drawn) cv::copyMakeBorder(p, p, 0, height - p.rows, 0, 2, cv::BORDER_CONSTANT, cv::Scalar());
  cv::Mat strip;
  cv::hconcat(drawn, strip);
  cv::Mat legend(22, strip.cols, CV_8UC3, cv::Scalar(32, 32, 32));
  cv::putText(legend,
              sequence.name + " (" + to_string(mode) +
                  "): green ring = ground truth, cyan/red = prediction within/beyond 8 px, grey = predicted occluded",
              {6, 15}, cv::FONT_HERSHEY_SIMPLEX, 0.45, kWhite, 1, cv::LINE_AA);
  cv::vconcat(legend, strip, strip);
  return strip;
}

void write_overlay(const Sequence& sequence, std::span<const cv::Mat> frames, std::span<const QuerySpec> queries,
                   const Predictions& predictions, QueryMode mode, const std::filesystem::path& file) {
  const cv::Mat strip = draw_overlay(sequence, frames, queries, predictions, mode);
  if (strip.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  bool written = false;
  try {
    written = cv::imwrite(file.string(), strip);
  } catch (const cv::Exception&) {
    written = false;
  }
  if (!written) throw std::runtime_error(file.string() + ": cannot write the overlay");
}

}  // namespace edgetap::eval
