// edgetap-synth: writes a synthetic evaluation (or training) set with exact
// ground truth in the evaluation dataset format. See eval/README.md.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "edgetap/eval/progress_line.hpp"
#include "edgetap/synth/generator.hpp"

namespace {

constexpr const char* kUsage = R"(usage: edgetap-synth --out DIR --backgrounds PATH [--cutouts PATH] [options]

Renders sequences of photographs moving under known transforms, with exact
point tracks and occlusion, as DIR/seq-NNN/{frames/,gt.json} plus DIR/synth.json.
PATH is an image, a folder (searched recursively) or @FILE (one path a line);
--backgrounds and --cutouts may be repeated. Cut-outs without an alpha channel
get a random blob matte.
  --sequences N        sequences to write (default 10)
  --frames N           frames per sequence (default 48)
  --points N           points per sequence (default 64)
  --size WxH           frame size (default 256x256)
  --seed N             everything follows from it (default 1)
 difficulty:
  --speed PX           mean layer motion, pixels per frame (default 2)
  --rotation DEG       occluder turn rate, degrees per frame (default 1; camera a quarter)
  --scale-change F     size change over a sequence (default 0.25)
  --occluders N        cut-out layers (default 3)
  --perspective F      camera keystone at the frame edge (default 0.05)
 appearance:
  --drift F            brightness drift per layer (default 0.1)
  --noise SIGMA        Gaussian noise, 8-bit levels (default 2)
  --blur N             motion-blur samples, 1 = none (default 5)
  --shutter F          shutter-open fraction of a frame (default 0.5)
  --background-share F fraction of points on the background (default 0.6)
  --format jpg|png     frame files (default jpg, quality 95)
  --quiet              no progress on stderr
)";

bool add_paths(const std::string& arg, std::vector<std::filesystem::path>& out) {
  if (arg.empty() || arg[0] != '@') {
    out.emplace_back(arg);
    return true;
  }
  std::ifstream list(arg.substr(1));
  if (!list) return false;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty() && line[0] != '#') out.emplace_back(line);
  }
  return true;
}

// Whole-string numbers only: "3x" or "" are errors, not 3 or 0.
bool parse_number(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0';
}
bool parse_number(const char* text, int& out) {
  double v = 0;
  if (!parse_number(text, v) || v != std::floor(v) || std::abs(v) > 1e9) return false;
  out = static_cast<int>(v);
  return true;
}

// Each option that takes a value, and what it sets.
std::map<std::string, std::function<bool(const char*)>> option_setters(edgetap::synth::SynthOptions& o,
                                                                        std::filesystem::path& out_dir) {
  auto number = [](auto& field) { return [&field](const char* v) { return parse_number(v, field); }; };
  return {
      {"--out", [&](const char* v) { out_dir = v; return *v != '\0'; }},
      {"--backgrounds", [&](const char* v) { return add_paths(v, o.backgrounds); }},
      {"--cutouts", [&](const char* v) { return add_paths(v, o.cutouts); }},
      {"--size", [&](const char* v) { return std::sscanf(v, "%dx%d", &o.width, &o.height) == 2; }},
      {"--seed",
       [&](const char* v) {
         char* end = nullptr;
         o.seed = std::strtoull(v, &end, 10);
         return end != v && *end == '\0';
       }},
      {"--format", [&](const char* v) { o.format = v; return true; }},
      {"--sequences", number(o.sequences)},
      {"--frames", number(o.frames)},
      {"--points", number(o.points)},
      {"--speed", number(o.speed)},
      {"--rotation", number(o.rotation)},
      {"--scale-change", number(o.scale_change)},
      {"--occluders", number(o.occluders)},
      {"--perspective", number(o.perspective)},
      {"--drift", number(o.drift)},
      {"--noise", number(o.noise)},
      {"--blur", number(o.blur_samples)},
      {"--shutter", number(o.shutter)},
      {"--background-share", number(o.background_share)},
  };
}

}  // namespace

int main(int argc, char** argv) {
  edgetap::synth::SynthOptions o;
  std::filesystem::path out_dir;
  bool quiet = false;
  const auto setters = option_setters(o, out_dir);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--quiet") {
      quiet = true;
      continue;
    }
    const auto setter = setters.find(arg);
    if (setter == setters.end() || i + 1 >= argc || !setter->second(argv[i + 1])) {
      std::fprintf(stderr, "edgetap-synth: bad or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
    ++i;
  }
  if (out_dir.empty()) {
    std::fprintf(stderr, "edgetap-synth: --out is required\n%s", kUsage);
    return 2;
  }
  edgetap::eval::ProgressLine progress(!quiet);
  try {
    edgetap::synth::generate(o, out_dir, [&](int sequence, int frames_done) {
      const std::string text = "synth: sequence " + std::to_string(sequence + 1) + "/" + std::to_string(o.sequences) +
                               ", frame " + std::to_string(frames_done) + "/" + std::to_string(o.frames);
      if (frames_done == o.frames) {
        progress.finish(text);
      } else {
        progress.update(text);
      }
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgetap-synth: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %d sequences to %s\n", o.sequences, out_dir.string().c_str());
  return 0;
}
