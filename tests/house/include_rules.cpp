#include "tests/house/include_rules.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace npukit::house {

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".hpp"; }

std::vector<fs::path> sources_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && is_source(e.path())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The room owning a header path: the room whose folder is the header's directory.
const Room* owner(const std::map<std::string, const Room*>& by_folder, const std::string& header) {
  auto it = by_folder.find(fs::path(header).parent_path().string());
  return it == by_folder.end() ? nullptr : it->second;
}

}  // namespace

std::vector<Room> parse_rooms(const std::string& text) {
  std::vector<Room> rooms;
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    std::istringstream words(line);
    Room r;
    if (!(words >> r.target)) continue;  // blank line
    if (!(words >> r.folder)) throw std::runtime_error("rooms.txt:" + std::to_string(n) + ": no folder");
    for (std::string use; words >> use;) r.uses.push_back(use);
    rooms.push_back(std::move(r));
  }
  return rooms;
}

Violations check_includes(const std::string& root, const std::vector<Room>& rooms) {
  std::map<std::string, const Room*> by_folder;
  for (const Room& r : rooms) by_folder[r.folder] = &r;
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  Violations out;
  for (const Room& room : rooms) {
    std::set<std::string> allowed(room.uses.begin(), room.uses.end());
    allowed.insert(room.target);
    for (const fs::path& file : sources_in(fs::path(root) / room.folder)) {
      std::ifstream in(file);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        std::string header = m[1];
        std::string where = room.folder + "/" + file.filename().string() + ":" + std::to_string(n);
        const Room* to = owner(by_folder, header);
        if (!to) {
          out.push_back(where + ": includes " + header + ", which is in no room");
        } else if (!fs::exists(fs::path(root) / header)) {
          out.push_back(where + ": includes " + header + ", which does not exist");
        } else if (!allowed.count(to->target)) {
          out.push_back(where + ": includes " + header + " (room " + to->target + "), which " +
                        room.target + " may not use");
        }
      }
    }
  }
  return out;
}

Violations check_every_source_in_a_room(const std::string& root, const std::vector<Room>& rooms,
                                        const std::vector<std::string>& top_folders) {
  std::set<std::string> folders;
  for (const Room& r : rooms) folders.insert(r.folder);
  Violations out;
  for (const std::string& top : top_folders) {
    fs::path base = fs::path(root) / top;
    if (!fs::is_directory(base)) {
      out.push_back(top + ": no such folder");
      continue;
    }
    for (const auto& e : fs::recursive_directory_iterator(base)) {
      if (!e.is_regular_file() || !is_source(e.path())) continue;
      std::string folder = fs::relative(e.path().parent_path(), root).string();
      if (!folders.count(folder))
        out.push_back(fs::relative(e.path(), root).string() + ": not in a room (no npukit_room for " +
                      folder + ")");
    }
  }
  return out;
}

Violations check_acyclic(const std::vector<Room>& rooms) {
  std::map<std::string, const Room*> by_target;
  for (const Room& r : rooms) by_target[r.target] = &r;
  Violations out;
  std::map<std::string, int> state;  // 0 unvisited, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& t) {
    state[t] = 1;
    path.push_back(t);
    for (const std::string& use : by_target.at(t)->uses) {
      if (!by_target.count(use)) {
        out.push_back(t + " uses " + use + ", which is not a room");
      } else if (state[use] == 1) {
        std::string cycle;
        auto from = std::find(path.begin(), path.end(), use);
        for (auto it = from; it != path.end(); ++it) cycle += *it + " -> ";
        out.push_back("cycle: " + cycle + use);
      } else if (state[use] == 0) {
        visit(use);
      }
    }
    path.pop_back();
    state[t] = 2;
  };
  for (const Room& r : rooms)
    if (state[r.target] == 0) visit(r.target);
  return out;
}

Violations check_file_sizes(const std::string& root, const std::vector<Room>& rooms, int max_lines) {
  Violations out;
  for (const Room& room : rooms) {
    for (const fs::path& file : sources_in(fs::path(root) / room.folder)) {
      std::ifstream in(file);
      int lines = 0;
      for (std::string line; std::getline(in, line);) ++lines;
      if (lines > max_lines)
        out.push_back(room.folder + "/" + file.filename().string() + ": " + std::to_string(lines) +
                      " lines (more than " + std::to_string(max_lines) + ")");
    }
  }
  return out;
}

}  // namespace npukit::house
