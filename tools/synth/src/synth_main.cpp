// edgetap-synth: writes a synthetic evaluation (or training) set with exact
// ground truth in the evaluation dataset format. See eval/README.md.
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

}  // namespace

int main(int argc, char** argv) {
  edgetap::synth::SynthOptions o;
  std::filesystem::path out_dir;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    const char* value = has_value ? argv[i + 1] : "";
    bool ok = true;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--quiet") {
      quiet = true;
      continue;
    } else if (!has_value) {
      ok = false;
    } else if (arg == "--out") {
      out_dir = value;
    } else if (arg == "--backgrounds") {
      ok = add_paths(value, o.backgrounds);
    } else if (arg == "--cutouts") {
      ok = add_paths(value, o.cutouts);
    } else if (arg == "--sequences") {
      o.sequences = std::atoi(value);
    } else if (arg == "--frames") {
      o.frames = std::atoi(value);
    } else if (arg == "--points") {
      o.points = std::atoi(value);
    } else if (arg == "--size") {
      ok = std::sscanf(value, "%dx%d", &o.width, &o.height) == 2;
    } else if (arg == "--seed") {
      o.seed = std::strtoull(value, nullptr, 10);
    } else if (arg == "--speed") {
      o.speed = std::atof(value);
    } else if (arg == "--rotation") {
      o.rotation = std::atof(value);
    } else if (arg == "--scale-change") {
      o.scale_change = std::atof(value);
    } else if (arg == "--occluders") {
      o.occluders = std::atoi(value);
    } else if (arg == "--perspective") {
      o.perspective = std::atof(value);
    } else if (arg == "--drift") {
      o.drift = std::atof(value);
    } else if (arg == "--noise") {
      o.noise = std::atof(value);
    } else if (arg == "--blur") {
      o.blur_samples = std::atoi(value);
    } else if (arg == "--shutter") {
      o.shutter = std::atof(value);
    } else if (arg == "--background-share") {
      o.background_share = std::atof(value);
    } else if (arg == "--format") {
      o.format = value;
    } else {
      ok = false;
    }
    if (!ok) {
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
