// edgetap-trace-run: answers a recorded tracker trace with the edgetap network,
// writing the answered trace that `edgetap eval --replay-trace` scores. Each
// pass runs on a fresh tracker over a fresh session of the chosen engine.
// Formats: engine/include/edgetap/tracker_trace.hpp; workflow: eval/README.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "answer_pass.hpp"
#include "edgetap/cli/command_line.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/streaming_session.hpp"

namespace {

using namespace edgetap;

constexpr const char* kDescription =
    "Answers the trace in TRACE_DIR (trace.jsonl and frames/, from edgetap eval --record-trace) with the edgetap\n"
    "network and writes the answered trace to OUT_FILE, for edgetap eval --replay-trace OUT_FILE.";
constexpr const char* kFooter = "Exit status: 0 answered, 1 bad input or a tracker failure, 2 bad arguments.";

struct Options {
  std::filesystem::path trace;
  std::filesystem::path out;
  std::string model;
  backend::EngineKind engine = backend::EngineKind::cpu;
  std::optional<float> visible_threshold;
  int iters = 0;
  bool refine = true;
  std::optional<int> support_grid;
  bool quiet = false;
};

std::string default_model() {
  const std::string relative = "models/edgetap-small.safetensors";
  if (std::filesystem::exists(relative)) return relative;
  return std::string(EDGETAP_SOURCE_DIR) + "/" + relative;
}

// Returns -1 when parsed, else the exit status (0 after the help, 2 for bad arguments).
int parse(int argc, char** argv, Options& o) {
  CLI::App app(kDescription, "edgetap-trace-run");
  cli::configure_app(app, kDescription, kFooter);
  std::string trace, out;
  app.add_option("TRACE_DIR", trace, "the recorded trace's folder (or its trace.jsonl)")->required();
  app.add_option("OUT_FILE", out, "the answered trace to write")->required();
  app.add_option("--model", o.model,
                 "the network's weights, its .json beside (default: models/edgetap-small.safetensors); use the "
                 "recording's model")
      ->type_name("FILE");
  cli::add_checked_option(app, "--engine", "cpu (default), cuda-fp32 or cuda-fp16 (CUDA builds only)",
                          [&o](const std::string& name) {
                            const auto kind = backend::engine_named(name);
                            if (!kind) {
                              std::fprintf(stderr, "edgetap-trace-run: --engine must be cpu, cuda-fp32 or cuda-fp16, "
                                                   "not '%s'\n", name.c_str());
                              return false;
                            }
                            if (*kind != backend::EngineKind::cpu && !backend::have_cuda_engine()) {
                              std::fprintf(stderr, "edgetap-trace-run: --engine %s: this build has no CUDA engine "
                                                   "(build with EDGETAP_CUDA=ON, e.g. the core-only preset on a GPU "
                                                   "host)\n", name.c_str());
                              return false;
                            }
                            o.engine = *kind;
                            return true;
                          })
      ->type_name("ENGINE");
  double visible = 0;
  auto* threshold = cli::add_real_option(app, "--visible-threshold",
                                         "a point is visible when the model's visible score >= X (default: the "
                                         "model's own)", 0, 1, visible)
                             ->type_name("X");
  cli::add_int_option(app, "--iters", "refinement iterations per frame (default: the model's own)", 1, 16, o.iters)
      ->type_name("N");
  bool unrefined = false;
  app.add_flag("--no-refinement", unrefined,
               "publish the network's positions, without the template refinement the model's .json may declare");
  int support = 0;
  auto* grid = cli::add_int_option(app, "--support-grid",
                                   "track an unpublished N x N grid of support points from each pass's first frame "
                                   "(default: the model's .json; 0: none)", 0, engine::kMaxSupportGrid, support)
                   ->type_name("N");
  app.add_flag("--quiet", o.quiet, "no progress on stderr");
  if (const int status = cli::parse_command_line(app, argc, argv); status >= 0) return status;
  o.trace = trace;
  o.out = out;
  if (threshold->count() > 0) o.visible_threshold = static_cast<float>(visible);
  o.refine = !unrefined;
  if (grid->count() > 0) o.support_grid = support;
  if (o.model.empty()) o.model = default_model();
  return -1;
}

int run(const Options& o) {
  // TRACE_DIR, or its trace.jsonl named directly.
  const std::filesystem::path file =
      std::filesystem::is_directory(o.trace) ? o.trace / trace::kTraceFile : o.trace;
  const trace::Trace recorded = trace::read_trace(file);
  const auto network = std::make_shared<const engine::Network>(
      engine::load_network(o.model, std::filesystem::path(o.model).replace_extension(".json").string()));
  std::ofstream out(o.out);
  if (!out) throw std::runtime_error(o.out.string() + ": cannot write");

  const auto started = std::chrono::steady_clock::now();
  replay::PassStats total;
  const std::size_t passes = recorded.passes.size();
  for (std::size_t p = 0; p < passes; ++p) {
    backend::Publishing publishing;
    publishing.visible_threshold = o.visible_threshold;
    publishing.refine = o.refine;
    publishing.support_grid = o.support_grid;
    engine::EdgeTapTracker tracker(network, backend::make_session(o.engine, *network, o.iters, publishing),
                                   o.visible_threshold);
    const replay::PassStats stats = replay::answer_pass(recorded, p, tracker, file.parent_path(), out);
    total.frames += stats.frames;
    total.track_seconds += stats.track_seconds;
    if (!o.quiet) {
      std::fprintf(stderr, "\rpass %zu/%zu: %d frames, %.1f ms per frame   ", p + 1, passes, stats.frames,
                   stats.frames > 0 ? 1e3 * stats.track_seconds / stats.frames : 0.0);
    }
  }
  out.flush();
  if (!out) throw std::runtime_error(o.out.string() + ": cannot write");
  std::printf("%sanswered %zu passes, %d frames with %s (%s) in %.1f s, %.2f ms per frame in the tracker: %s\n",
              o.quiet ? "" : "\n", passes, total.frames, backend::to_string(o.engine), o.model.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              total.frames > 0 ? 1e3 * total.track_seconds / total.frames : 0.0, o.out.string().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%sedgetap-trace-run: %s\n", o.quiet ? "" : "\n", e.what());
    return 1;
  }
}
