// What a collective event says about its communicator (the event's aux string, events.cpp):
//
//   "<group name>|<rank count>|<device of rank 0>,<device of rank 1>,...|<algorithm>|<link>"
//   e.g. "tp0|2|0,1|MESH|HCCS", "dp1|4|1,3,5,7|MESH|HCCS", "world|8|0,1,2,3,4,5,6,7|RING|PCIE"
//
// algorithm: MESH or RING (as HCCL names its algTypes); link: HCCS when every pair of members
// has a direct HCCS link, PCIE otherwise (the traffic crosses PCIe or the host).
// The collective's data type travels in the event's word c (bits 56-63) as an HCCL data type id
// (msprof's ENUM_HCCL_DATA_TYPE: 0 INT8, 2 INT32, 3 FP16, 4 FP32, 5 INT64, 11 BFP16, ...).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

struct CommGroup {
  std::string name;
  std::vector<int> devices;  // by rank
  std::string algorithm;     // "MESH", "RING", or across hosts "MESH-RING"/"RING-RING"
  std::string link;          // "HCCS", "PCIE", or across hosts "RDMA"

  int size() const { return static_cast<int>(devices.size()); }
  int rank_of(int device) const;  // -1 when not a member
};

std::string format_comm_group(const CommGroup& group);
// InvalidArgument naming the text when it is not in the form above.
Result<CommGroup> parse_comm_group(std::string_view text);

// HCCL data type ids (ENUM_HCCL_DATA_TYPE) and their element sizes.
namespace hccl_dtype {
inline constexpr uint8_t kInt8 = 0, kInt16 = 1, kInt32 = 2, kFp16 = 3, kFp32 = 4, kInt64 = 5, kUint64 = 6,
                         kUint8 = 7, kUint16 = 8, kUint32 = 9, kFp64 = 10, kBfp16 = 11;
inline constexpr uint8_t kNotApplicable = 0xff;  // on the bus: no data type (65534 N/A in a profile)
}  // namespace hccl_dtype
// Bytes per element of an HCCL data type id; 0 for an unknown id.
int hccl_dtype_size(int id);

// Word c of a collective event: the task id (bits 0-55) and the HCCL data type (bits 56-63).
inline uint64_t pack_task_dtype(uint64_t task_id, uint8_t dtype) {
  return (task_id & ((uint64_t{1} << 56) - 1)) | uint64_t{dtype} << 56;
}
inline uint64_t unpack_task_id(uint64_t w) { return w & ((uint64_t{1} << 56) - 1); }
inline uint8_t unpack_dtype(uint64_t w) { return static_cast<uint8_t>(w >> 56); }

// Word b of a collective event: the bytes per rank (bits 0-47) and, for Send and Receive, the
// other end's rank in the group plus one (bits 48-63; 0: none, as for every other collective).
inline uint64_t pack_bytes_peer(uint64_t bytes, int peer) {
  const uint64_t end = peer >= 0 && peer < 0xffff ? static_cast<uint64_t>(peer) + 1 : 0;
  return (bytes & ((uint64_t{1} << 48) - 1)) | end << 48;
}
inline uint64_t unpack_bytes(uint64_t w) { return w & ((uint64_t{1} << 48) - 1); }
inline int unpack_peer(uint64_t w) { return static_cast<int>(w >> 48) - 1; }  // -1: none

}  // namespace npukit::telemetry
