// The GPU's template alignment (kernels/cuda/template_alignment.cu through
// gpu::CudaTemplateAligner) against the CPU's reference
// (engine::CpuTemplateAligner, engine/src/template_alignment.cpp): the grey
// frame, the captured templates, the alignments of many tracks on textures
// moved by known warps, and the golden clips' refined positions.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "edgetap/engine/template_aligner.hpp"
#include "edgetap/gpu/cuda_template_aligner.hpp"
#include "edgetap/kernels/cuda/template_alignment.hpp"
#include "gpu_test_support.hpp"
#include "support/moved_texture.hpp"
#include "support/refined_golden.hpp"

namespace edgetap::gpu {
namespace {

using engine::AffineWarp;
using engine::AlignmentJob;
using engine::AlignmentResult;
using engine::TemplateAlignmentConfig;

TEST(GpuTemplateAlignment, GreyFrameMatchesTheReference) {
  EDGETAP_REQUIRE_GPU();
  const int W = 67, H = 45;
  const std::size_t stride = 3 * W + 5;  // rows padded, as a camera's may be
  std::mt19937 rng(3);
  std::vector<std::uint8_t> rgb(stride * H);
  for (std::uint8_t& v : rgb) v = static_cast<std::uint8_t>(rng() % 256);
  const engine::GreyFrame ref = engine::grey_frame(ImageView{rgb.data(), W, H, stride});
  auto rgb_dev = testing::upload_raw(rgb);
  DeviceBuffer<float4> grey(static_cast<std::size_t>(W) * H, testing::kLegacyStream);
  kernels::cuda::grey_frame(rgb_dev.data(), W, H, stride, grey.data(), nullptr);
  const std::vector<float4> got = testing::download_raw(grey.data(), grey.size());
  for (std::size_t p = 0; p < got.size(); ++p) {
    ASSERT_NEAR(got[p].x, ref.at(p, engine::GreyFrame::kGrey), 1e-4) << p;
    ASSERT_NEAR(got[p].y, ref.at(p, engine::GreyFrame::kDx), 1e-4) << p;
    ASSERT_NEAR(got[p].z, ref.at(p, engine::GreyFrame::kDy), 1e-4) << p;
  }
}

// A frame whose left half is the texture and right half flat grey: templates
// in the flat half have no contrast.
test::RgbFrame half_flat() {
  return test::render([](double x, double y) { return x < 64 ? test::texture(x, y) : 90.0; });
}

TEST(GpuTemplateAlignment, CapturesTheReferenceTemplatesAndTheirContrast) {
  EDGETAP_REQUIRE_GPU();
  TemplateAlignmentConfig config;
  config.iters = 0;  // an alignment then only correlates the template with the patch it was taken from
  const test::RgbFrame frame = half_flat();
  const std::vector<engine::Point2> points{{30.f, 40.f}, {2.f, 3.f}, {100.f, 64.f}, {std::nanf(""), 5.f},
                                           {45.3f, 120.7f}, {-4.f, 60.f}};
  std::vector<int> handles(points.size());
  std::iota(handles.begin(), handles.end(), 0);
  engine::CpuTemplateAligner cpu(config, 1);
  CudaTemplateAligner gpu(config);
  cpu.set_frame(frame.view());
  gpu.set_frame(frame.view());
  const std::vector<bool> want = cpu.capture(handles, points), got = gpu.capture(handles, points);
  EXPECT_EQ(got, want);
  EXPECT_EQ(want, (std::vector<bool>{true, true, false, false, true, true}));
  // The templates themselves: each correlates 1 with the patch it was taken from, on both.
  std::vector<AlignmentJob> jobs;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (want[i]) jobs.push_back({handles[i], points[i].x, points[i].y, AffineWarp{}});
  }
  std::vector<AlignmentResult> a, b;
  cpu.align(jobs, a);
  gpu.align(jobs, b);
  ASSERT_EQ(b.size(), jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_NEAR(a[j].ncc, 1.f, 1e-3) << j;
    EXPECT_NEAR(b[j].ncc, a[j].ncc, 1e-4) << j;
    EXPECT_EQ(b[j].accepted, a[j].accepted) << j;
  }
  // A handle without a template cannot be aligned.
  EXPECT_THROW(gpu.align(std::vector<AlignmentJob>{{2, 100.f, 64.f, AffineWarp{}}}, b), std::out_of_range);
}

// Both aligners on the same frames and jobs; every result within float
// rounding of the reference's (acceptance may differ only at its thresholds).
// `warmed`: the GPU's aligner warmed up for the queries first.
void expect_same_alignments(const test::RgbFrame& from, const test::RgbFrame& to, const std::vector<engine::Point2>& queries,
                            const std::vector<AlignmentJob>& jobs, const TemplateAlignmentConfig& config,
                            bool warmed = false) {
  engine::CpuTemplateAligner cpu(config, 1);
  CudaTemplateAligner gpu(config, 16);  // small: capture grows it
  if (warmed) gpu.warm_up(from.view().width, from.view().height, static_cast<int>(queries.size()));
  std::vector<int> handles(queries.size());
  std::iota(handles.begin(), handles.end(), 0);
  cpu.set_frame(from.view());
  gpu.set_frame(from.view());
  const std::vector<bool> kept = cpu.capture(handles, queries);
  ASSERT_EQ(gpu.capture(handles, queries), kept);
  std::vector<AlignmentJob> runnable;
  for (const AlignmentJob& j : jobs) {
    if (kept[static_cast<std::size_t>(j.handle)]) runnable.push_back(j);
  }
  cpu.set_frame(to.view());
  gpu.set_frame(to.view());
  std::vector<AlignmentResult> want, got;
  cpu.align(runnable, want);
  gpu.align(runnable, got);
  ASSERT_EQ(got.size(), want.size());
  int accepted = 0, at_threshold = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const AlignmentResult &w = want[i], &g = got[i];
    const float shift = std::hypot(w.x - runnable[i].x, w.y - runnable[i].y);
    const bool borderline = std::abs(w.ncc - config.min_ncc) < 2e-3f || std::abs(shift - config.max_shift) < 2e-3f;
    accepted += w.accepted;
    if (g.accepted != w.accepted) {
      EXPECT_TRUE(borderline) << "job " << i << ": accepted " << g.accepted << " against " << w.accepted;
      ++at_threshold;
      continue;
    }
    EXPECT_NEAR(g.ncc, w.ncc, 1e-3) << "job " << i;
    EXPECT_NEAR(g.x, w.x, 2e-3) << "job " << i;
    EXPECT_NEAR(g.y, w.y, 2e-3) << "job " << i;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(g.warp.a[static_cast<std::size_t>(k)], w.warp.a[static_cast<std::size_t>(k)], 2e-3) << "job " << i;
  }
  EXPECT_LE(at_threshold, 2);
  EXPECT_GT(accepted, static_cast<int>(want.size()) / 2);  // the case exercises accepted alignments
}

