#include "telemetry/cli/meta.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "telemetry/exit_codes.hpp"
#include "telemetry/version.hpp"

namespace npukit::cli {

std::optional<int> answer_meta_request(int argc, const char* const* argv, const std::function<Program()>& program,
                                       std::ostream& out) {
  if (argc < 2) return std::nullopt;
  std::string request = argv[1];
  if (request == "--help-man" && argc == 2) {
    Program p = program();
    out << man_page(p.spec, p.manual);
    return exit_code::kOk;
  }
  if (request != "--complete") return std::nullopt;
  char* end = nullptr;
  long n = argc >= 3 ? std::strtol(argv[2], &end, 10) : -1;
  if (end == nullptr || *end != '\0' || n < 0 || n + 4 != argc) return exit_code::kUsage;
  std::vector<std::string> words(argv + 3, argv + 3 + n);
  Program p = program();
  ValueLister values = [&p](const std::string& kind, const std::vector<std::string>& path) {
    if (kind == "NODE") return node_names_on_this_machine();
    return p.values ? p.values(kind, path) : std::vector<std::string>{};
  };
  for (const std::string& c : complete(p.spec, words, argv[argc - 1], values)) out << c << "\n";
  return exit_code::kOk;
}

void present(CLI::App& app, const Manual& manual, const std::string& description, bool version_flag) {
  app.name(manual.name);
  app.description(description);
  if (version_flag) app.set_version_flag("--version", telemetry::version_line(manual.name));
  app.footer(help_footer(manual));
}

int parse_error_exit(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
  return exit_code::kUsage;
}

}  // namespace npukit::cli
