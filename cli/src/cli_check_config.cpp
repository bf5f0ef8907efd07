// edgetap check-config FILE: validates a configuration as edgetapd's start-up
// would (the file, then every edgetap model it runs) and summarises it.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/daemon/model_check.hpp"

namespace edgetap::cli {

int check_config_command(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fputs("usage: edgetap check-config FILE\n\nValidates FILE as edgetapd does at start-up: the file itself, then each\n"
               "edgetap model a camera runs (the .safetensors and the .json beside it load, and\n"
               "model_size and every rung's size are multiples of the network's size multiple).\n"
               "Prints every problem with file, line and key.\n"
               "Exit status: 0 when valid, 78 when not.\n",
               argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  try {
    const config::Config config = config::load_file(argv[1]);
    pipeline::ModelCache models;
    if (auto problems = daemon::check_models(config, models); !problems.empty()) {
      throw config::ConfigError(std::move(problems));
    }
    std::printf("%s: ok, %zu camera(s), track socket %s\n", argv[1], config.cameras.size(),
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
