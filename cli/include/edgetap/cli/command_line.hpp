// The command lines of edgetap's subcommands and of edgetapd, read with CLI11:
// `--opt value`, `--opt=value` and `-h`/`--help` everywhere, a repeated option
// keeps its last value, and the project's own messages for bad values.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace edgetap::cli {

// The configuration edgetapd loads and `edgetap ctl` reads the control socket from.
inline constexpr const char* kDefaultConfigPath = "/etc/edgetap/edgetap.yaml";

// A CLI::App named `command` ("edgetap run", "edgetapd") whose help is
// `description`, the options' list, then `footer`.
void configure_app(CLI::App& app, const std::string& description, const std::string& footer);

// An option whose value `accept` checks; on false, `accept` has printed why and the
// command line is a usage error (exit 2).
CLI::Option* add_checked_option(CLI::App& app, const std::string& name, const std::string& help,
                                std::function<bool(const std::string&)> accept);

// Numbers within a range (option_numbers.hpp's messages, prefixed with the app's name).
CLI::Option* add_int_option(CLI::App& app, const std::string& name, const std::string& help, int lo, int hi,
                            int& out);
CLI::Option* add_int_option(CLI::App& app, const std::string& name, const std::string& help, long lo, long hi,
                            long& out);
// Integers within a range, the option repeated or its values comma-separated (--points 64,256).
CLI::Option* add_int_list_option(CLI::App& app, const std::string& name, const std::string& help, int lo, int hi,
                                 std::vector<int>& out);
CLI::Option* add_real_option(CLI::App& app, const std::string& name, const std::string& help, double lo, double hi,
                             double& out);
CLI::Option* add_seconds_option(CLI::App& app, const std::string& name, const std::string& help, double lo, double hi,
                                double& out);

// --log-level LEVEL, handed to `set_level` (daemon::set_log_level; the logging library
// is not this one's): "<app name>: unknown log level '<text>'" when it refuses.
CLI::Option* add_log_level_option(CLI::App& app, const std::string& help,
                                  bool (*set_level)(const std::string& level));

// --config FILE, as edgetapd and `edgetap ctl` take it.
CLI::Option* add_config_option(CLI::App& app, const std::string& help, std::string& path);

// Parses the command line (argv[0] is the command). Returns -1 to go on, else the exit
// status: 0 after printing the help, 2 after printing a usage error.
int parse_command_line(CLI::App& app, int argc, char** argv);

// Prints "<app name>: <message>" and a pointer to --help on stderr; returns 2.
int usage_error(const CLI::App& app, const std::string& message);

}  // namespace edgetap::cli
