#include "edgetap/cli/command_line.hpp"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "edgetap/cli/option_numbers.hpp"

namespace edgetap::cli {
namespace {

// Thrown by a checked option's callback once its message is printed.
struct ReportedUsageError : std::runtime_error {
  ReportedUsageError() : std::runtime_error("usage error reported") {}
};

}  // namespace

void configure_app(CLI::App& app, const std::string& description, const std::string& footer) {
  app.description(description + "\n");  // a blank line before "Usage:"
  app.footer(footer);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(26);
}

CLI::Option* add_checked_option(CLI::App& app, const std::string& name, const std::string& help,
                                std::function<bool(const std::string&)> accept) {
  return app.add_option_function<std::string>(
      name,
      [accept = std::move(accept)](const std::string& text) {
        if (!accept(text)) throw ReportedUsageError();
      },
      help);
}

namespace {

// The overloaded read_int_option, as one callable.
constexpr auto kReadInt = [](auto&&... args) { return daemon::read_int_option(std::forward<decltype(args)>(args)...); };

// A number option read by `read` (one of option_numbers' readers), whose message names the program and the option.
template <class Number, class Read>
CLI::Option* add_number_option(CLI::App& app, const std::string& name, const std::string& help, Number lo, Number hi,
                               Number& out, Read read) {
  return add_checked_option(app, name, help, [&app, name, lo, hi, &out, read](const std::string& text) {
    return read(app.get_name().c_str(), name, text.c_str(), lo, hi, out);
  });
}

}  // namespace

CLI::Option* add_int_option(CLI::App& app, const std::string& name, const std::string& help, int lo, int hi,
                            int& out) {
  return add_number_option<int>(app, name, help, lo, hi, out, kReadInt);
}

CLI::Option* add_int_option(CLI::App& app, const std::string& name, const std::string& help, long lo, long hi,
                            long& out) {
  return add_number_option<long>(app, name, help, lo, hi, out, kReadInt);
}

CLI::Option* add_int_list_option(CLI::App& app, const std::string& name, const std::string& help, int lo, int hi,
                                 std::vector<int>& out) {
  return app.add_option(name, out, help)
      ->delimiter(',')
      ->check(CLI::Range(lo, hi))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("N");
}

CLI::Option* add_real_option(CLI::App& app, const std::string& name, const std::string& help, double lo, double hi,
                             double& out) {
  return add_number_option<double>(app, name, help, lo, hi, out, daemon::read_real_option);
}

CLI::Option* add_seconds_option(CLI::App& app, const std::string& name, const std::string& help, double lo, double hi,
                                double& out) {
  return add_number_option<double>(app, name, help, lo, hi, out, daemon::read_seconds_option);
}

CLI::Option* add_log_level_option(CLI::App& app, const std::string& help,
                                  bool (*set_level)(const std::string& level)) {
  const auto accept = [&app, set_level](const std::string& level) {
    if (set_level(level)) return true;
    std::fprintf(stderr, "%s: unknown log level '%s'\n", app.get_name().c_str(), level.c_str());
    return false;
  };
  return add_checked_option(app, "--log-level", help, accept)->type_name("LEVEL");
}

CLI::Option* add_config_option(CLI::App& app, const std::string& help, std::string& path) {
  return app.add_option("--config", path, help)->type_name("FILE");
}

int usage_error(const CLI::App& app, const std::string& message) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", app.get_name().c_str(), message.c_str(),
               app.get_name().c_str());
  return 2;
}

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  } catch (const ReportedUsageError&) {
    return 2;
  }
}

}  // namespace edgetap::cli
