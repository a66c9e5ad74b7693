// The house rules over the real tree (rooms.txt from this build), and over small constructed
// trees that break each rule once, so the checks are shown to fail when they should.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "tests/house/include_rules.hpp"

namespace fs = std::filesystem;
using namespace npukit::house;

namespace {

const char* const kTopFolders[] = {"telemetry", "emulator", "workloads", "probes", "profiler", "smi"};

std::vector<Room> real_rooms() {
  std::ifstream in(NPUKIT_ROOMS_FILE);
  std::stringstream text;
  text << in.rdbuf();
  return parse_rooms(text.str());
}

std::string joined(const Violations& v) {
  std::string out;
  for (const auto& line : v) out += line + "\n";
  return out;
}

// A throwaway source tree: write("a/b/x.hpp", "...").
class Tree {
 public:
  Tree() : root_(fs::temp_directory_path() / ("npukit-house-" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
  }
  ~Tree() { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

std::vector<Room> two_rooms() {
  return {{"low", "pkg/low", {}}, {"high", "pkg/high", {"low"}}};
}

}  // namespace

TEST(House, EveryRoomIncludesOnlyItselfAndTheRoomsItMayUse) {
  auto rooms = real_rooms();
  ASSERT_GE(rooms.size(), 18u) << "rooms.txt lists too few rooms: " << NPUKIT_ROOMS_FILE;
  EXPECT_EQ(joined(check_includes(NPUKIT_SOURCE_DIR, rooms)), "");
}

TEST(House, EverySourceFileOfTheLibrariesIsInARoom) {
  std::vector<std::string> tops(std::begin(kTopFolders), std::end(kTopFolders));
  EXPECT_EQ(joined(check_every_source_in_a_room(NPUKIT_SOURCE_DIR, real_rooms(), tops)), "");
}

TEST(House, RoomsFormNoCycle) { EXPECT_EQ(joined(check_acyclic(real_rooms())), ""); }

TEST(House, NoSourceFileInARoomPasses500Lines) {
  EXPECT_EQ(joined(check_file_sizes(NPUKIT_SOURCE_DIR, real_rooms(), 500)), "");
}

TEST(House, AnUpwardIncludeIsReportedWithFileLineAndRule) {
  Tree t;
  t.write("pkg/high/a.hpp", "#pragma once\n");
  t.write("pkg/low/b.cpp", "#include <vector>\n\n#include \"pkg/high/a.hpp\"\n");
  auto v = check_includes(t.root(), two_rooms());
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_EQ(v[0], "pkg/low/b.cpp:3: includes pkg/high/a.hpp (room high), which low may not use");
}

TEST(House, ADownwardIncludeAndAnOwnHeaderPass) {
  Tree t;
  t.write("pkg/low/b.hpp", "#pragma once\n");
  t.write("pkg/high/a.cpp", "#include \"pkg/high/a.hpp\"\n#include \"pkg/low/b.hpp\"\n");
  t.write("pkg/high/a.hpp", "#pragma once\n");
  EXPECT_EQ(joined(check_includes(t.root(), two_rooms())), "");
}

TEST(House, AHeaderOutsideEveryRoomOrMissingIsReported) {
  Tree t;
  t.write("pkg/high/a.cpp", "#include \"pkg/old_name.hpp\"\n#include \"pkg/low/gone.hpp\"\n");
  auto v = check_includes(t.root(), two_rooms());
  ASSERT_EQ(v.size(), 2u) << joined(v);
  EXPECT_EQ(v[0], "pkg/high/a.cpp:1: includes pkg/old_name.hpp, which is in no room");
  EXPECT_EQ(v[1], "pkg/high/a.cpp:2: includes pkg/low/gone.hpp, which does not exist");
}

TEST(House, ASourceFileOutsideTheRoomsIsReported) {
  Tree t;
  t.write("pkg/low/b.cpp", "");
  t.write("pkg/stray.cpp", "");
  auto v = check_every_source_in_a_room(t.root(), two_rooms(), {"pkg"});
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_EQ(v[0], "pkg/stray.cpp: not in a room (no npukit_room for pkg)");
}

TEST(House, ACycleIsReportedWithItsPath) {
  std::vector<Room> rooms = {{"a", "x/a", {"b"}}, {"b", "x/b", {"c"}}, {"c", "x/c", {"a"}}};
  auto v = check_acyclic(rooms);
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_EQ(v[0], "cycle: a -> b -> c -> a");
}

TEST(House, ALongFileIsReported) {
  Tree t;
  t.write("pkg/low/long.cpp", std::string(501, '\n'));
  t.write("pkg/low/short.cpp", std::string(500, '\n'));
  auto v = check_file_sizes(t.root(), two_rooms(), 500);
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_EQ(v[0], "pkg/low/long.cpp: 501 lines (more than 500)");
}

TEST(House, RoomsFileParses) {
  auto rooms = parse_rooms("npu_top smi/top npu_smi_common npu_telemetry\n\nnpu_telemetry telemetry\n");
  ASSERT_EQ(rooms.size(), 2u);
  EXPECT_EQ(rooms[0].folder, "smi/top");
  EXPECT_EQ(rooms[0].uses, (std::vector<std::string>{"npu_smi_common", "npu_telemetry"}));
  EXPECT_TRUE(rooms[1].uses.empty());
  EXPECT_THROW(parse_rooms("lonely\n"), std::runtime_error);
}
