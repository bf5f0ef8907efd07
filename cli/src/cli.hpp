// The `edgetap` command's subcommands; each reads its own arguments with CLI11
// (edgetap/cli/command_line.hpp).
#pragma once

namespace edgetap::cli {

int run_command(int argc, char** argv);           // edgetap run
int tail_command(int argc, char** argv);          // edgetap tail
int ctl_command(int argc, char** argv);           // edgetap ctl
int check_config_command(int argc, char** argv);  // edgetap check-config
int eval_command(int argc, char** argv);          // edgetap eval

}  // namespace edgetap::cli
