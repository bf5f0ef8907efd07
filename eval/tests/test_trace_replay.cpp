// Tracker traces: the line format reads back exactly and names the file and
// line of a bad line; an eval recorded with the edgetap tracker, answered by
// edgetap-trace-run on the CPU engine and replayed, scores exactly as the
// direct run; a replay that receives other calls than the recorded ones
// fails naming the pass, call and id.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "edgetap/eval/dataset_dir.hpp"
#include "edgetap/eval/evaluation.hpp"
#include "edgetap/eval/trace_recorder.hpp"
#include "edgetap/eval/trace_replay.hpp"
#include "edgetap/eval/tracker_registry.hpp"
#include "edgetap/synth/generator.hpp"
#include "edgetap/tracker_trace.hpp"
#include "fixtures.hpp"

using namespace edgetap;
using namespace edgetap::test;

namespace {

const std::string kTinyModel = EDGETAP_SOURCE_DIR "/tests/data/golden/edgetap-tiny-qp3.safetensors";

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string shell_quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) EXPECT_NE(text.find(part), std::string::npos) << part << " not in: " << text;
}

std::vector<eval::DatasetResult> score(const std::filesystem::path& data, const eval::TrackerFactory& factory,
                                       const eval::EvalOptions& options) {
  eval::ProgressLine progress(false);
  return {eval::evaluate_dataset(eval::find_dataset(data), factory, options, progress)};
}

void expect_same_scores(const eval::DatasetResult& a, const eval::DatasetResult& b) {
  ASSERT_EQ(a.sequences.size(), b.sequences.size());
  for (std::size_t s = 0; s < a.sequences.size(); ++s) {
    ASSERT_EQ(a.sequences[s].modes.size(), b.sequences[s].modes.size());
    for (std::size_t m = 0; m < a.sequences[s].modes.size(); ++m) {
      const eval::ModeResult& x = a.sequences[s].modes[m];
      const eval::ModeResult& y = b.sequences[s].modes[m];
      const std::string where = a.sequences[s].name + " mode " + eval::to_string(x.mode);
      EXPECT_EQ(x.queries, y.queries) << where;
      EXPECT_EQ(x.scores.average_jaccard, y.scores.average_jaccard) << where;
      EXPECT_EQ(x.scores.average_within, y.scores.average_within) << where;
      EXPECT_EQ(x.scores.occlusion_accuracy, y.scores.occlusion_accuracy) << where;
      EXPECT_EQ(x.scores.jaccard, y.scores.jaccard) << where;
      EXPECT_EQ(x.scores.within, y.scores.within) << where;
      EXPECT_TRUE(x.pck == y.pck || (std::isnan(x.pck) && std::isnan(y.pck))) << where;
    }
  }
}

// An answered trace of one pass: a 4x2 frame, query q0, a second frame.
constexpr const char* kAnswered =
    R"({"pass":0,"op":"push_frame","frame":0,"file":"frames/a.png","width":4,"height":2,"points":[]}
{"pass":0,"op":"add_queries","queries":[{"id":"q0","x":1.5,"y":0.5}]}
{"pass":0,"op":"push_frame","frame":1,"file":"frames/b.png","width":4,"height":2,"points":[{"id":"q0","x":2.5,"y":0.5,"visible":true,"confidence":0.75,"lost":false}]}
)";

}  // namespace

TEST(TrackerTrace, LinesReadBackExactly) {
  trace::Call push;
  push.pass = 3;
  push.frame = 7;
  push.file = "frames/p00003-f000007.png";
  push.width = 256;
  push.height = 192;
  push.points = std::vector<TrackPoint>{{"q1", 0.1f, 1e-30f, true, 0.3333333f, false},
                                        {"q2", std::numeric_limits<float>::quiet_NaN(), -7.25f, false, 1.f, true}};
  const trace::Call back = trace::parse_call(trace::format_call(push));
  EXPECT_EQ(back.pass, 3);
  EXPECT_EQ(back.op, trace::Op::push_frame);
  EXPECT_EQ(back.frame, 7);
  EXPECT_EQ(back.file, push.file);
  EXPECT_EQ(back.width, 256);
  EXPECT_EQ(back.height, 192);
  ASSERT_TRUE(back.points.has_value());
  ASSERT_EQ(back.points->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const TrackPoint& a = (*push.points)[i];
    const TrackPoint& b = (*back.points)[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.y), std::bit_cast<std::uint32_t>(b.y));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.confidence), std::bit_cast<std::uint32_t>(b.confidence));
    EXPECT_EQ(a.visible, b.visible);
    EXPECT_EQ(a.lost, b.lost);
  }
  EXPECT_EQ(std::bit_cast<std::uint32_t>((*back.points)[0].x), std::bit_cast<std::uint32_t>(0.1f));
  EXPECT_TRUE(std::isnan((*back.points)[1].x));

  trace::Call add;
  add.op = trace::Op::add_queries;
  add.queries = {{"q0", 12.345678f, 0.f}};
  const trace::Call add_back = trace::parse_call(trace::format_call(add));
  ASSERT_EQ(add_back.queries.size(), 1u);
  EXPECT_EQ(add_back.queries[0].id, "q0");
  EXPECT_EQ(add_back.queries[0].x, 12.345678f);
}

