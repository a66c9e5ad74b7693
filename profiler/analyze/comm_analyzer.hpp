// msprof's communication analysis (`msprof --analyze=on`) for a recording: one
// PROF_*/analyze/communication_analyzer.db per rank with msprof's three tables, one row per
// collective the rank ran (hccl_op_name = the opName shared by the ranks of one op):
//
//   CommAnalyzerTime       hccl_op_name, group_name, start_timestamp (us), elapse_time,
//                          transit_time, wait_time, synchronization_time, idle_time (ms).
//                          wait = the time this rank waited for the group's last rank to arrive
//                          (all synchronization in the emulator's model); transit = elapse -
//                          wait; idle = elapse - transit - wait = 0.
//   CommAnalyzerBandwidth  hccl_op_name, group_name, transport_type (HCCS, PCIE or RDMA),
//                          transit_size (MB), transit_time (ms), bandwidth (GB/s),
//                          large_packet_ratio, package_size (MB), count, total_duration (ms).
//                          transit_size = the bytes this rank sent over the transport: the sum
//                          of its COMMUNICATION_TASK_INFO rows (one per send, the plan of
//                          telemetry/collective_traffic.hpp), count = the sends.
//   CommAnalyzerMatrix     hccl_op_name, group_name, src_rank, dst_rank (ranks in the group),
//                          transport_type, transit_size (MB), transit_time (ms), bandwidth (GB/s).
//
// Units as msprof's analysis: ms, MB = 10^6 bytes, GB/s = MB/ms. Computed from every rank's
// database at once (the wait needs the other ranks' arrival).
//
// Thread-safety: touches only the files named.
#pragma once

#include <vector>

#include "profiler/store/prof_layout.hpp"

namespace npukit::prof {

// Writes the analysis database of every rank that ran a collective; returns how many.
Result<int> write_comm_analysis(const std::vector<RankDb>& ranks);

}  // namespace npukit::prof
