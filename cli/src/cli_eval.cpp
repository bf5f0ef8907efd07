// edgetap eval: scores a tracker on datasets with ground truth (TAP-Vid
// metrics, PCK) or on clips without (cycle error, jitter). The work is in
// eval/; this file reads the arguments and prints. See eval/README.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "edgetap/eval/evaluation.hpp"
#include "edgetap/eval/gt_free_score.hpp"
#include "edgetap/eval/report.hpp"
#include "edgetap/eval/trace_recorder.hpp"
#include "edgetap/eval/trace_replay.hpp"
#include "edgetap/eval/tracker_registry.hpp"
#include "edgetap/cli/option_numbers.hpp"
#include "edgetap/engine/model_config.hpp"

namespace edgetap::cli {
namespace {

constexpr const char* kUsage = R"(usage: edgetap eval [--tracker NAME] [options] DATASET_DIR...
       edgetap eval --gt-free [--tracker NAME] [options] CLIP...

Scores a tracker on datasets with ground truth (TAP-Vid AJ, <delta_avg, OA at
256x256; PCK@0.2 where gt.json has mask areas), or on clips without ground
truth (forward-backward cycle error, jitter of static tracks). A DATASET_DIR is
a folder of sequence folders (frames/ or video.mp4, and gt.json) or one sequence.
  --tracker NAME   tracker to score: klt (default) or edgetap (the network, bundled model)
  --mode MODE      first (default), strided or both; strided adds a pass backward in time
  --iters N        edgetap: refinement iterations per frame (default: the model's own)
  --model FILE     edgetap: the network's weights (.safetensors, its .json beside;
                   default: the bundled )" EDGETAP_INSTALL_DATA_DIR R"(/models/edgetap-small.safetensors)
  --no-refinement  edgetap: score the network's positions, without the template
                   refinement the model's .json may declare (INFERENCE.md in the sources' models/)
  --support-grid N edgetap: track an unpublished N x N grid of support points from each
                   clip's first frame (default: the model's .json, support_grid; 0: none)
  --size WxH       frame size the tracker sees (default 256x256); "native" keeps each clip's
  --every N        the tracker sees every N-th frame (and each query's own), as a ladder
                   rung with `stride: N` does; the frames between are scored at the last
                   answers, which is what a subscriber holds (default 1)
  --json FILE      write every score as JSON
  --overlay DIR    write a strip per sequence: predictions against ground truth
  --gt-free        score CLIPs (video files or folders of frames) without ground truth
  --frames N       --gt-free: frames per clip (default 100)
  --grid N         --gt-free: N x N queries in the first frame (default 16)
  --quiet          no progress on stderr
  --record-trace DIR   also write every tracker call and frame to DIR (new or empty),
                   for edgetap-trace-run on a host without OpenCV (README.md in the sources' eval/)
  --replay-trace FILE  score the answers in FILE (edgetap-trace-run's output) instead of
                   running a tracker: the same datasets and options as the recording;
                   --tracker only names what is printed (default "replay")
Exit status: 0 scored, 1 bad input or a tracker failure, 2 bad arguments.
)";

struct Arguments {
  eval::EvalOptions eval;
  eval::GtFreeOptions gt_free;
  bool score_clips = false;
  config::EdgeTapSettings edgetap;  // --model, --iters, --no-refinement, --support-grid
  bool quiet = false;
  std::string json_file;
  std::string record_dir;   // --record-trace
  std::string replay_file;  // --replay-trace
  bool tracker_named = false;
  std::vector<std::string> inputs;
};

// Returns 0 when parsed, else the exit status (help: 0 via `done`).
int parse(int argc, char** argv, Arguments& a, bool& done) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      done = true;
      return 0;
    } else if (arg == "--tracker" && has_value) {
      a.eval.tracker = argv[++i];
      a.tracker_named = true;
    } else if (arg == "--mode" && has_value) {
      const std::string mode = argv[++i];
      if (mode == "first") {
        a.eval.modes = {eval::QueryMode::first};
      } else if (mode == "strided") {
        a.eval.modes = {eval::QueryMode::strided};
      } else if (mode == "both") {
        a.eval.modes = {eval::QueryMode::first, eval::QueryMode::strided};
      } else {
        std::fprintf(stderr, "edgetap eval: --mode must be first, strided or both, not '%s'\n", mode.c_str());
        return 2;
      }
    } else if (arg == "--iters" && has_value) {
      if (!daemon::read_int_option("edgetap eval", arg, argv[++i], 1, 16, a.edgetap.iters)) return 2;
    } else if (arg == "--model" && has_value) {
      a.edgetap.model = argv[++i];
    } else if (arg == "--size" && has_value) {
      if (!eval::parse_frame_size(argv[++i], a.eval.size)) {
        std::fprintf(stderr, "edgetap eval: --size must be WxH (16..8192) or native, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (arg == "--every" && has_value) {
      if (!daemon::read_int_option("edgetap eval", arg, argv[++i], 1, 64, a.eval.every)) return 2;
    } else if (arg == "--json" && has_value) {
      a.json_file = argv[++i];
    } else if (arg == "--overlay" && has_value) {
      a.eval.overlay_dir = argv[++i];
    } else if (arg == "--gt-free") {
      a.score_clips = true;
    } else if (arg == "--frames" && has_value) {
      if (!daemon::read_int_option("edgetap eval", arg, argv[++i], 2, 1000000, a.gt_free.max_frames)) return 2;
    } else if (arg == "--grid" && has_value) {
      if (!daemon::read_int_option("edgetap eval", arg, argv[++i], 1, 256, a.gt_free.grid)) return 2;
    } else if (arg == "--record-trace" && has_value) {
      a.record_dir = argv[++i];
    } else if (arg == "--replay-trace" && has_value) {
      a.replay_file = argv[++i];
    } else if (arg == "--no-refinement") {
      a.edgetap.template_refinement = false;
    } else if (arg == "--support-grid" && has_value) {
      int side = 0;
      if (!daemon::read_int_option("edgetap eval", arg, argv[++i], 0, engine::kMaxSupportGrid, side)) return 2;
      a.edgetap.support_grid = side;
    } else if (arg == "--quiet") {
      a.quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "edgetap eval: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    } else {
      a.inputs.push_back(arg);
    }
  }
  if (a.inputs.empty()) {
    std::fprintf(stderr, "edgetap eval: nothing to evaluate\n%s", kUsage);
    return 2;
  }
  if (!a.edgetap.model.empty() && config::tracker_kind(a.eval.tracker) != config::TrackerKind::edgetap) {
    std::fprintf(stderr, "edgetap eval: --model names edgetap weights; the tracker here is '%s'\n",
                 a.eval.tracker.c_str());
    return 2;
  }
  if (a.score_clips && a.eval.every != 1) {
    std::fprintf(stderr, "edgetap eval: --every applies to datasets with ground truth, not to --gt-free\n");
    return 2;
  }
  if (!a.replay_file.empty()) {
    if (!a.record_dir.empty() || a.edgetap != config::EdgeTapSettings{}) {
      std::fprintf(stderr, "edgetap eval: --replay-trace scores recorded answers; --record-trace, --model, "
                           "--iters, --no-refinement and --support-grid do not apply\n");
      return 2;
    }
    if (!a.tracker_named) a.eval.tracker = "replay";
  }
  return 0;
}

bool write_json(const std::string& file, const std::string& text) {
  if (file.empty()) return true;
  std::ofstream out(file);
  out << text;
  if (!out) {
    std::fprintf(stderr, "edgetap eval: cannot write %s\n", file.c_str());
    return false;
  }
  std::printf("wrote %s\n", file.c_str());
  return true;
}

int score_datasets(const Arguments& a, const eval::TrackerFactory& make_tracker) {
  eval::ProgressLine progress(!a.quiet);
  std::vector<eval::DatasetResult> results;
  for (const std::string& input : a.inputs) {
    results.push_back(eval::evaluate_dataset(eval::find_dataset(input), make_tracker, a.eval, progress));
    const eval::DatasetResult& d = results.back();
    std::vector<const eval::SequenceResult*> rows;
    for (const auto& s : d.sequences) rows.push_back(&s);
    const std::string cadence = a.eval.every > 1 ? ", every " + std::to_string(a.eval.every) + " frames" : "";
    std::printf("\n%s", eval::format_table(d.name + " (" + d.path + "): " + a.eval.tracker + " at " +
                                               eval::to_string(a.eval.size) + cadence,
                                           rows, eval::summarize(rows, a.eval.modes))
                            .c_str());
  }
  if (results.size() > 1) {
    const auto all = eval::all_sequences(results);
    std::printf("\n%s", eval::format_table("overall: mean over " + std::to_string(all.size()) + " sequences", {},
                                           eval::summarize(all, a.eval.modes))
                            .c_str());
  }
  return write_json(a.json_file, eval::format_json(results, a.eval)) ? 0 : 1;
}

int score_clips(const Arguments& a, const eval::TrackerFactory& make_tracker) {
  eval::ProgressLine progress(!a.quiet);
  std::vector<eval::GtFreeResult> results;
  for (const std::string& input : a.inputs) {
    std::filesystem::path path(input);
    if (!path.has_filename()) path = path.parent_path();  // "clip/" names "clip"
    const std::string name = path.filename().string();
    progress.update(name + ": reading");
    const auto frames = eval::load_clip_frames(input, a.eval.size, a.gt_free.max_frames);
    results.push_back(eval::score_without_ground_truth(name, frames, make_tracker, a.gt_free, [&](int done, int total) {
      progress.update(name + ": frame " + std::to_string(done) + "/" + std::to_string(total));
    }));
    progress.finish(name + ": " + std::to_string(frames.size()) + " frames");
  }
  std::printf("\n%s at %s, %dx%d queries, px at 256x256\n%s", a.eval.tracker.c_str(),
              eval::to_string(a.eval.size).c_str(), a.gt_free.grid, a.gt_free.grid,
              eval::format_gt_free_table(results).c_str());
  return write_json(a.json_file, eval::format_gt_free_json(results, a.eval.tracker, eval::to_string(a.eval.size),
                                                          a.gt_free))
             ? 0
             : 1;
}

}  // namespace

