// The npu-emud sub-commands (the executable's logic; main only parses arguments).
// Exit codes (telemetry/exit_codes.hpp for the shared ones): 0 ok; 3 the node could not start or
// refused the request; 4 usage error; 5 the node is not running or is stale; 6 permission denied.
#pragma once

#include "telemetry/exit_codes.hpp"
#include <string>

#include <nlohmann/json.hpp>

#include "emulator/daemon/daemon.hpp"

namespace npukit::emu::emud {

inline constexpr int kExitOk = exit_code::kOk;
inline constexpr int kExitFailed = 3;
inline constexpr int kExitUsage = exit_code::kUsage;
inline constexpr int kExitNoNode = exit_code::kNoNode;
inline constexpr int kExitPermission = exit_code::kNoAccess;

// The program: parses the command line and runs its sub-command; returns the exit code.
int run_command_line(int argc, const char* const* argv);
// Parses and checks a command line as run_command_line does, running nothing (no node is
// started or asked): kExitOk, or the code run_command_line would return before running.
int check_command_line(int argc, const char* const* argv);

int start(const DaemonOptions& options, bool foreground);
int stop(const std::string& node);
int status(const std::string& node, bool json);
// Sends one request ({"op": op, ...target, ...extra}; target: {"device"}, {"npu_id", "chip_id"} or
// {"link"}) and reports the reply.
int device_request(const std::string& node, const std::string& op, const nlohmann::json& target, nlohmann::json extra);

}  // namespace npukit::emu::emud
