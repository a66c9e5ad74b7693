// The house rules, checked over the source tree: every room (a folder that is one static library,
// declared with npukit_room() in CMake) includes only its own headers and those of the rooms it
// declares it may use; the rooms form no cycle; no source file outside a room; files stay small.
//
// rooms.txt (written by the top-level CMakeLists.txt) has one line per room:
//   <target> <folder> [<target it may use> ...]
// Headers are included by their path from the project root ("smi/top/canvas.hpp").
#pragma once

#include <string>
#include <vector>

namespace npukit::house {

struct Room {
  std::string target;               // npu_top
  std::string folder;               // smi/top
  std::vector<std::string> uses;    // npu_smi_common npu_telemetry
};

// Parses rooms.txt's text; a malformed line throws std::runtime_error naming it.
std::vector<Room> parse_rooms(const std::string& text);

// One broken rule: "smi/top/app.cpp:12: includes smi/cli/cli.hpp (room npu_smi_cli), which
// npu_top may not use".
using Violations = std::vector<std::string>;

// Includes of every .cpp/.hpp directly in each room's folder under `root`.
Violations check_includes(const std::string& root, const std::vector<Room>& rooms);
// Each of `top_folders` (e.g. "smi") holds sources only inside its rooms.
Violations check_every_source_in_a_room(const std::string& root, const std::vector<Room>& rooms,
                                        const std::vector<std::string>& top_folders);
// A cycle among the rooms' declared uses ("a -> b -> a"), or a use naming no room.
Violations check_acyclic(const std::vector<Room>& rooms);
// Source files in rooms longer than `max_lines` lines.
Violations check_file_sizes(const std::string& root, const std::vector<Room>& rooms, int max_lines);

}  // namespace npukit::house
