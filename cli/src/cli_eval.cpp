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
#include "edgetap/cli/command_line.hpp"
#include "edgetap/cli/option_numbers.hpp"
#include "edgetap/engine/model_config.hpp"

namespace edgetap::cli {
namespace {

constexpr const char* kDescription = R"(Forms: edgetap eval [--tracker NAME] [options] DATASET_DIR...
       edgetap eval --gt-free [--tracker NAME] [options] CLIP...

Scores a tracker on datasets with ground truth (TAP-Vid AJ, <delta_avg, OA at
256x256; PCK@0.2 where gt.json has mask areas), or on clips without ground
truth (forward-backward cycle error, jitter of static tracks). A DATASET_DIR is
a folder of sequence folders (frames/ or video.mp4, and gt.json) or one sequence.)";

constexpr const char* kFooter = "Exit status: 0 scored, 1 bad input or a tracker failure, 2 bad arguments.";

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

void add_options(CLI::App& app, Arguments& a) {
  app.add_option_function<std::string>(
         "--tracker",
         [&a](const std::string& name) {
           a.eval.tracker = name;
           a.tracker_named = true;
         },
         "tracker to score: klt (default) or edgetap (the network, bundled model)")
      ->type_name("NAME");
  add_checked_option(app, "--mode", "first (default), strided or both; strided adds a pass backward in time",
                     [&a](const std::string& mode) {
                       if (mode == "first") {
                         a.eval.modes = {eval::QueryMode::first};
                       } else if (mode == "strided") {
                         a.eval.modes = {eval::QueryMode::strided};
                       } else if (mode == "both") {
                         a.eval.modes = {eval::QueryMode::first, eval::QueryMode::strided};
                       } else {
                         std::fprintf(stderr, "edgetap eval: --mode must be first, strided or both, not '%s'\n",
                                      mode.c_str());
                         return false;
                       }
                       return true;
                     })
      ->type_name("MODE");
  add_int_option(app, "--iters", "edgetap: refinement iterations per frame (default: the model's own)", 1, 16,
                 a.edgetap.iters)
      ->type_name("N");
  app.add_option("--model", a.edgetap.model,
                 "edgetap: the network's weights (.safetensors, its .json beside; default: the bundled "
                 EDGETAP_INSTALL_DATA_DIR "/models/edgetap-small.safetensors)")
      ->type_name("FILE");
  app.add_flag_callback(
      "--no-refinement", [&a] { a.edgetap.template_refinement = false; },
      "edgetap: score the network's positions, without the template refinement the model's .json may declare "
      "(INFERENCE.md in the sources' models/)");
  add_checked_option(app, "--support-grid",
                     "edgetap: track an unpublished N x N grid of support points from each clip's first frame "
                     "(default: the model's .json, support_grid; 0: none)",
                     [&a](const std::string& text) {
                       int side = 0;
                       if (!daemon::read_int_option("edgetap eval", "--support-grid", text.c_str(), 0,
                                                    engine::kMaxSupportGrid, side)) {
                         return false;
                       }
                       a.edgetap.support_grid = side;
                       return true;
                     })
      ->type_name("N");
  add_checked_option(app, "--size", "frame size the tracker sees (default 256x256); \"native\" keeps each clip's",
                     [&a](const std::string& text) {
                       if (eval::parse_frame_size(text, a.eval.size)) return true;
                       std::fprintf(stderr, "edgetap eval: --size must be WxH (16..8192) or native, not '%s'\n",
                                    text.c_str());
                       return false;
                     })
      ->type_name("WxH");
  add_int_option(app, "--every",
                 "the tracker sees every N-th frame (and each query's own), as a ladder rung with `stride: N` does; "
                 "the frames between are scored at the last answers, which is what a subscriber holds (default 1)",
                 1, 64, a.eval.every)
      ->type_name("N");
  app.add_option("--json", a.json_file, "write every score as JSON")->type_name("FILE");
  app.add_option("--overlay", a.eval.overlay_dir, "write a strip per sequence: predictions against ground truth")
      ->type_name("DIR");
  app.add_flag("--gt-free", a.score_clips, "score CLIPs (video files or folders of frames) without ground truth");
  add_int_option(app, "--frames", "--gt-free: frames per clip (default 100)", 2, 1000000, a.gt_free.max_frames)
      ->type_name("N");
  add_int_option(app, "--grid", "--gt-free: N x N queries in the first frame (default 16)", 1, 256, a.gt_free.grid)
      ->type_name("N");
  app.add_flag("--quiet", a.quiet, "no progress on stderr");
  app.add_option("--record-trace", a.record_dir,
                 "also write every tracker call and frame to DIR (new or empty), for edgetap-trace-run on a host "
                 "without OpenCV (README.md in the sources' eval/)")
      ->type_name("DIR");
  app.add_option("--replay-trace", a.replay_file,
                 "score the answers in FILE (edgetap-trace-run's output) instead of running a tracker: the same "
                 "datasets and options as the recording; --tracker only names what is printed (default \"replay\")")
      ->type_name("FILE");
  app.add_option("INPUT", a.inputs, "DATASET_DIR... or, with --gt-free, CLIP...")->type_name("PATH");
}

// Returns -1 when parsed, else the exit status (0 after the help).
int parse(int argc, char** argv, Arguments& a) {
  CLI::App app(kDescription, "edgetap eval");
  configure_app(app, kDescription, kFooter);
  add_options(app, a);
  if (const int status = parse_command_line(app, argc, argv); status >= 0) return status;
  if (a.inputs.empty()) {
    return usage_error(app, "nothing to evaluate");
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
  return -1;
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
  if (const int status = parse(argc, argv, a); status >= 0) return status;
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
