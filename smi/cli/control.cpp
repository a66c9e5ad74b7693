// set -t ecc-enable | reset | clear-ecc-info | power-limit (ours), and clear -t ecc-info:
// control requests to the node (telemetry/control.hpp), results in npu-smi's
// "\tStatus : OK" / "\tMessage : ..." form.
#include <cstdlib>
#include <istream>
#include <ostream>

#include "smi/cli/commands.hpp"
#include "smi/common/doc.hpp"

namespace npukit::smi {

namespace tf = telemetry;
using nlohmann::json;

namespace {

std::vector<int> targets(const tf::Snapshot& s, const SetRequest& r) {
  if (r.chip) return {device_of(s, r.npu, *r.chip)};
  return devices_of_card(s, r.npu);
}

// Sends `request` for every target device; the first failure stops. Returns the exit code and
// prints npu-smi's Fail lines on failure.
int send_all(Context& ctx, Session& session, const SetRequest& r, json request, const std::string& fail_message) {
  for (int d : targets(session.snapshot, r)) {
    request["device"] = d;
    auto reply = ask_node(session, request);
    if (!reply.ok()) {
      *ctx.err << "npu-smi: " << reply.status().message() << "\n";
      return reply.status().code() == Code::kUnavailable ? kExitNoNode : kExitDcmiFailed;
    }
    if (!reply->value("ok", false)) {
      *ctx.out << kv_line("Status", "Fail") << kv_line("Message", fail_message);
      std::string error = reply->value("error", std::string("request refused"));
      *ctx.err << "npu-smi: node '" << session.snapshot.node().node_name << "': " << error << "\n";
      if (tf::reply_status(*reply).code() == Code::kPermissionDenied) return kExitBusError;  // another user's node
      return error.rfind("invalid device id", 0) == 0 ? kExitInvalidDeviceId : kExitDcmiFailed;
    }
  }
  return kExitOk;
}

const char* scope(const SetRequest& r) { return r.chip ? "chip" : "card"; }

bool parse_double(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0';
}

int confirm_reset(Context& ctx, const SetRequest& r) {
  *ctx.out << "Resetting the standard PCIe card or NPU chip may cause a system hang or abnormal reset during service "
              "running.\nAre you sure you want to continue resetting?(Y/N)\n"
           << std::flush;
  std::string answer;
  if (ctx.in != nullptr) *ctx.in >> answer;
  if (answer == "Y" || answer == "y") return kExitOk;
  *ctx.out << kv_line("Status", "Fail") << kv_line("Message", std::string("User aborts reset ") + scope(r) + " by inband.");
  return kExitAborted;
}

}  // namespace

int cmd_set(Context& ctx, Session& session, const SetRequest& r) {
  std::string ok_message = std::string("Set ") + scope(r) + " " + r.type + " successfully";
  std::string fail_message = std::string("Failed to set ") + scope(r) + " " + r.type;
  json request;
  if (r.type == "ecc-enable") {
    request = {{"op", "set"}, {"ecc_enable", *r.value == "1"}};
  } else if (r.type == "power-limit") {
    double watts = 0;
    parse_double(*r.value, watts);
    request = {{"op", "set"}, {"power_limit_w", watts}};
  } else if (r.type == "clear-ecc-info") {
    request = {{"op", "clear_ecc"}};
  } else {  // reset
    if (int rc = confirm_reset(ctx, r); rc != kExitOk) return rc;
    request = {{"op", "reset"}};
    ok_message = std::string("Reset ") + scope(r) + " successfully.";
    fail_message = std::string("Failed to reset ") + scope(r);
  }
  int rc = send_all(ctx, session, r, request, fail_message);
  if (rc == kExitOk) *ctx.out << kv_line("Status", "OK") << kv_line("Message", ok_message);
  return rc;
}

int cmd_clear(Context& ctx, Session& session, const SetRequest& r) {
  int rc = send_all(ctx, session, r, {{"op", "clear_ecc"}}, "Failed to clear " + r.type);
  if (rc == kExitOk) *ctx.out << kv_line("Status", "OK") << kv_line("Message", "Clear " + r.type + " successfully.");
  return rc;
}

}  // namespace npukit::smi
