// The exit codes every npukit program shares (docs/exit-codes.md has the whole table):
//   4  usage: bad arguments (one line on stderr names the argument);
//   5  no node: no node is running under the name given (--node-name, else $NPU_NODE);
//   6  no access: the node exists but cannot be used (another user's private node, a foreign
//      or incompatible bus segment, a bad $NPU_NODE).
// 0 is success; 1-3 and 7 upwards mean what each program documents (a failed job, a health
// verdict, a damaged profile, ...); 130 an interrupt. npu-smi's Huawei-compatible commands keep
// Huawei's codes (211 command or option not found, 215 invalid parameter, ...).
#pragma once

namespace npukit::exit_code {

inline constexpr int kOk = 0;
inline constexpr int kUsage = 4;
inline constexpr int kNoNode = 5;
inline constexpr int kNoAccess = 6;
inline constexpr int kInterrupted = 130;

}  // namespace npukit::exit_code
