#include "telemetry/cli/command_model.hpp"

#include <CLI/CLI.hpp>

namespace npukit::cli {

namespace {

// CLI11 writes a set check into the type name: "TEXT:{caching,direct}".
// Other checks append their description: "INT:INT in [1 - 64]"; the value is what precedes.
void split_type_name(const std::string& type, OptionSpec& o) {
  o.value = type.substr(0, type.find(':'));
  std::size_t open = type.find(":{");
  if (open == std::string::npos || type.back() != '}') return;
  std::string set = type.substr(open + 2, type.size() - open - 3);
  for (std::size_t start = 0; start <= set.size();) {
    std::size_t comma = set.find(',', start);
    o.choices.push_back(set.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

OptionSpec describe_option(const CLI::Option& opt) {
  OptionSpec o;
  o.help = opt.get_description();
  o.positional = !opt.nonpositional();
  if (o.positional) {
    o.names.push_back(opt.get_name());
  } else {
    for (const std::string& s : opt.get_snames()) o.names.push_back("-" + s);
    for (const std::string& l : opt.get_lnames()) o.names.push_back("--" + l);
  }
  if (opt.get_items_expected_max() > 0) {
    split_type_name(opt.get_type_name(), o);
    if (o.value.empty()) o.value = "VALUE";
    if (!opt.get_default_str().empty()) o.fallback = opt.get_default_str();
  }
  return o;
}

}  // namespace

const CommandSpec* CommandSpec::command(const std::string& wanted) const {
  for (const CommandSpec& c : commands) {
    if (c.name == wanted) return &c;
  }
  return nullptr;
}

const OptionSpec* CommandSpec::option(const std::string& wanted) const {
  for (const OptionSpec& o : options) {
    for (const std::string& n : o.names) {
      if (n == wanted && !o.positional) return &o;
    }
  }
  return nullptr;
}

CommandSpec describe(const CLI::App& app) {
  CommandSpec spec;
  spec.name = app.get_name();
  spec.help = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    spec.options.push_back(describe_option(*opt));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    spec.commands.push_back(describe(*sub));
  }
  return spec;
}

}  // namespace npukit::cli
