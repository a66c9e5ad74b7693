// Every tool answers --version without a node: "<tool> (npukit) <version>", exit 0.
#include <gtest/gtest.h>

#include "telemetry/version.hpp"
#include "tests/daemon_util.hpp"

namespace npukit {
namespace {

using testing::run_command;

TEST(Version, EveryToolPrintsItWithoutANode) {
  const std::pair<const char*, const char*> tools[] = {
      {"npu-emud", NPU_EMUD_PATH}, {"npu-run", NPU_RUN_PATH},   {"npu-prof", NPU_PROF_PATH},
      {"npu-smi", NPU_SMI_PATH},   {"npu-top", NPU_TOP_PATH},   {"npu-exporter", NPU_EXPORTER_PATH}};
  for (const auto& [name, path] : tools) {
    auto r = run_command("NPU_NODE=no-such-node-for-version " + std::string(path) + " --version");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
    EXPECT_EQ(r.output, std::string(name) + " (npukit) " + std::string(telemetry::kVersion) + "\n") << name;
  }
}

}  // namespace
}  // namespace npukit
