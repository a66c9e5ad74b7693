// The session plumbing and the plain `info` queries: the table, -l, -m, -t types, -v.
#include <ctime>
#include <iostream>

#include <unistd.h>

#include "smi/cli/commands.hpp"
#include "smi/cli/table.hpp"
#include "smi/common/text.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::smi {

namespace tf = telemetry;

Context process_context(std::stop_token stop) {
  Context ctx;
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.in = &std::cin;
  ctx.open = [] { return tf::ShmClient::open({.node = tf::node_name_from_env()}); };
  ctx.timestamp = utc_timestamp;
  ctx.stop = std::move(stop);
  ctx.err_is_tty = ::isatty(2) == 1;
  return ctx;
}

std::string utc_timestamp() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return strprintf("%s.%03ldZ", buf, ts.tv_nsec / 1000000);
}

std::string stale_warning(const tf::Snapshot& s) {
  return "npu-smi: warning: node '" + s.node().node_name + "' is stale (" + s.stale_reason() +
         "): values are not live\n";
}

Result<nlohmann::json> ask_node(const Session& session, const nlohmann::json& request) {
  const tf::Snapshot& s = session.snapshot;
  if (s.stale()) {
    return Status(Code::kUnavailable, "node '" + s.node().node_name + "' is stale (" + s.stale_reason() + "): not asked");
  }
  return session.client->control(request);
}

std::optional<Session> open_session(Context& ctx, int& exit_code) {
  auto client = ctx.open();
  if (!client.ok()) {
    *ctx.err << "npu-smi: " << client.status().message() << "\n";
    // A name no node can have (--node-name, $NPU_NODE) is usage, as in every npukit program.
    Code code = client.status().code();
    exit_code = code == Code::kUnavailable ? kExitNoNode : code == Code::kInvalidArgument ? kExitUsage : kExitBusError;
    return std::nullopt;
  }
  auto snap = (*client)->snapshot();
  if (!snap.ok()) {
    *ctx.err << "npu-smi: " << snap.status().message() << "\n";
    exit_code = snap.status().code() == Code::kUnavailable ? kExitNoNode : kExitBusError;
    return std::nullopt;
  }
  if (snap->stale()) *ctx.err << stale_warning(*snap);
  return Session{std::move(*client), std::move(*snap)};
}

int cmd_version(Context& ctx, const Session& session) {
  *ctx.out << "npu-smi version: " << session.snapshot.node().tool_version << "\n";
  return kExitOk;
}

int cmd_info_table(Context& ctx, const Session& session, bool json) {
  Document doc = build_info_doc(session.snapshot);
  if (json) {
    *ctx.out << json_text(render_json(doc), 2) << "\n";
  } else {
    *ctx.out << render_info_table(doc);
  }
  return kExitOk;
}

namespace {

// npu-smi omits Product Name / Serial Number from -l on 910-family servers.
bool server_board(const tf::Snapshot& s) { return s.device_count() > 0 && s.device_info(0).smi_layout == "hbm"; }

Document list_doc(const tf::Snapshot& s) {
  Document doc;
  std::vector<Object> cards;
  int last = -1;
  for (int d = 0; d < s.device_count(); ++d) {
    const tf::DeviceInfo& info = s.device_info(d);
    if (info.npu_id == last) continue;
    last = info.npu_id;
    Object card;
    card.add("NPU ID", "npu_id", Value::integer(info.npu_id));
    if (!server_board(s)) {
      card.add("Product Name", "product_name", Value::str(info.name));
      card.add("Serial Number", "serial_number", Value::str(info.serial_number));
    }
    card.add("Chip Count", "chip_count", Value::integer(static_cast<int64_t>(devices_of_card(s, info.npu_id).size())));
    cards.push_back(std::move(card));
  }
  doc.add("Total Count", "total_count", Value::integer(static_cast<int64_t>(cards.size())));
  doc.add_list("cards", std::move(cards));
  return doc;
}

Document mapping_doc(const tf::Snapshot& s) {
  Document doc;
  std::vector<Object> chips;
  for (int d = 0; d < s.device_count(); ++d) {
    const tf::DeviceInfo& info = s.device_info(d);
    std::string family = chip_family(info.chip_type);
    Object c;
    c.add("NPU ID", "npu_id", Value::integer(info.npu_id)).add("Chip ID", "chip_id", Value::integer(info.chip_id));
    c.add("Chip Logic ID", "logic_id", Value::integer(info.logic_id));
    // "Ascend 910B2"; a what-if chip whose family is its name ("A100") is not named twice.
    c.add("Chip Name", "chip_name", Value::str(family == info.chip_name ? family : family + " " + info.chip_name));
    chips.push_back(std::move(c));
  }
  doc.add_list("chips", std::move(chips));
  return doc;
}

}  // namespace

int cmd_info_list(Context& ctx, const Session& session, bool json) {
  Document doc = list_doc(session.snapshot);
  if (json) {
    *ctx.out << json_text(render_json(doc), 2) << "\n";
  } else if (doc.list("cards").empty()) {
    *ctx.out << "There is no NPU card on this server.\n";
  } else {
    *ctx.out << render_kv(doc) << "\n";
  }
  return kExitOk;
}

int cmd_info_mapping(Context& ctx, const Session& session, bool json) {
  Document doc = mapping_doc(session.snapshot);
  if (json) {
    *ctx.out << json_text(render_json(doc), 2) << "\n";
    return kExitOk;
  }
  if (doc.list("chips").empty()) {
    *ctx.out << "There is no NPU card on this server.\n";
    return kExitOk;
  }
  std::string text = strprintf("\t%-30s %-30s %-30s %-30s\n", "NPU ID", "Chip ID", "Chip Logic ID", "Chip Name");
  for (const Object& c : doc.list("chips")) {
    text += strprintf("\t%-30s %-30s %-30s %s\n", c.value("npu_id").text.c_str(), c.value("chip_id").text.c_str(),
                      c.value("logic_id").text.c_str(), c.value("chip_name").text.c_str());
  }
  *ctx.out << rtrim_lines(text);
  return kExitOk;
}

int cmd_info_type(Context& ctx, const Session& session, const TypeQuery& q, bool json) {
  if (q.type == "topo") return cmd_topo(ctx, session, json);
  TypeDoc t = build_type_doc(session.snapshot, q);
  if (t.unsupported) {
    std::string message = "This device does not support querying " + q.type + ".";
    if (json) {  // --json answers in JSON on every type and chip
      nlohmann::json j = {{"npu_id", q.npu}, {"type", q.type}, {"supported", false}, {"message", message}};
      if (q.chip) j["chip_id"] = *q.chip;
      *ctx.out << json_text(j, 2) << "\n";
    } else {
      *ctx.out << message << "\n";
    }
    return kExitOk;  // npu-smi turns "not supported" into success for info queries
  }
  if (json) {
    *ctx.out << json_text(render_json(t.doc), 2) << "\n";
  } else {
    *ctx.out << render_type_text(q, t.doc);
  }
  return kExitOk;
}

}  // namespace npukit::smi
