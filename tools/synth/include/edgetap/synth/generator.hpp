// The ground-truth generator: sequences in the evaluation dataset format
// (<out>/<name>/frames/00000.jpg ... and gt.json), deterministic per seed, plus
// <out>/synth.json recording the options and the photographs each sequence used.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "edgetap/eval/sequence.hpp"
#include "edgetap/synth/scene.hpp"
#include "edgetap/synth/synth_options.hpp"

namespace edgetap::synth {

// Called as frames are rendered: (sequence index, frames rendered in it).
using SynthProgress = std::function<void(int sequence, int frames_done)>;

struct GeneratedSequence {
  eval::Sequence truth;                            // name, size, points
  std::vector<cv::Mat> frames;                     // RGB8
  std::filesystem::path background;                // the photographs used
  std::vector<std::filesystem::path> cutouts;
  Scene scene;                                     // for tests: the exact geometry
};

// Sequence `index` of the set `options` describes, in memory. The image
// lists are those list_images returns for options.backgrounds/occluders.
GeneratedSequence make_sequence(const SynthOptions& options, int index,
                                const std::vector<std::filesystem::path>& backgrounds,
                                const std::vector<std::filesystem::path>& occluders,
                                const SynthProgress& progress = {});

// Writes one sequence folder under `out_dir`.
void write_sequence(const GeneratedSequence& sequence, const std::filesystem::path& out_dir,
                    const std::string& format);

// All of them, then synth.json. Throws std::runtime_error on bad options,
// missing images or a folder that cannot be written.
void generate(const SynthOptions& options, const std::filesystem::path& out_dir, const SynthProgress& progress = {});

}  // namespace edgetap::synth
