// What the ground-truth generator makes: size, length, how many points, the
// difficulty knobs and the photographs it draws from. Defaults are the ones the
// fixed evaluation set documents in bench/ACCURACY.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace edgetap::synth {

struct SynthOptions {
  int width = 256;
  int height = 256;
  int frames = 48;
  int points = 64;               // per sequence
  int sequences = 10;
  std::uint64_t seed = 1;

  // Difficulty.
  double speed = 2.0;            // mean translation of a layer, output pixels per frame
  double rotation = 1.0;         // occluders turn up to this many degrees per frame (the camera a quarter of it)
  double scale_change = 0.25;    // a layer's size changes by up to this fraction over the sequence
  int occluders = 3;             // cut-out layers in front of the background
  double perspective = 0.05;     // camera keystone: relative depth change at the frame edge

  // Appearance.
  double drift = 0.1;            // brightness of each layer drifts by up to this fraction
  double noise = 2.0;            // Gaussian noise sigma, 8-bit levels
  int blur_samples = 5;          // motion blur: renders averaged over the shutter; 1 turns it off
  double shutter = 0.5;          // fraction of the frame interval the shutter is open

  double background_share = 0.6; // fraction of the points placed on the background
  std::string format = "jpg";    // frame files: jpg (quality 95) or png

  // Image files or folders (searched recursively for .jpg/.jpeg/.png).
  // Cut-outs with an alpha channel use it as the matte; others get a random
  // smooth blob cut out of them.
  std::vector<std::filesystem::path> backgrounds;
  std::vector<std::filesystem::path> cutouts;
};

// Checks ranges; returns an empty string when valid, else what is wrong.
std::string validate(const SynthOptions& options);

}  // namespace edgetap::synth
