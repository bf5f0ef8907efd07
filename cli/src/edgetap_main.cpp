// edgetap: the command-line tool (run a configuration or a quick source, tail
// the track socket, drive the daemon's control socket, check a configuration file).
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "edgetap/backend/cuda_plugin_loader.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace {

constexpr const char* kUsage = R"(usage: edgetap COMMAND [ARGS]

Commands:
  run           track a configuration or a single source until it ends (Ctrl-C stops);
                with no arguments, tracks the bundled demo clip
  tail          subscribe to a track socket and print what arrives
  ctl           drive edgetapd through its control socket: list, stats, add-point, remove-point
  check-config  validate a configuration file (exit 78 when it is bad)
  eval          score a tracker on datasets with ground truth, or on clips without

Run 'edgetap COMMAND --help' for a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "run") return edgetap::cli::run_command(argc - 1, argv + 1);
  if (command == "tail") return edgetap::cli::tail_command(argc - 1, argv + 1);
  if (command == "ctl") return edgetap::cli::ctl_command(argc - 1, argv + 1);
  if (command == "check-config") return edgetap::cli::check_config_command(argc - 1, argv + 1);
  if (command == "eval") return edgetap::cli::eval_command(argc - 1, argv + 1);
  if (command == "--version") {
    std::puts("edgetap " EDGETAP_VERSION);
    // Which engines this installation has: the CUDA engine plugin and the backend it gives.
    const edgetap::backend::LoadedCudaPlugin& plugin = edgetap::backend::cuda_plugin();
    std::printf("cuda engine: %s\n", plugin.plugin != nullptr ? (plugin.path + " (loaded)").c_str() : plugin.error.c_str());
    std::printf("%s\n", edgetap::kernels::describe_backend_choice(edgetap::backend::probe_gpus()).c_str());
    return 0;
  }
  if (command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "%s%s", command.empty() ? "" : ("edgetap: unknown command '" + command + "'\n").c_str(), kUsage);
  return 2;
}
