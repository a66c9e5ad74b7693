#include "telemetry/cli/complete.hpp"

#include <algorithm>
#include <filesystem>

#include "telemetry/naming.hpp"

namespace npukit::cli {

namespace {

// Bash splits "--opt=value" at '='; join the pieces back: "--opt", "=", "v" -> "--opt=v".
std::vector<std::string> rejoin(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "=" && !out.empty()) {
      out.back() += "=";
      if (i + 1 < words.size()) out.back() += words[++i];
    } else {
      out.push_back(words[i]);
    }
  }
  return out;
}

// Where the walk over the typed words ends.
struct Position {
  std::vector<const CommandSpec*> commands;  // root .. innermost
  std::vector<std::string> path;             // command names below the root
  const OptionSpec* pending = nullptr;        // an option whose value is being typed
  std::size_t positionals = 0;                // positionals given to the innermost command
};

const OptionSpec* find_option(const Position& p, const std::string& name) {
  for (auto it = p.commands.rbegin(); it != p.commands.rend(); ++it) {
    if (const OptionSpec* o = (*it)->option(name)) return o;
  }
  return nullptr;
}

Position walk(const CommandSpec& spec, const std::vector<std::string>& words) {
  Position p;
  p.commands.push_back(&spec);
  for (const std::string& w : words) {
    if (p.pending != nullptr) {
      p.pending = nullptr;  // that word was the option's value
      continue;
    }
    if (w.size() > 1 && w[0] == '-') {
      std::size_t eq = w.find('=');
      const OptionSpec* o = find_option(p, w.substr(0, eq));
      if (o != nullptr && o->takes_value() && eq == std::string::npos) p.pending = o;
      continue;
    }
    if (const CommandSpec* c = p.commands.back()->command(w)) {
      p.commands.push_back(c);
      p.path.push_back(w);
      p.positionals = 0;
      continue;
    }
    ++p.positionals;
  }
  return p;
}

std::vector<std::string> values_of(const OptionSpec& o, const Position& p, const ValueLister& values) {
  if (!o.choices.empty()) return o.choices;
  return values ? values(o.value, p.path) : std::vector<std::string>{};
}

// Candidates for a value: a comma list completes its last item, keeping what precedes it.
std::vector<std::string> complete_value(const OptionSpec& o, const Position& p, const std::string& typed,
                                        const ValueLister& values) {
  std::string head, tail = typed;
  if (o.list()) {
    std::size_t comma = typed.rfind(',');
    if (comma != std::string::npos) {
      head = typed.substr(0, comma + 1);
      tail = typed.substr(comma + 1);
    }
  }
  std::vector<std::string> out;
  for (const std::string& v : values_of(o, p, values)) {
    if (v.rfind(tail, 0) == 0) out.push_back(head + v);
  }
  return out;
}

void add_matching(std::vector<std::string>& out, const std::string& candidate, const std::string& typed) {
  if (candidate.rfind(typed, 0) == 0 && std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
}

}  // namespace

std::vector<std::string> complete(const CommandSpec& spec, const std::vector<std::string>& raw_words,
                                  const std::string& current, const ValueLister& values) {
  std::vector<std::string> words = rejoin(raw_words);
  // "--opt=" typed: bash gives the value alone as the current word.
  if (!words.empty() && words.back().size() > 1 && words.back().back() == '=' && words.back()[0] == '-') {
    std::string option = words.back().substr(0, words.back().size() - 1);
    words.pop_back();
    Position p = walk(spec, words);
    const OptionSpec* o = find_option(p, option);
    return o != nullptr && o->takes_value() ? complete_value(*o, p, current, values) : std::vector<std::string>{};
  }
  Position p = walk(spec, words);
  if (p.pending != nullptr) return complete_value(*p.pending, p, current, values);
  std::vector<std::string> out;
  if (!current.empty() && current[0] == '-') {  // the innermost command's options, and global ones
    for (auto it = p.commands.rbegin(); it != p.commands.rend(); ++it) {
      for (const OptionSpec& o : (*it)->options) {
        if (o.positional || (it != p.commands.rbegin() && !o.global)) continue;
        for (const std::string& n : o.names) add_matching(out, n + (o.attached ? "=" : ""), current);
      }
    }
    return out;
  }
  const CommandSpec& here = *p.commands.back();
  if (p.positionals == 0) {  // a command comes before any positional (a stray word ends them)
    for (const CommandSpec& c : here.commands) add_matching(out, c.name, current);
  }
  std::size_t seen = 0;
  for (const OptionSpec& o : here.options) {
    if (!o.positional) continue;
    if (seen++ == p.positionals) {
      for (const std::string& v : complete_value(o, p, current, values)) add_matching(out, v, current);
    }
  }
  return out;
}

std::vector<std::string> node_names_on_this_machine() {
  std::vector<std::string> names;
  std::error_code ec;
  const std::string prefix = telemetry::shm_name("").substr(1);  // "npukit-"
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    std::string file = e.path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    std::string node = file.substr(prefix.size());
    if (telemetry::validate_node_name(node).ok()) names.push_back(node);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace npukit::cli
