// npu-prof selftest: the diagnosis scored against the emulator's ground truth, on this machine.
// Each scenario of the matrix (workloads/diagnosis/matrix.json) and its baseline run on a fresh
// private node (npu-emud, seed 7) under `npu-prof record`; the truth of a cause's cost is the
// scenario's mean step time minus its baseline's (steps after the first). A scenario is right
// when its top finding names the cause and estimates the cost within 25%; a baseline is right
// when it has no finding above info.
#pragma once

#include <string>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::prof {

struct SelftestArgs {
  std::string dir;             // the matrix and its workloads ("" = $NPUKIT_DIAGNOSIS_DIR or the default)
  std::string format = "text";  // text or json
  std::vector<std::string> only;  // scenario names to run (default: all)
};

int run_selftest(const SelftestArgs& args);

}  // namespace npukit::prof
