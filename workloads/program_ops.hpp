// Builders for program ops (telemetry/program.hpp), shared by the workload compiler and the
// diagnostics that submit their own test programs (probes/).
#pragma once

#include <cstdint>
#include <string>

#include "telemetry/program.hpp"

namespace npukit::work {

// An op of `kind` on `stream` (-1: none) with every other field at its default.
telemetry::ProgramOp op_of(telemetry::ProgramOp::Kind kind, int stream = -1);
// aten::mm of [m, k] x [k, n] on stream 0.
telemetry::ProgramOp matmul_op(int64_t m, int64_t k, int64_t n, const std::string& dtype);
// alloc / free / memtest of a named buffer (`bytes` for alloc, patterns for memtest).
telemetry::ProgramOp buffer_op(telemetry::ProgramOp::Kind kind, const std::string& name, uint64_t bytes = 0);
// memcpy "H2D", "D2H" or "D2D" of `bytes` on `stream`.
telemetry::ProgramOp memcpy_op(const std::string& kind, uint64_t bytes, int stream = 0);
// Point-to-point "Send" or "Recv" of `count` elements of `dtype` with communicator rank `peer`.
telemetry::ProgramOp p2p_op(const std::string& kind, uint64_t count, const std::string& dtype, int peer,
                            int stream = 0);

}  // namespace npukit::work