TEST(GpuTemplateAlignment, AlignsManyTracksAsTheReference) {
  EDGETAP_REQUIRE_GPU();
  const TemplateAlignmentConfig config;
  const double angle = 0.08, scale = 1.05;
  const std::array<double, 4> S{scale * std::cos(angle), -scale * std::sin(angle), scale * std::sin(angle),
                                scale * std::cos(angle)};
  const test::RgbFrame a = test::render(test::texture), b = test::render(test::texture, S, 1.3, -0.8);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> where(4.f, 123.f), off(-1.5f, 1.5f), tilt(-0.05f, 0.05f);
  std::vector<engine::Point2> queries;
  std::vector<AlignmentJob> jobs;
  for (int i = 0; i < 700; ++i) {  // more tracks than one block and than the starting capacity; some at the border
    queries.push_back({where(rng), where(rng)});
    const auto truth = test::moved(queries.back().x, queries.back().y, S, 1.3, -0.8);
    AffineWarp w;
    if (i % 2 == 1) w.a = {1.f + tilt(rng), tilt(rng), tilt(rng), 1.f + tilt(rng)};  // a carried warp
    jobs.push_back({i, static_cast<float>(truth[0]) + off(rng), static_cast<float>(truth[1]) + off(rng), w});
  }
  expect_same_alignments(a, b, queries, jobs, config);
}

// What warm_up leaves: room and loaded kernels, but no template and no frame.
TEST(GpuTemplateAlignment, AWarmedUpAlignerAlignsAsAFreshOne) {
  EDGETAP_REQUIRE_GPU();
  const TemplateAlignmentConfig config;
  CudaTemplateAligner warmed(config, 16);
  warmed.warm_up(128, 96, 700);
  std::vector<AlignmentResult> results;
  EXPECT_THROW(warmed.align(std::vector<AlignmentJob>{{0, 64.f, 48.f, AffineWarp{}}}, results), std::out_of_range);

  const std::array<double, 4> S{1.02, 0.0, 0.0, 1.02};
  const test::RgbFrame a = test::render(test::texture), b = test::render(test::texture, S, 0.7, 0.4);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> where(4.f, 123.f);
  std::vector<engine::Point2> queries;
  std::vector<AlignmentJob> jobs;
  for (int i = 0; i < 700; ++i) {
    queries.push_back({where(rng), where(rng)});
    const auto truth = test::moved(queries.back().x, queries.back().y, S, 0.7, 0.4);
    jobs.push_back({i, static_cast<float>(truth[0]), static_cast<float>(truth[1]), AffineWarp{}});
  }
  expect_same_alignments(a, b, queries, jobs, config, /*warmed=*/true);
}

TEST(GpuTemplateAlignment, OtherRadiiAndIterationsAsTheReference) {
  EDGETAP_REQUIRE_GPU();
  const test::RgbFrame a = test::render(test::texture), b = test::render(test::texture, {1, 0, 0, 1}, -0.7, 0.45);
  std::vector<engine::Point2> queries;
  std::vector<AlignmentJob> jobs;
  for (int i = 0; i < 100; ++i) {
    queries.push_back({20.f + static_cast<float>(i % 10) * 9.f, 20.f + static_cast<float>(i / 10) * 9.f});
    jobs.push_back({i, queries.back().x - 0.7f + 0.5f, queries.back().y + 0.45f - 0.4f, AffineWarp{}});
  }
  for (const auto& [radius, iters] : {std::pair{3, 2}, std::pair{6, 6}, std::pair{15, 4}}) {
    SCOPED_TRACE("radius " + std::to_string(radius) + ", " + std::to_string(iters) + " iterations");
    TemplateAlignmentConfig config;
    config.radius = radius;
    config.iters = iters;
    expect_same_alignments(a, b, queries, jobs, config);
  }
}

class GpuRefinedGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuRefinedGolden, ReproducesTheReferenceOnTheGoldenClip) {
  EDGETAP_REQUIRE_GPU();
  test::expect_refined_golden(
      testing::source_path(""), GetParam(),
      [](const TemplateAlignmentConfig& config) { return std::make_unique<CudaTemplateAligner>(config); }, 2e-3f);
}

INSTANTIATE_TEST_SUITE_P(ShippedModels, GpuRefinedGolden, ::testing::Values("edgetap-small", "edgetap-large"),
                         [](const auto& param) { return param.param == "edgetap-small" ? "small" : "large"; });

}  // namespace
}  // namespace edgetap::gpu
