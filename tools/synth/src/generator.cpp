#include "edgetap/synth/generator.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "edgetap/eval/gt_json.hpp"
#include "edgetap/synth/layer_images.hpp"
#include "edgetap/synth/point_sampler.hpp"
#include "edgetap/synth/scene_builder.hpp"

namespace edgetap::synth {
namespace {

std::string sequence_name(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "seq-%03d", index);
  return name;
}

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!out) throw std::runtime_error(file.string() + ": cannot be written");
}

std::string describe(const SynthOptions& o, int index) {
  char text[256];
  std::snprintf(text, sizeof text, "edgetap synth: seed %llu, sequence %d, speed %g, rotation %g, scale_change %g, occluders %d",
                static_cast<unsigned long long>(o.seed), index, o.speed, o.rotation, o.scale_change, o.occluders);
  return text;
}

}  // namespace

GeneratedSequence make_sequence(const SynthOptions& options, int index,
                                const std::vector<std::filesystem::path>& backgrounds,
                                const std::vector<std::filesystem::path>& occluders, const SynthProgress& progress) {
  if (backgrounds.empty()) throw std::runtime_error("no background images");
  if (options.occluders > 0 && occluders.empty()) throw std::runtime_error("no occluder images");
  Random rng = Random::derived(options.seed, static_cast<std::uint64_t>(index));
  GeneratedSequence out;
  out.background = backgrounds[rng.below(backgrounds.size())];
  // Twice the frame's size: the camera sees half the photograph and has room to move.
  cv::Mat background = load_background(out.background, 2 * std::max(options.width, options.height));
  std::vector<cv::Mat> cutouts;
  for (int k = 0; k < options.occluders; ++k) {
    out.cutouts.push_back(occluders[rng.below(occluders.size())]);
    cutouts.push_back(load_cutout(out.cutouts.back(), std::max(options.width, options.height), rng));
  }
  out.scene = build_scene(options, rng, std::move(background), std::move(cutouts));

  eval::Sequence& truth = out.truth;
  truth.name = sequence_name(index);
  truth.width = options.width;
  truth.height = options.height;
  truth.num_frames = options.frames;
  truth.source = describe(options, index);
  truth.points = sample_points(out.scene, options.points, options.background_share, rng);
  for (int t = 0; t < options.frames; ++t) {
    out.frames.push_back(out.scene.render(t));
    if (progress) progress(index, t + 1);
  }
  return out;
}

void write_sequence(const GeneratedSequence& sequence, const std::filesystem::path& out_dir,
                    const std::string& format) {
  const std::filesystem::path dir = out_dir / sequence.truth.name;
  std::error_code ec;
  std::filesystem::create_directories(dir / "frames", ec);
  if (ec) throw std::runtime_error((dir / "frames").string() + ": cannot be created (" + ec.message() + ")");
  const std::vector<int> params =
      format == "jpg" ? std::vector<int>{cv::IMWRITE_JPEG_QUALITY, 95} : std::vector<int>{};
  for (std::size_t t = 0; t < sequence.frames.size(); ++t) {
    char name[32];
    std::snprintf(name, sizeof name, "%05zu.%s", t, format.c_str());
    cv::Mat bgr;
    cv::cvtColor(sequence.frames[t], bgr, cv::COLOR_RGB2BGR);
    if (!cv::imwrite((dir / "frames" / name).string(), bgr, params)) {
      throw std::runtime_error((dir / "frames" / name).string() + ": cannot be written");
    }
  }
  write_text(dir / "gt.json", eval::format_ground_truth(sequence.truth));
}

void generate(const SynthOptions& options, const std::filesystem::path& out_dir, const SynthProgress& progress) {
  if (const std::string problem = validate(options); !problem.empty()) throw std::runtime_error(problem);
  const auto backgrounds = list_images(options.backgrounds);
  const auto occluders = list_images(options.cutouts);
  nlohmann::json manifest = {
      {"generator", "edgetap-synth"},
      {"seed", options.seed},
      {"size", {options.width, options.height}},
      {"frames", options.frames},
      {"points", options.points},
      {"sequences", options.sequences},
      {"difficulty", {{"speed", options.speed}, {"rotation", options.rotation}, {"scale_change", options.scale_change},
                      {"occluders", options.occluders}, {"perspective", options.perspective}}},
      {"appearance", {{"drift", options.drift}, {"noise", options.noise}, {"blur_samples", options.blur_samples},
                      {"shutter", options.shutter}}},
      {"background_share", options.background_share},
      {"format", options.format}};
  nlohmann::json used = nlohmann::json::array();
  for (int i = 0; i < options.sequences; ++i) {
    const GeneratedSequence sequence = make_sequence(options, i, backgrounds, occluders, progress);
    write_sequence(sequence, out_dir, options.format);
    nlohmann::json cutouts = nlohmann::json::array();
    for (const auto& c : sequence.cutouts) cutouts.push_back(c.string());
    used.push_back({{"name", sequence.truth.name}, {"background", sequence.background.string()}, {"cutouts", cutouts},
                    {"points", sequence.truth.points.size()}});
  }
  manifest["sequence_list"] = used;
  write_text(out_dir / "synth.json", manifest.dump(2) + "\n");
}

}  // namespace edgetap::synth