TEST(TrackerTrace, BadLinesNameTheFileAndLine) {
  TempDir dir("trace-bad");
  const auto file = dir.path() / "trace.jsonl";
  const std::string good = R"({"pass":0,"op":"remove_queries","ids":["q0"]})";
  const auto error_for = [&](const std::string& second_line, bool answered = false) {
    write_text(file, good + "\n" + second_line + "\n");
    return message_of([&] { trace::read_trace(file, answered); });
  };
  expect_contains(error_for(R"({"pass":0,"op":"jump"})"), {file.string() + ":2:", "unknown \"op\" \"jump\""});
  expect_contains(error_for(R"({"pass":0,"op":"remove_queries"})"), {":2:", "missing \"ids\""});
  expect_contains(error_for("{not json"), {":2:", "not a JSON line"});
  expect_contains(error_for(R"({"pass":0,"op":"remove_queries","ids":[)" + std::string(100000, '[') +
                            std::string(100000, ']') + "]}"),
                  {":2:", "nested more than"});
  expect_contains(error_for(R"({"pass":-1,"op":"remove_queries","ids":[]})"), {":2:", "\"pass\""});
  expect_contains(error_for(R"({"pass":0,"op":"push_frame","frame":0,"file":"../x.png","width":4,"height":2})"),
                  {":2:", "inside the trace's folder"});
  expect_contains(error_for(R"({"pass":1,"op":"push_frame","frame":1,"file":"f.png","width":4,"height":2})"),
                  {":2: pass 1:", "\"frame\" 1, expected 0"});
  expect_contains(error_for(R"({"pass":0,"op":"push_frame","frame":0,"file":"f.png","width":4,"height":2})", true),
                  {":2: pass 0:", "not an answered trace"});
  expect_contains(message_of([&] { trace::read_trace(dir.path() / "none.jsonl"); }), {"none.jsonl", "cannot read"});
}

TEST(TraceReplay, ADifferentCallSequenceIsAClearError) {
  TempDir dir("trace-mismatch");
  const auto file = dir.path() / "answered.jsonl";
  write_text(file, kAnswered);
  const std::vector<std::uint8_t> pixels(4 * 2 * 3, 0);
  const ImageView frame{pixels.data(), 4, 2, 12};
  std::vector<TrackPoint> out;

  {  // The recorded calls replay; the answers are the recorded ones.
    eval::TraceReplay replay(file, "edgetap-fp16");
    auto tracker = replay.factory()();
    EXPECT_EQ(tracker->name(), "edgetap-fp16");
    ASSERT_TRUE(tracker->push_frame(frame, out));
    tracker->add_queries(std::vector<Query>{{"q0", 1.5f, 0.5f}});
    ASSERT_TRUE(tracker->push_frame(frame, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].x, 2.5f);
    EXPECT_EQ(out[0].confidence, 0.75f);
    EXPECT_NO_THROW(replay.check_complete());
  }
  {  // Another id.
    eval::TraceReplay replay(file, "edgetap");
    auto tracker = replay.factory()();
    ASSERT_TRUE(tracker->push_frame(frame, out));
    const std::string error = message_of([&] { tracker->add_queries(std::vector<Query>{{"q7", 1.5f, 0.5f}}); });
    expect_contains(error, {file.string() + ":2: pass 0:", "call 2", "id q7", "id q0"});
  }
  {  // Another op: push_frame where the trace adds queries.
    eval::TraceReplay replay(file, "edgetap");
    auto tracker = replay.factory()();
    ASSERT_TRUE(tracker->push_frame(frame, out));
    const Status status = tracker->push_frame(frame, out);
    ASSERT_FALSE(status);
    expect_contains(status.message(), {":2: pass 0:", "call 2", "push_frame where the trace has add_queries"});
  }
  {  // Another frame size, another position, one pass too many, a run that stops early.
    eval::TraceReplay replay(file, "edgetap");
    auto tracker = replay.factory()();
    const ImageView small{pixels.data(), 2, 2, 12};
    expect_contains(tracker->push_frame(small, out).message(), {":1: pass 0:", "2x2", "4x2"});
    EXPECT_TRUE(out.empty());
    auto extra = replay.factory()();
    expect_contains(extra->push_frame(frame, out).message(), {"pass 1: call 1 (push_frame) is past"});
    expect_contains(message_of([&] { replay.check_complete(); }), {":1: pass 0:", "ended before call 1"});
  }
  {
    eval::TraceReplay replay(file, "edgetap");
    auto tracker = replay.factory()();
    ASSERT_TRUE(tracker->push_frame(frame, out));
    expect_contains(message_of([&] { tracker->add_queries(std::vector<Query>{{"q0", 1.5f, 0.25f}}); }),
                    {"pass 0", "id q0 at (1.5, 0.25)", "(1.5, 0.5)"});
  }
  // A recorded trace (no answers) is not replayed.
  write_text(file, R"({"pass":0,"op":"push_frame","frame":0,"file":"f.png","width":4,"height":2})" "\n");
  expect_contains(message_of([&] { eval::TraceReplay(file, "edgetap"); }), {"not an answered trace"});
}