int eval_command(int argc, char** argv) {
  Arguments a;
  bool done = false;
  if (const int status = parse(argc, argv, a, done); status != 0 || done) return status;
  eval::TrackerFactory make_tracker;
  std::optional<eval::TraceReplay> replay;
  std::optional<eval::TraceRecorder> recorder;
  try {
    if (!a.replay_file.empty()) {
      replay.emplace(a.replay_file, a.eval.tracker);
      make_tracker = replay->factory();
    } else {
      make_tracker = eval::tracker_factory(a.eval.tracker, a.eval.size, a.edgetap);
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "edgetap eval: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // an unreadable trace
    std::fprintf(stderr, "edgetap eval: %s\n", e.what());
    return 1;
  }
  try {
    if (!a.record_dir.empty()) make_tracker = recorder.emplace(a.record_dir).wrap(make_tracker);
    const auto started = std::chrono::steady_clock::now();
    const int status = a.score_clips ? score_clips(a, make_tracker) : score_datasets(a, make_tracker);
    if (replay) replay->check_complete();
    if (recorder) {
      std::printf("wrote the trace %s (%d passes, %lld frames)\n", a.record_dir.c_str(), recorder->passes(),
                  recorder->frames());
    }
    if (!a.quiet) {
      std::fprintf(stderr, "edgetap eval: %.1f s\n",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\nedgetap eval: %s\n", e.what());
    return 1;
  }
}

}  // namespace edgetap::cli
