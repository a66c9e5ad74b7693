#include "telemetry/cli/manual.hpp"

#include <algorithm>
#include <cstdio>

#include "telemetry/exit_codes.hpp"
#include "telemetry/version.hpp"

namespace npukit::cli {

namespace {

// Text as roff reads it: backslashes and hyphens escaped, a leading . or ' neutralised.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// Each line of a verbatim block as roff text.
std::string roff_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    std::string expanded;  // tabs as 8-column stops: man renders them unevenly
    for (char c : line) {
      if (c == '\t') expanded.append(8 - expanded.size() % 8, ' ');
      else expanded += c;
    }
    out += roff(expanded) + "\n";
    start = end + 1;
  }
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string option_label(const OptionSpec& o) {
  if (o.positional) return "\\fI" + roff(o.names.front()) + "\\fR";
  std::string label;
  for (const std::string& n : o.names) label += (label.empty() ? "" : ", ") + std::string("\\fB") + roff(n) + "\\fR";
  if (o.takes_value()) label += (o.attached ? "=" : " ") + std::string("\\fI") + roff(o.value) + "\\fR";
  return label;
}

std::string option_help(const OptionSpec& o) {
  std::string help = o.help;
  if (!o.choices.empty()) {
    std::string set;
    for (const std::string& c : o.choices) set += (set.empty() ? "" : ", ") + c;
    help += (help.empty() ? "" : " ") + std::string("(one of: ") + set + ")";
  }
  if (!o.fallback.empty() && help.find("default") == std::string::npos) help += " (default: " + o.fallback + ")";
  return roff(help);
}

std::string options_of(const CommandSpec& spec) {
  std::string out;
  for (const OptionSpec& o : spec.options) {
    out += ".TP\n" + option_label(o) + "\n" + option_help(o) + "\n";
  }
  return out;
}

std::string default_synopsis(const CommandSpec& spec) {
  std::string s = "\\fB" + roff(spec.name) + "\\fR";
  bool has_options = std::any_of(spec.options.begin(), spec.options.end(), [](const OptionSpec& o) { return !o.positional; });
  if (has_options) s += " [\\fIOPTIONS\\fR]";
  if (!spec.commands.empty()) s += " \\fICOMMAND\\fR [\\fIOPTIONS\\fR]";
  for (const OptionSpec& o : spec.options) {
    if (o.positional) s += " [\\fI" + roff(o.names.front()) + "\\fR]";
  }
  return s;
}

}  // namespace

std::vector<ExitCode> shared_exit_codes(bool interruptible) {
  std::vector<ExitCode> codes = {
      {std::to_string(exit_code::kUsage), "usage: a bad option, value or file argument (one line names it)"},
      {std::to_string(exit_code::kNoNode), "no node is running under that name, or it is stale"},
      {std::to_string(exit_code::kNoAccess),
       "the node cannot be used: another user's private node, or a foreign or incompatible bus"},
  };
  if (interruptible) codes.push_back({std::to_string(exit_code::kInterrupted), "interrupted by SIGINT or SIGTERM"});
  return codes;
}

std::pair<std::string, std::string> npu_node_variable() {
  return {"NPU_NODE", "the node to use when --node-name is not given (default npukit)"};
}

std::string man_page(const CommandSpec& spec, const Manual& m) {
  std::string out;
  out += ".TH " + upper(roff(m.name)) + " 1 \"\" \"npukit " + std::string(telemetry::kVersion) + "\" \"npukit manual\"\n";
  out += ".SH NAME\n" + roff(m.name) + " \\- " + roff(m.summary) + "\n";
  out += ".SH SYNOPSIS\n" + (m.synopsis.empty() ? default_synopsis(spec) : roff(m.synopsis)) + "\n";
  if (!m.description.empty()) {
    out += ".SH DESCRIPTION\n";
    for (std::size_t i = 0; i < m.description.size(); ++i) out += (i > 0 ? ".PP\n" : "") + roff(m.description[i]) + "\n";
  }
  if (!spec.options.empty() || !spec.commands.empty()) {
    out += ".SH OPTIONS\n" + options_of(spec);
    for (const CommandSpec& c : spec.commands) {
      out += ".SS \"" + roff(m.name + " " + c.name) + "\"\n" + roff(c.help) + "\n" + options_of(c);
      for (const CommandSpec& sub : c.commands) {
        out += ".SS \"" + roff(m.name + " " + c.name + " " + sub.name) + "\"\n" + roff(sub.help) + "\n" + options_of(sub);
      }
    }
  }
  for (const auto& [title, text] : m.verbatim) {  // an upper-case title is a section of its own
    out += (title == upper(title) ? ".SH \"" : ".SS \"") + roff(title) + "\"\n.nf\n" + roff_lines(text) + ".fi\n";
  }
  if (!m.exit_codes.empty()) {
    out += ".SH EXIT STATUS\n";
    for (const ExitCode& e : m.exit_codes) out += ".TP\n.B " + roff(e.code) + "\n" + roff(e.meaning) + "\n";
  }
  if (!m.environment.empty()) {
    out += ".SH ENVIRONMENT\n";
    for (const auto& [name, meaning] : m.environment) out += ".TP\n.B " + roff(name) + "\n" + roff(meaning) + "\n";
  }
  if (!m.examples.empty()) {
    out += ".SH EXAMPLES\n";
    for (const Example& e : m.examples) out += ".TP\n.B " + roff(e.command) + "\n" + roff(e.what) + "\n";
  }
  if (!m.see_also.empty()) {
    out += ".SH SEE ALSO\n";
    for (std::size_t i = 0; i < m.see_also.size(); ++i) {
      const std::string& ref = m.see_also[i];
      std::size_t paren = ref.find('(');
      out += ".BR " + roff(ref.substr(0, paren)) + " " + ref.substr(paren) + (i + 1 < m.see_also.size() ? "," : "") + "\n";
    }
  }
  return out;
}

std::string help_footer(const Manual& m) {
  std::string out;
  if (!m.exit_codes.empty()) {
    out += "Exit codes:\n";
    for (const ExitCode& e : m.exit_codes) {
      char line[32];
      std::snprintf(line, sizeof line, "  %-5s ", e.code.c_str());
      out += line + e.meaning + "\n";
    }
  }
  if (!m.examples.empty()) {
    out += "\nExamples:\n";
    for (const Example& e : m.examples) out += "  " + e.command + "\n      " + e.what + "\n";
  }
  out += "\nThe manual: man " + m.name + "\n";
  return out;
}

}  // namespace npukit::cli
