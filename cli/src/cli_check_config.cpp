// edgetap check-config FILE: validates a configuration as edgetapd's start-up
// would (the file, then every edgetap model it runs) and summarises it.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "edgetap/cli/command_line.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/daemon/model_check.hpp"

namespace edgetap::cli {

int check_config_command(int argc, char** argv) {
  std::string path;
  CLI::App app(
      "Validates FILE as edgetapd does at start-up: the file itself, then each\n"
      "edgetap model a camera runs (the .safetensors and the .json beside it load, and\n"
      "model_size and every rung's size are multiples of the network's size multiple).\n"
      "Prints every problem with file, line and key.",
      "edgetap check-config");
  configure_app(app, app.get_description(), "Exit status: 0 when valid, 78 when not, 2 on a bad flag.");
  app.add_option("FILE", path, "the configuration file")->type_name("PATH")->required();
  if (const int status = parse_command_line(app, argc, argv); status >= 0) return status;
  try {
    const config::Config config = config::load_file(path);
    pipeline::ModelCache models;
    if (auto problems = daemon::check_models(config, models); !problems.empty()) {
      throw config::ConfigError(std::move(problems));
    }
    std::printf("%s: ok, %zu camera(s), track socket %s\n", path.c_str(), config.cameras.size(),
                config.publisher.socket_path.c_str());
    for (const config::CameraConfig& c : config.cameras) {
      std::printf("  %-16s %-5s %s  model %dx%d  tracker %s  queries %s  budget %.0f ms\n", c.name.c_str(),
                  config::to_string(c.source.kind), c.source.uri.c_str(), c.model_width, c.model_height,
                  config::to_string(c.tracker), config::to_string(c.queries.policy), c.budget_ms);
    }
    return 0;
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return config::kExitBadConfig;
  }
}

}  // namespace edgetap::cli
