// edgetap check-config's model checks (daemon::check_models): the start-up
// failures a file can hold beyond its own keys, each reported at the file and
// line of the key that chose the model or the size.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/model_check.hpp"
#include "support/random_network.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;

namespace {

// Every problem check_models() finds in `yaml` (loaded from `dir`), one per line.
std::string model_problems(const test::TempDir& dir, const std::string& yaml) {
  const config::Config config = config::load_file(dir.write("edgetap.yaml", yaml));
  pipeline::ModelCache models;
  std::string text;
  for (const config::Problem& p : daemon::check_models(config, models)) text += p.to_string() + "\n";
  return text;
}

class ModelCheck : public ::testing::Test {
 protected:
  void SetUp() override { test::write_random_network(dir.path().string(), 7); }  // tiny.{json,safetensors}, multiple 32
  std::string yaml_path() const { return dir.file("edgetap.yaml"); }
  test::TempDir dir;
};

}  // namespace

TEST_F(ModelCheck, AGoodModelAndSizePass) {
  EXPECT_EQ(model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n    model_size: [96, 64]\n"
                                "    edgetap: {model: tiny.safetensors}\n"),
            "");
}

TEST_F(ModelCheck, ModelSizeNotAMultipleIsReportedAtTheKey) {
  const std::string problems = model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n"
                                                   "    model_size: [100, 64]\n"
                                                   "    edgetap: {model: tiny.safetensors}\n");
  EXPECT_EQ(problems, yaml_path() + ":4:17: cameras[0] (camera 'a').model_size: 100x64 does not suit the edgetap " +
                          "model " + dir.file("tiny.safetensors") +
                          ": both sides must be multiples of 32 (e.g. 96x64)\n");
}

TEST_F(ModelCheck, AKltCameraIsNotChecked) {
  EXPECT_EQ(model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n    tracker: klt\n"
                                "    model_size: [100, 70]\n    edgetap: {model: missing.safetensors}\n"),
            "");
}

TEST_F(ModelCheck, AMissingModelNamesTheSafetensorsAtItsKey) {
  const std::string problems = model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n"
                                                   "    edgetap:\n      model: models/mine.safetensors\n");
  EXPECT_EQ(problems, yaml_path() + ":5:14: cameras[0] (camera 'a').edgetap.model: no model file " +
                          dir.file("models/mine.safetensors") + "\n");
}

TEST_F(ModelCheck, AModelWithoutItsJsonNamesBoth) {
  std::filesystem::copy_file(dir.file("tiny.safetensors"), dir.file("lone.safetensors"));
  const std::string problems = model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n"
                                                   "    edgetap: {model: lone.safetensors}\n");
  EXPECT_NE(problems.find(yaml_path() + ":4:22: cameras[0] (camera 'a').edgetap.model: cannot load the edgetap model " +
                          dir.file("lone.safetensors") + ": " + dir.file("lone.json")),
            std::string::npos)
      << problems;
}

TEST_F(ModelCheck, InheritedSettingsAreReportedOnceInDefaults) {
  const std::string problems =
      model_problems(dir, "defaults:\n  model_size: [100, 100]\n  edgetap: {model: tiny.safetensors}\n"
                          "cameras:\n  - name: a\n    source: test:ball\n  - name: b\n    source: test:snow\n");
  EXPECT_EQ(problems, yaml_path() + ":2:15: defaults.model_size: 100x100 does not suit the edgetap model " +
                          dir.file("tiny.safetensors") + ": both sides must be multiples of 32 (e.g. 96x96)\n");
}

TEST_F(ModelCheck, LadderRungsAreCheckedAtTheirOwnKeys) {
  const std::string problems =
      model_problems(dir, "cameras:\n  - name: a\n    source: test:ball\n    tracker: klt\n    model_size: [256, 256]\n"
                          "    edgetap: {model: tiny.safetensors}\n    ladder:\n"
                          "      - {tracker: edgetap, size: [200, 160]}\n"
                          "      - {tracker: edgetap, model: gone.safetensors}\n      - {tracker: klt}\n");
  EXPECT_EQ(problems, yaml_path() + ":8:34: cameras[0] (camera 'a').ladder[0].size: 200x160 does not suit the " +
                          "edgetap model " + dir.file("tiny.safetensors") +
                          ": both sides must be multiples of 32 (e.g. 192x160)\n" + yaml_path() +
                          ":9:35: cameras[0] (camera 'a').ladder[1].model: no model file " +
                          dir.file("gone.safetensors") + "\n");
}

TEST_F(ModelCheck, StartUpNamesTheMissingSafetensorsNotItsJson) {
  pipeline::ModelCache models;
  std::string error;
  EXPECT_EQ(models.get(dir.file("gone.safetensors"), error), nullptr);
  EXPECT_EQ(error, "cannot load the edgetap model: no file " + dir.file("gone.safetensors"));
}
