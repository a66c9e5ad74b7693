// A program's kernel and collective ops (telemetry/program.hpp) read into the runtime's types.
// Programs arrive over the control socket unchecked: every reader bounds what it takes and says
// which member is wrong (the fuzz target tests/fuzz/program drives them).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/kernels/fusion.hpp"
#include "emulator/runtime/runtime.hpp"
#include "telemetry/program.hpp"

namespace npukit::emu {

// inputs: [{"shape": [...], "dtype": "float16"}, ...]; at most 8 dims, 2^48 elements.
Result<std::vector<TensorDesc>> parse_inputs(const nlohmann::json& inputs);
// The integer, float, string and integer-array members of attrs (others no kernel reads).
Attrs parse_attrs(const nlohmann::json& attrs);
// A kernel op's fused epilogue, attrs "epilogue": [{"op": "relu", "inputs": [...extra...],
// "attrs": {...}}, ...] (at most 8 parts; fusion.hpp). Empty when the op has none.
Result<std::vector<FusedPart>> parse_epilogue(const nlohmann::json& attrs);
Result<CollectiveCall> parse_call(const telemetry::ProgramOp& op);

}  // namespace npukit::emu
