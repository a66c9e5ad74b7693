// A cause behind another: its own measure is real, but the ranks wait for the other cause anyway,
// so it costs the step about nothing (the truth: the job with the other cause alone against both).
// Each rule read its cause's cost alone as a warning or worse; a replay of the collectives with the
// cause undone (straggler_replay.cpp) says the step hides it.
#include <gtest/gtest.h>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

struct Behind {
  const char* name;
  const char* spec_args;  // npu-emud start
  const char* behind;     // on the node for both runs
  const char* job;
  const char* cause;      // the faulted run's
  const char* finding;
  double within_ms;
};

class HiddenCause : public ::testing::TestWithParam<Behind> {};

TEST_P(HiddenCause, CostsWhatTheStepLoses) {
  const Behind& b = GetParam();
  ScopedNode node(b.name, b.spec_args);
  TempDir dir(b.name);
  expect_hidden_behind(node, b.behind, b.job, b.cause, dir.str(), b.finding, b.within_ms);
}

INSTANTIATE_TEST_SUITE_P(
    Causes, HiddenCause,
    ::testing::Values(
        // ernie3-train (dp4 x tp2): every rank waits for ranks 4 and 5 in the data-parallel
        // allreduces, so rank 1's extra 79 ms of work costs nothing (slow_rank read 79 ms).
        Behind{"straggler-behind-link", "--speed 1000 --seed 7", "inject --link 4-5 --fault link-degraded",
               "ernie3-train --steps 4", "inject --device 1 --fault aicore-degraded", "slow_rank", 2.0},
        // resnet50-train: every rank waits for device 1, so device 6's 150 W cap costs nothing
        // (throttling read 5.97 ms).
        Behind{"throttle-behind-straggler", "--speed 1000 --seed 7", "inject --device 1 --fault aicore-degraded",
               "resnet50-train --steps 5", "set --device 6 --power-limit 150", "throttling", 1.0},
        // pipeline-train runs at its slow stage's pace, so link 1-2 at a quarter costs nothing
        // (slow_link read 9.0 ms).
        Behind{"link-behind-stage", "--speed 1000 --seed 7", "inject --device 6 --fault aicore-degraded",
               "pipeline-train --steps 5", "inject --link 1-2 --fault link-degraded", "slow_link", 1.0}),
    [](const ::testing::TestParamInfo<Behind>& info) {
      std::string name = info.param.name;
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

}  // namespace
}  // namespace npukit::testing
