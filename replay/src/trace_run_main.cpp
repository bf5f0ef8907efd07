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
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/streaming_session.hpp"

namespace {

using namespace edgetap;

constexpr const char* kUsage = R"(usage: edgetap-trace-run TRACE_DIR OUT_FILE [options]

Answers the trace in TRACE_DIR (trace.jsonl and frames/, from edgetap eval
--record-trace) with the edgetap network and writes the answered trace to
OUT_FILE, for edgetap eval --replay-trace OUT_FILE.
  --model FILE.safetensors  the network's weights, its .json beside (default:
                      models/edgetap-small.safetensors); use the recording's model
  --engine ENGINE     cpu (default), cuda-fp32 or cuda-fp16 (CUDA builds only)
  --visible-threshold X  a point is visible when the model's visible score >= X
                      (default: the model's own)
  --iters N           refinement iterations per frame (default: the model's own)
  --no-refinement     publish the network's positions, without the template
                      refinement the model's .json may declare
  --support-grid N    track an unpublished N x N grid of support points from each
                      pass's first frame (default: the model's .json; 0: none)
  --quiet             no progress on stderr
Exit status: 0 answered, 1 bad input or a tracker failure, 2 bad arguments.
)";

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

bool read_number(const char* text, double lo, double hi, double& out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) return false;
  out = v;
  return true;
}

// Returns 0 when parsed, else the exit status (help: 0 with `done`).
int parse(int argc, char** argv, Options& o, bool& done) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    double number = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      done = true;
      return 0;
    } else if (arg == "--model" && has_value) {
      o.model = argv[++i];
    } else if (arg == "--engine" && has_value) {
      const auto kind = backend::engine_named(argv[++i]);
      if (!kind) {
        std::fprintf(stderr, "edgetap-trace-run: --engine must be cpu, cuda-fp32 or cuda-fp16, not '%s'\n", argv[i]);
        return 2;
      }
      if (*kind != backend::EngineKind::cpu && !backend::have_cuda_engine()) {
        std::fprintf(stderr, "edgetap-trace-run: --engine %s: this build has no CUDA engine (build with "
                             "EDGETAP_CUDA=ON, e.g. the core-only preset on a GPU host)\n", argv[i]);
        return 2;
      }
      o.engine = *kind;
    } else if (arg == "--visible-threshold" && has_value) {
      if (!read_number(argv[++i], 0, 1, number)) {
        std::fprintf(stderr, "edgetap-trace-run: --visible-threshold must be a number in [0, 1], not '%s'\n", argv[i]);
        return 2;
      }
      o.visible_threshold = static_cast<float>(number);
    } else if (arg == "--iters" && has_value) {
      if (!read_number(argv[++i], 1, 16, number) || number != static_cast<int>(number)) {
        std::fprintf(stderr, "edgetap-trace-run: --iters must be an integer in [1, 16], not '%s'\n", argv[i]);
        return 2;
      }
      o.iters = static_cast<int>(number);
    } else if (arg == "--no-refinement") {
      o.refine = false;
    } else if (arg == "--support-grid" && has_value) {
      if (!read_number(argv[++i], 0, engine::kMaxSupportGrid, number) || number != static_cast<int>(number)) {
        std::fprintf(stderr, "edgetap-trace-run: --support-grid must be an integer in [0, %d], not '%s'\n",
                     engine::kMaxSupportGrid, argv[i]);
        return 2;
      }
      o.support_grid = static_cast<int>(number);
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "edgetap-trace-run: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) {
    std::fprintf(stderr, "edgetap-trace-run: give TRACE_DIR and OUT_FILE\n%s", kUsage);
    return 2;
  }
  o.trace = positional[0];
  o.out = positional[1];
  if (o.model.empty()) o.model = default_model();
  return 0;
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
  bool done = false;
  if (const int status = parse(argc, argv, o, done); status != 0 || done) return status;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%sedgetap-trace-run: %s\n", o.quiet ? "" : "\n", e.what());
    return 1;
  }
}
