// Configuration loading: the shipped example, overrides, and one test per
// class of bad input, each checking the message names line and key.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "edgetap/config/load.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap::config;

namespace {

// Loads `yaml` expecting failure; returns every problem as text.
std::string problems_of(const std::string& yaml) {
  try {
    load_string(yaml, "test.yaml", "/base");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected the configuration to be rejected:\n" << yaml;
  return "";
}

}  // namespace

std::string shipped_configuration() {
  std::ifstream in(std::string(EDGETAP_SOURCE_DIR) + "/config/edgetap.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Config, ShippedConfigurationStartsNoCamera) {
  const Config config = load_file(std::string(EDGETAP_SOURCE_DIR) + "/config/edgetap.yaml");
  EXPECT_TRUE(config.cameras.empty());
  EXPECT_EQ(config.publisher.socket_path, "/run/edgetap/tracks.sock");
}

// The commented camera examples are what an operator uncomments: they must load as written.
TEST(Config, ShippedCameraExamplesLoadWhenUncommented) {
  std::istringstream in(shipped_configuration());
  std::string text, line;
  while (std::getline(in, line)) {
    if (line == "cameras: []") line = "cameras:";
    if (line.rfind("#  ", 0) == 0) line = line.substr(1);  // "#  - name: ..." and its indented keys
    text += line + "\n";
  }
  const Config config = load_string(text, "uncommented.yaml", "/etc/edgetap");
  ASSERT_EQ(config.cameras.size(), 5u) << text;
  EXPECT_EQ(config.cameras[0].source.kind, SourceKind::rtsp);
  EXPECT_EQ(config.cameras[1].source.kind, SourceKind::v4l2);
  EXPECT_EQ(config.cameras[2].source.kind, SourceKind::file);
  EXPECT_EQ(config.cameras[2].queries.policy, QueryPolicy::points);
  EXPECT_EQ(config.cameras[3].source.kind, SourceKind::file);  // the demo clip (the README's quick start)
  EXPECT_EQ(config.cameras[3].source.location, "/usr/share/edgetap/demo/vtest-pedestrians.avi");
  EXPECT_EQ(config.cameras[3].capture.at_eof, AtEof::loop);
  EXPECT_EQ(config.cameras[4].source.kind, SourceKind::test);
}

TEST(Config, EmptyCameraListIsValidButMissingListIsNot) {
  EXPECT_TRUE(load_string("cameras: []\n", "test.yaml", "/base").cameras.empty());
  const std::string text = problems_of("version: 1\n");
  EXPECT_NE(text.find("cameras: expected a list of cameras"), std::string::npos) << text;
}

TEST(Config, CameraOverridesDefaultsMapsMergeListsReplace) {
  const Config config = load_string(R"(
defaults:
  budget_ms: 40
  klt: {window: 15, levels: 2}
  queries: {policy: points, points: [{id: a, x: 1, y: 2}, {id: b, x: 3, y: 4}]}
cameras:
  - name: one
    source: test:ball
    klt: {levels: 4}
    queries: {points: [{id: c, x: 5, y: 6}]}
    edgetap: {visible_threshold: 0.4, template_refinement: false, support_grid: 0}
  - name: two
    source: file://clip.mp4
)",
                                    "test.yaml", "/base");
  ASSERT_EQ(config.cameras.size(), 2u);
  const CameraConfig& one = config.cameras[0];
  EXPECT_EQ(one.budget_ms, 40);
  EXPECT_EQ(one.klt.window, 15);  // merged from defaults
  EXPECT_EQ(one.klt.levels, 4);   // overridden
  ASSERT_EQ(one.queries.points.size(), 1u);  // list replaced, not appended
  EXPECT_EQ(one.queries.points[0].id, "c");
  EXPECT_EQ(one.queries.policy, QueryPolicy::points);
  EXPECT_EQ(one.edgetap.visible_threshold, 0.4);
  const CameraConfig& two = config.cameras[1];
  EXPECT_FALSE(two.edgetap.visible_threshold.has_value());  // the model's own
  EXPECT_FALSE(one.edgetap.template_refinement);
  EXPECT_TRUE(two.edgetap.template_refinement);              // where the model declares it
  EXPECT_EQ(one.edgetap.support_grid, 0);                    // none
  EXPECT_FALSE(two.edgetap.support_grid.has_value());        // the model's own
  EXPECT_EQ(two.queries.points.size(), 2u);
  EXPECT_EQ(two.source.kind, SourceKind::file);
  EXPECT_EQ(two.source.location, "/base/clip.mp4");
}

TEST(Config, WrongTypeNamesLineAndKey) {
  const std::string text = problems_of("cameras:\n  - name: a\n    source: test:ball\n    budget_ms: fast\n");
  EXPECT_NE(text.find("test.yaml:4:16: cameras[0] (camera 'a').budget_ms"), std::string::npos) << text;
  EXPECT_NE(text.find("expected a number in [1, 60000], got 'fast'"), std::string::npos) << text;
}

TEST(Config, OutOfRangeGivesAllowedRange) {
  const std::string text = problems_of("defaults:\n  queries:\n    grid: [0, 8]\ncameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(text.find("test.yaml:3:11: defaults.queries.grid"), std::string::npos) << text;
  EXPECT_NE(text.find("each in [1, 128]"), std::string::npos) << text;
}

TEST(Config, UnknownKeySuggestsClosest) {
  const std::string text = problems_of("cameras:\n  - name: a\n    source: test:ball\n    budegt_ms: 20\n");
  EXPECT_NE(text.find("test.yaml:4:5:"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown key 'budegt_ms'; did you mean 'budget_ms'?"), std::string::npos) << text;
}

TEST(Config, MissingSourceIsReported) {
  const std::string text = problems_of("cameras:\n  - name: lobby\n    budget_ms: 20\n");
  EXPECT_NE(text.find("test.yaml:2:5:"), std::string::npos) << text;
  EXPECT_NE(text.find("camera 'lobby'"), std::string::npos) << text;
  EXPECT_NE(text.find("missing 'source'"), std::string::npos) << text;
}

TEST(Config, DuplicateCameraNames) {
  const std::string text =
      problems_of("cameras:\n  - {name: gate, source: test:ball}\n  - {name: gate, source: test:snow}\n");
  EXPECT_NE(text.find("test.yaml:3:12: cameras[1].name: duplicate camera name 'gate' (first defined on line 2)"),
            std::string::npos)
      << text;
}

TEST(Config, MalformedYamlGivesLine) {
  const std::string text = problems_of("cameras:\n  - name: a\n    source: [test:ball\n");
  EXPECT_NE(text.find("test.yaml:4:"), std::string::npos) << text;
  EXPECT_NE(text.find("malformed YAML"), std::string::npos) << text;
}

TEST(Config, BadSourceAndEvenWindow) {
  const std::string text = problems_of(
      "cameras:\n  - name: a\n    source: ftp://x\n    klt: {window: 20}\n  - name: b\n    source: test:plaid\n");
  EXPECT_NE(text.find("test.yaml:3:13:"), std::string::npos) << text;
  EXPECT_NE(text.find("unsupported source 'ftp://x'"), std::string::npos) << text;
  EXPECT_NE(text.find("must be odd"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown test pattern 'plaid'"), std::string::npos) << text;
}

TEST(Config, EveryProblemIsReportedAtOnce) {
  try {
    load_string("cameras:\n  - name: a\n    source: test:ball\n    budget_ms: -1\n    tracker: raft\n", "t.yaml", "/");
    FAIL() << "accepted a bad file";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 2u) << e.what();
  }
}

TEST(Config, MissingFileIsAConfigError) {
  edgetap::test::TempDir dir;
  EXPECT_THROW(load_file(dir.file("absent.yaml")), ConfigError);
}

TEST(Config, PointsPolicyNeedsPoints) {
  const std::string text = problems_of("cameras:\n  - {name: a, source: test:ball, queries: {policy: points}}\n");
  EXPECT_NE(text.find("policy 'points' needs at least one point"), std::string::npos) << text;
}

TEST(Config, LadderRungModelsResolveAgainstTheFilesFolder) {
  const Config config = load_string(R"(
defaults:
  tracker: edgetap
  ladder: [{model: models/large.safetensors}, {model: /opt/small.safetensors, size: [128, 128]}, {template_refinement: false}, {tracker: klt}]
cameras:
  - {name: a, source: test:ball}
)",
                                    "test.yaml", "/base");
  const std::vector<Rung>& ladder = config.cameras[0].ladder;
  ASSERT_EQ(ladder.size(), 4u);
  EXPECT_EQ(ladder[0].model, "/base/models/large.safetensors");
  EXPECT_EQ(ladder[1].model, "/opt/small.safetensors");
  EXPECT_EQ(ladder[2].model, "");  // the camera's edgetap.model
  EXPECT_FALSE(ladder[0].template_refinement.has_value());  // the camera's setting
  EXPECT_EQ(ladder[2].template_refinement, false);
  EXPECT_EQ(ladder[3].tracker, TrackerKind::klt);
}

TEST(Config, TrackerAndPrecisionAreReadIntoEnumsAndWrittenBackAsTheYamlSpellsThem) {
  const Config config = load_string(R"(
defaults: {tracker: klt}
cameras:
  - {name: a, source: test:ball}
  - {name: b, source: test:ball, tracker: edgetap, ladder: [{precision: fp16}, {tracker: klt}]}
)",
                                    "test.yaml", "/base");
  EXPECT_EQ(config.cameras[0].tracker, TrackerKind::klt);
  EXPECT_EQ(config.cameras[1].tracker, TrackerKind::edgetap);
  EXPECT_EQ(config.cameras[1].ladder[0].tracker, TrackerKind::edgetap);
  EXPECT_EQ(config.cameras[1].ladder[0].precision, Precision::fp16);
  EXPECT_EQ(config.cameras[1].ladder[1].tracker, TrackerKind::klt);
  EXPECT_EQ(config.cameras[1].ladder[1].precision, Precision::fp32);
  EXPECT_STREQ(to_string(TrackerKind::edgetap), "edgetap");
  EXPECT_STREQ(to_string(TrackerKind::klt), "klt");
  EXPECT_STREQ(to_string(Precision::fp32), "fp32");
  EXPECT_STREQ(to_string(Precision::fp16), "fp16");
  EXPECT_EQ(tracker_kind("klt"), TrackerKind::klt);
  EXPECT_EQ(tracker_kind("edgetap"), TrackerKind::edgetap);
  EXPECT_EQ(tracker_kind("raft"), std::nullopt);

  const std::string text = problems_of(
      "cameras:\n  - name: a\n    source: test:ball\n    tracker: raft\n"
      "    ladder: [{tracker: raft, precision: fp8}]\n");
  EXPECT_NE(text.find("tracker: expected one of klt, edgetap, got 'raft'"), std::string::npos) << text;
  EXPECT_NE(text.find("ladder[0].tracker: expected one of edgetap, klt, got 'raft'"), std::string::npos) << text;
  EXPECT_NE(text.find("ladder[0].precision: expected one of fp32, fp16, got 'fp8'"), std::string::npos) << text;
}

TEST(Config, AKltRungWithAModelIsRejected) {
  const std::string text = problems_of(
      "cameras:\n  - name: a\n    source: test:ball\n    tracker: edgetap\n"
      "    ladder: [{tracker: edgetap}, {tracker: klt, model: small.safetensors}]\n");
  EXPECT_NE(text.find("test.yaml:5:56: cameras[0] (camera 'a').ladder[1].model"), std::string::npos) << text;
  EXPECT_NE(text.find("a klt rung has no model"), std::string::npos) << text;
}

TEST(Config, SupportGridIsASideUpTo32) {
  const std::string text =
      problems_of("cameras:\n  - name: a\n    source: test:ball\n    edgetap: {support_grid: 40}\n");
  EXPECT_NE(text.find("test.yaml:4:"), std::string::npos) << text;
  EXPECT_NE(text.find("edgetap.support_grid"), std::string::npos) << text;
  EXPECT_NE(text.find("32"), std::string::npos) << text;
}

TEST(Config, TemplateRefinementIsABoolean) {
  const std::string text =
      problems_of("cameras:\n  - name: a\n    source: test:ball\n    edgetap: {template_refinement: sometimes}\n");
  EXPECT_NE(text.find("test.yaml:4:"), std::string::npos) << text;
  EXPECT_NE(text.find("edgetap.template_refinement"), std::string::npos) << text;
}

TEST(Config, InheritedEvenWindowIsReportedOnceWhereDefaultsWroteIt) {
  const std::string text = problems_of(
      "defaults:\n  klt: {window: 20}\ncameras:\n  - name: a\n    source: test:ball\n    klt: {levels: 2}\n");
  EXPECT_NE(text.find("test.yaml:2:17: defaults.klt.window: must be odd"), std::string::npos) << text;
  EXPECT_EQ(text.find("must be odd"), text.rfind("must be odd")) << "reported more than once:\n" << text;
}

TEST(Config, InheritedLadderTooLargeIsReportedAtTheDefaultsRung) {
  const std::string text = problems_of(
      "defaults:\n  ladder: [{size: [512, 512]}]\ncameras:\n  - name: a\n    source: test:ball\n"
      "    model_size: [256, 256]\n");
  EXPECT_NE(text.find("test.yaml:2:19: cameras[0] (camera 'a').ladder[0].size: a rung's size must not exceed model_size "
                      "256x256"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inherited from defaults"), std::string::npos) << text;
}

TEST(Config, EveryInheritedSettingThatCanBeBadIsRejectedWithoutAbort) {
  // Each value is bad in `defaults` and a camera overrides a sibling key of the same map:
  // the load must end in a ConfigError naming the defaults' key, never another exception.
  const char* const kBadDefaults[][2] = {
      {"klt: {window: 20}", "klt: {levels: 2}"},
      {"klt: {levels: 9}", "klt: {window: 7}"},
      {"capture: {retry: {initial_ms: 500, max_ms: 100}}", "capture: {queue: 2}"},
      {"capture: {retry: {max_ms: 5}}", "capture: {retry: {initial_ms: 20}}"},
      {"queries: {policy: points}", "queries: {reseed: true}"},
      {"queries: {features: {count: 0}}", "queries: {policy: features}"},
      {"governor: {window: 2}", "governor: {percentile: 90}"},
      {"edgetap: {support_grid: 33}", "edgetap: {template_refinement: false}"},
      {"ladder: [{tracker: klt, model: m.safetensors}]", "budget_ms: 30"},
      {"ladder: [{tracker: klt}, {tracker: edgetap}]", "budget_ms: 30"},
      {"publish: {socket: maybe}", "publish: {mqtt: false}"},
  };
  for (const auto& [bad, sibling] : kBadDefaults) {
    const std::string yaml = std::string("defaults:\n  ") + bad + "\ncameras:\n  - name: a\n    source: test:ball\n    " +
                             sibling + "\n";
    std::string text;
    try {
      load_string(yaml, "test.yaml", "/base");
      ADD_FAILURE() << "accepted:\n" << yaml;
    } catch (const ConfigError& e) {
      text = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw " << e.what() << " instead of a ConfigError for:\n" << yaml;
    }
    EXPECT_NE(text.find("test.yaml:2:"), std::string::npos) << "not reported at the defaults' line:\n" << yaml << "\n"
                                                            << text;
  }
}

TEST(Config, GovernorWarmUpFramesAreReadAndRangeChecked) {
  const Config config = load_string("defaults: {governor: {warmup_frames: 12}}\ncameras:\n  - {name: a, source: test:ball}\n",
                                    "test.yaml", "/base");
  EXPECT_EQ(config.cameras.at(0).governor.warmup_frames, 12);
  const Config defaulted = load_string("cameras:\n  - {name: a, source: test:ball}\n", "test.yaml", "/base");
  EXPECT_EQ(defaulted.cameras.at(0).governor.warmup_frames, GovernorSettings{}.warmup_frames);
  const std::string text = problems_of("cameras:\n  - {name: a, source: test:ball, governor: {warmup_frames: -1}}\n");
  EXPECT_NE(text.find("warmup_frames"), std::string::npos) << text;
  EXPECT_NE(text.find("1000"), std::string::npos) << text;
}

TEST(Config, SocketGroupsAndTheSubscriberLimitAreReadAndChecked) {
  const Config config = load_string(
      "publisher: {max_subscribers: 8, group: root}\ncontrol: {group: daemon}\n"
      "cameras:\n  - {name: a, source: test:ball}\n",
      "test.yaml", "/");
  EXPECT_EQ(config.publisher.max_subscribers, 8);
  EXPECT_EQ(config.publisher.group, "root");
  EXPECT_EQ(config.control.group, "daemon");
  EXPECT_EQ(load_string("cameras:\n  - {name: a, source: test:ball}\n", "t.yaml", "/").publisher.max_subscribers, 64);

  const std::string text = problems_of(
      "publisher:\n  max_subscribers: 0\n  group: no-such-group-h58\ncontrol:\n  group: [wheel]\n"
      "cameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(text.find("test.yaml:2:20: publisher.max_subscribers"), std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:3:10: publisher.group: no group 'no-such-group-h58' on this system"),
            std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:5:10: control.group"), std::string::npos) << text;
}

TEST(Config, TheStateFileIsOffByDefaultAndMustBeAnAbsoluteFilePath) {
  EXPECT_EQ(load_string("cameras:\n  - {name: a, source: test:ball}\n", "t.yaml", "/").control.state_file, "");
  const Config config = load_string(
      "control: {state_file: /var/lib/edgetap/points.json}\ncameras:\n  - {name: a, source: test:ball}\n",
      "test.yaml", "/");
  EXPECT_EQ(config.control.state_file, "/var/lib/edgetap/points.json");

  const std::string relative = problems_of(
      "control:\n  state_file: points.json\ncameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(relative.find("test.yaml:2:15: control.state_file: expected an absolute path"), std::string::npos)
      << relative;
  const std::string directory = problems_of(
      "control:\n  state_file: /var/lib/edgetap/\ncameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(directory.find("test.yaml:2:15: control.state_file"), std::string::npos) << directory;
  const std::string not_text = problems_of(
      "control:\n  state_file: [a]\ncameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(not_text.find("test.yaml:2:15: control.state_file"), std::string::npos) << not_text;
}

TEST(Config, ControlCapsAreReadAndChecked) {
  const Config config = load_string(
      "control: {max_points_per_request: 10, max_points_per_camera: 200, max_id_bytes: 16}\n"
      "cameras:\n  - {name: a, source: test:ball}\n",
      "test.yaml", "/");
  EXPECT_EQ(config.control.limits.max_points_per_request, 10);
  EXPECT_EQ(config.control.limits.max_points_per_camera, 200);
  EXPECT_EQ(config.control.limits.max_id_bytes, 16);
  const ControlLimits defaults = load_string("cameras:\n  - {name: a, source: test:ball}\n", "t.yaml", "/").control.limits;
  EXPECT_EQ(defaults, ControlLimits{});
  EXPECT_EQ(defaults.max_points_per_camera, 4096);

  const std::string text = problems_of(
      "control:\n  max_points_per_request: 0\n  max_points_per_camera: 100001\n  max_id_bytes: many\n"
      "cameras:\n  - {name: a, source: test:ball}\n");
  EXPECT_NE(text.find("test.yaml:2:27: control.max_points_per_request"), std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:3:26: control.max_points_per_camera"), std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:4:17: control.max_id_bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("100000"), std::string::npos) << text;
}