TEST(TraceReplay, CpuAnswersOfARecordedEvalScoreExactlyAsTheDirectRun) {
#ifndef EDGETAP_TRACE_RUN
  GTEST_SKIP() << "edgetap-trace-run is not built (it needs the static libpng and zlib)";
#else
  TempDir dir("trace-eval");
  write_fixture_images(dir.path() / "images", 2);
  synth::SynthOptions o = fixture_options(dir.path() / "images");
  o.frames = 6;
  o.points = 12;
  synth::generate(o, dir.path() / "data");
  eval::EvalOptions options;
  options.size = {128, 128};  // not the sequences' 160x128: positions map between the two
  options.modes = {eval::QueryMode::first, eval::QueryMode::strided};
  options.stride = 2;

  const auto trace_dir = dir.path() / "trace";
  eval::TraceRecorder recorder(trace_dir);
  const auto direct =
      score(dir.path() / "data", recorder.wrap(eval::tracker_factory("edgetap", options.size, {.model = kTinyModel})), options);
  EXPECT_EQ(recorder.passes(), 2 * 3);  // per sequence: first; strided forward and backward
  EXPECT_EQ(recorder.frames(), 2 * 3 * 6);
  expect_contains(message_of([&] { eval::TraceRecorder again(trace_dir); }), {trace_dir.string(), "new or empty"});

  const auto answered = dir.path() / "answered.jsonl";
  const CommandResult run = run_command(std::string(EDGETAP_TRACE_RUN) + " " + shell_quoted(trace_dir) + " " +
                                        shell_quoted(answered) + " --engine cpu --quiet --model " + shell_quoted(kTinyModel));
  ASSERT_EQ(run.status, 0) << run.output;
  expect_contains(run.output, {"answered 6 passes, 36 frames with cpu"});

  eval::TraceReplay replay(answered, "edgetap");
  const auto replayed = score(dir.path() / "data", replay.factory(), options);
  EXPECT_NO_THROW(replay.check_complete());
  expect_same_scores(direct[0], replayed[0]);
  EXPECT_GT(direct[0].sequences[0].modes[0].scores.occlusion_accuracy, 0.0);

  // The runner's errors name the trace line, pass and frame file; bad arguments are refused.
  std::filesystem::remove(trace_dir / "frames" / "p00001-f000002.png");
  const CommandResult missing = run_command(std::string(EDGETAP_TRACE_RUN) + " " + shell_quoted(trace_dir) + " " +
                                            shell_quoted(dir.path() / "x.jsonl") + " --quiet --model " + shell_quoted(kTinyModel));
  EXPECT_EQ(missing.status, 1);
  expect_contains(missing.output, {"trace.jsonl:", "pass 1:", "p00001-f000002.png"});
  const CommandResult bad = run_command(std::string(EDGETAP_TRACE_RUN) + " " + shell_quoted(trace_dir) + " " +
                                        shell_quoted(dir.path() / "x.jsonl") + " --engine tpu");
  EXPECT_EQ(bad.status, 2);
  expect_contains(bad.output, {"--engine must be cpu, cuda-fp32 or cuda-fp16"});
#endif
}
