#include "workloads/program_ops.hpp"

namespace npukit::work {

using telemetry::ProgramOp;
using Kind = ProgramOp::Kind;

ProgramOp op_of(Kind kind, int stream) {
  ProgramOp op;
  op.kind = kind;
  op.stream = stream;
  return op;
}

ProgramOp matmul_op(int64_t m, int64_t k, int64_t n, const std::string& dtype) {
  ProgramOp op = op_of(Kind::kKernel, 0);
  op.name = "aten::mm";
  op.inputs = nlohmann::json::array({{{"shape", {m, k}}, {"dtype", dtype}}, {{"shape", {k, n}}, {"dtype", dtype}}});
  op.attrs = nlohmann::json::object();
  return op;
}

ProgramOp buffer_op(Kind kind, const std::string& name, uint64_t bytes) {
  ProgramOp op = op_of(kind, kind == Kind::kMemTest ? 0 : -1);
  op.buffer = name;
  if (kind == Kind::kMemTest) op.count = bytes;
  else op.bytes = bytes;
  return op;
}

ProgramOp memcpy_op(const std::string& kind, uint64_t bytes, int stream) {
  ProgramOp op = op_of(Kind::kMemcpy, stream);
  op.name = kind;
  op.bytes = bytes;
  return op;
}

ProgramOp p2p_op(const std::string& kind, uint64_t count, const std::string& dtype, int peer, int stream) {
  ProgramOp op = op_of(Kind::kCollective, stream);
  op.name = kind;
  op.count = count;
  op.dtype = dtype;
  op.root_or_peer = peer;
  return op;
}

}  // namespace npukit::work
