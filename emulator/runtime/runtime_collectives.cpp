// Context's collective calls: each becomes a kCollective task on the caller's stream.
#include "emulator/runtime/node.hpp"
#include "emulator/runtime/runtime.hpp"

namespace npukit::emu {

Status Context::collective(StreamId s, CollectiveCall call) {
  NPUKIT_RETURN_IF_ERROR(check_stream(s));
  CollectiveHub& hub = node_.collectives();
  if (call.comm >= hub.comm_count()) {
    return InvalidArgument("invalid communicator " + std::to_string(call.comm));
  }
  call.rank = hub.rank_of(call.comm, device_);
  if (call.rank < 0) {
    return InvalidArgument(std::string(collective_name(call.op)) + ": device " + std::to_string(device_) +
                           " holds no rank of communicator '" + hub.comm_name(call.comm) + "'");
  }
  if (call.count == 0) return InvalidArgument(std::string(collective_name(call.op)) + ": count must be > 0");
  auto index = hub.add_call(call);
  if (!index.ok()) return index.status();
  Task t;
  t.kind = TaskKind::kCollective;
  t.stream = s;
  t.collective = *index;
  t.bytes = call.count * dtype_size(call.dtype);
  issue(t, true);
  node_.engine().enqueue(std::move(t));
  return Status::Ok();
}

namespace {
CollectiveCall make_call(CollectiveOp op, CommId comm, DevPtr send, DevPtr recv, uint64_t count,
                         DType dtype, ReduceOp reduce = ReduceOp::kSum, int root_or_peer = 0) {
  CollectiveCall c;
  c.op = op;
  c.comm = comm;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.dtype = dtype;
  c.reduce = reduce;
  c.root_or_peer = root_or_peer;
  return c;
}
}  // namespace

Status Context::all_reduce(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count,
                           DType dtype, ReduceOp op) {
  return collective(s, make_call(CollectiveOp::kAllReduce, comm, send, recv, count, dtype, op));
}

Status Context::all_gather(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype) {
  return collective(s, make_call(CollectiveOp::kAllGather, comm, send, recv, count, dtype));
}

Status Context::reduce_scatter(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count,
                               DType dtype, ReduceOp op) {
  return collective(s, make_call(CollectiveOp::kReduceScatter, comm, send, recv, count, dtype, op));
}

Status Context::broadcast(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype,
                          int root) {
  return collective(s, make_call(CollectiveOp::kBroadcast, comm, send, recv, count, dtype,
                                 ReduceOp::kSum, root));
}

Status Context::all_to_all(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype) {
  return collective(s, make_call(CollectiveOp::kAllToAll, comm, send, recv, count, dtype));
}

Status Context::send(StreamId s, CommId comm, DevPtr buf, uint64_t count, DType dtype, int peer) {
  return collective(s, make_call(CollectiveOp::kSend, comm, buf, 0, count, dtype, ReduceOp::kSum, peer));
}

Status Context::recv(StreamId s, CommId comm, DevPtr buf, uint64_t count, DType dtype, int peer) {
  return collective(s, make_call(CollectiveOp::kRecv, comm, 0, buf, count, dtype, ReduceOp::kSum, peer));
}

}  // namespace npukit::emu
