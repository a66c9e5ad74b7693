// Parsing of the compatible commands (info, info watch, set, clear) with npu-smi's messages.
#include <algorithm>
#include <cstdlib>
#include <ostream>

#include "smi/cli/cli.hpp"
#include "smi/cli/commands.hpp"
#include "smi/cli/help.hpp"

namespace npukit::smi::cli {

namespace {

// npu-smi: "<pre>\nError parameter of <opt>\n" and the command's help; -9001.
int param_error(Context& ctx, const std::string& opt, const std::string& help, const char* pre = nullptr) {
  if (pre != nullptr) *ctx.out << pre << "\n";
  *ctx.out << "Error parameter of " << opt << "\n" << help;
  return kExitInvalidParameter;
}

// Types of Huawei's list this emulation does not answer: npu-smi's "not supported" path.
bool huawei_only_type(const std::string& t) {
  static const char* kTypes[] = {"flash", "volt", "mac-addr", "ip", "sys-time", "i2c_check", "work-mode",
                                 "ecc-enable", "p2p-enable", "ssh-enable", "license", "customized-info",
                                 "device-share", "nve-level", "aicpu-config", "pcie-err", "mcu-monitor",
                                 "err-count", "boot-area", "vnpu-mode", "info-vnpu", "vnpu-svm", "cpu-num-cfg",
                                 "first-power-on-date", "vnpu-cfg-recover", "key-manage", "template-info",
                                 "pkcs-enable", "p2p-mem-cfg", "pwm-mode", "pwm-duty-ratio", "boot-select", "hccs"};
  return std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return t == k; });
}

struct Ids {
  int npu = -1;
  std::optional<int> chip;
};

// Validates -i / -c against the node; npu-smi prints "Invalid card id." / "Invalid chip id.".
std::optional<Ids> card_chip(Context& ctx, const telemetry::Snapshot& s, const Opt& i, const Opt& c,
                             const std::string& help, int& rc) {
  Ids ids;
  if (!parse_id(i.value(), ids.npu) || devices_of_card(s, ids.npu).empty()) {
    rc = param_error(ctx, "-i", help, "Invalid card id.");
    return std::nullopt;
  }
  if (c.given()) {
    int chip = -1;
    if (!parse_id(c.value(), chip) || device_of(s, ids.npu, chip) < 0) {
      rc = param_error(ctx, "-c", help, "Invalid chip id.");
      return std::nullopt;
    }
    ids.chip = chip;
  }
  return ids;
}

int run_watch(Context& ctx, CLI::App& app, Opt& i, Opt& c, Opt& d, Opt& s, const std::string& count,
              const std::string& format, bool timestamp) {
  WatchOptions w;
  w.timestamp = timestamp;
  char* end = nullptr;
  if (d.given()) {
    const std::string delay = d.value();  // `end` points into it: it must outlive the check
    w.delay_s = std::strtod(delay.c_str(), &end);
    if (delay.empty() || *end != '\0' || !(w.delay_s >= 0.01 && w.delay_s <= 100)) return param_error(ctx, "-d", watch_help());
  }
  if (s.given() && (s.value().empty() || s.value().find_first_not_of("ptaicmbnu") != std::string::npos)) {
    return param_error(ctx, "-s", watch_help());
  }
  w.types = s.value();
  if (c.given() && !i.given()) return param_error(ctx, "-c", watch_help(), "Invalid chip id.");
  if (app.get_option("--count")->count() > 0) {
    unsigned long long n = std::strtoull(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || n == 0 || count[0] == '-') {
      *ctx.err << "npu-smi: --count must be a positive integer, got '" << count << "'\n";
      return kExitUsage;
    }
    w.count = n;
  }
  if (format == "csv") w.format = WatchOptions::Format::kCsv;
  else if (format == "json") w.format = WatchOptions::Format::kJson;
  else if (!format.empty() && format != "text") {
    *ctx.err << "npu-smi: --format must be text, csv or json, got '" << format << "'\n";
    return kExitUsage;
  }
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  if (i.given()) {
    auto ids = card_chip(ctx, session->snapshot, i, c, watch_help(), rc);
    if (!ids) return rc;
    w.npu = ids->npu;
    w.chip = ids->chip;
  }
  return cmd_watch(ctx, *session, w);
}

int run_type(Context& ctx, const std::string& type, const Opt& i, const Opt& c, const Opt& p, bool json) {
  if (type.empty() || (!is_info_type(type) && !huawei_only_type(type))) return param_error(ctx, "-t", info_help());
  if (!is_info_type(type)) {
    *ctx.out << "This device does not support querying " << type << ".\n";
    return kExitOk;
  }
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  TypeQuery q;
  q.type = type;
  if (type == "phyid-remap") {
    int phy = -1;
    bool found = false;
    if (p.given() && parse_id(p.value(), phy)) {
      for (int d = 0; d < session->snapshot.device_count(); ++d) found = found || session->snapshot.device_info(d).phy_id == phy;
    }
    if (!found) return param_error(ctx, "-p", info_help(), p.given() ? nullptr : "Invalid phy id.");
    q.phy = phy;
    return cmd_info_type(ctx, *session, q, json);
  }
  if (!is_node_type(type)) {
    if (!i.given()) {
      *ctx.out << "\nThis command must input card id.\n\n" << info_help();
      return kExitInvalidParameter;
    }
    auto ids = card_chip(ctx, session->snapshot, i, c, info_help(), rc);
    if (!ids) return rc;
    q.npu = ids->npu;
    q.chip = ids->chip;
  }
  return cmd_info_type(ctx, *session, q, json);
}

}  // namespace

int run_info(Context& ctx, const std::vector<std::string>& args) {
  CLI::App app{"npu-smi info"};
  app.set_help_flag();
  Opt t, i, c, p, wi, wc, wd, ws;
  bool l = false, m = false, help = false, json = false, whelp = false, timestamp = false;
  std::string count, format;
  add(app, "-t", t), add(app, "-i", i), add(app, "-c", c), add(app, "-p", p);
  app.add_flag("-l", l), app.add_flag("-m", m), app.add_flag("-h,--help", help), app.add_flag("--json", json);
  CLI::App* watch = app.add_subcommand("watch");
  watch->set_help_flag();
  watch->allow_extras();
  add(*watch, "-i", wi), add(*watch, "-c", wc), add(*watch, "-d", wd), add(*watch, "-s", ws);
  watch->add_flag("-h,--help", whelp), watch->add_flag("--timestamp", timestamp);
  watch->add_option("--count", count), watch->add_option("--format", format);
  std::string bad;
  bool ok = parse(app, args, bad);
  if (!ok) return param_error(ctx, bad, watch->parsed() ? watch_help() : info_help());
  if (watch->parsed()) {
    if (whelp) return (*ctx.out << watch_help(), kExitOk);
    return run_watch(ctx, *watch, wi, wc, wd, ws, count, format, timestamp);
  }
  if (help) return (*ctx.out << info_help(), kExitOk);
  if (static_cast<int>(t.given()) + static_cast<int>(l) + static_cast<int>(m) > 1) {
    return param_error(ctx, t.given() ? (l ? "-l" : "-m") : "-m", info_help());
  }
  if (t.given()) return run_type(ctx, t.value(), i, c, p, json);
  if (i.given() || c.given() || p.given()) return param_error(ctx, i.given() ? "-i" : c.given() ? "-c" : "-p", info_help());
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  if (l) return cmd_info_list(ctx, *session, json);
  if (m) return cmd_info_mapping(ctx, *session, json);
  return cmd_info_table(ctx, *session, json);
}

namespace {

// The set types of Huawei's list this emulation does not do.
bool huawei_only_set_type(const std::string& t) {
  static const char* kTypes[] = {"collect-log", "device-share", "nve-level", "license", "ssh-enable", "customized-info",
                                 "clear-pcie-err", "revocate", "mac-addr", "mcu-monitor", "boot-area", "aicpu-config",
                                 "disk-power", "ip", "errcount-clear", "vnpu-mode", "create-vnpu", "destroy-vnpu",
                                 "vnpu-svm", "cpu-num-cfg", "vnpu-cfg-recover", "key-manage", "pkcs-enable",
                                 "p2p-mem-cfg", "pwm-mode", "pwm-duty-ratio", "power-state", "boot-select",
                                 "reset-vnpu", "tls-cert", "tls-cert-period", "cpu-freq-up"};
  return std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return t == k; });
}

bool valid_set_value(const std::string& type, const std::string& value) {
  if (type == "ecc-enable") return value == "0" || value == "1";
  char* end = nullptr;
  double w = std::strtod(value.c_str(), &end);
  return !value.empty() && *end == '\0' && w > 0;
}

}  // namespace

int run_set(Context& ctx, const std::vector<std::string>& args, bool clear) {
  const std::string help = clear ? clear_help() : set_help();
  CLI::App app{clear ? "npu-smi clear" : "npu-smi set"};
  app.set_help_flag();
  Opt t, i, c, d, m;
  bool h = false;
  add(app, "-t", t), add(app, "-i", i), add(app, "-c", c);
  if (!clear) add(app, "-d", d), add(app, "-m", m);  // -m: in-band reset, whose only value is 1
  app.add_flag("-h,--help", h);
  std::string bad;
  if (!parse(app, args, bad)) return param_error(ctx, bad, help);
  if (h || !t.given()) return (*ctx.out << help, h ? kExitOk : kExitInvalidParameter);
  const std::string type = t.value();
  auto ours_types = clear ? clear_types() : set_types();
  bool ours = std::find(ours_types.begin(), ours_types.end(), type) != ours_types.end();
  if (!ours) {
    if (clear ? type == "tls-cert-period" : huawei_only_set_type(type)) {
      *ctx.out << "This device does not support " << (clear ? "clearing " : "setting ") << type << ".\n";
      return kExitNotSupported;
    }
    return param_error(ctx, "-t", help);
  }
  if (!i.given()) {
    *ctx.out << "\nThis command must input card id.\n\n" << help;
    return kExitInvalidParameter;
  }
  if (m.given() && (type != "reset" || m.value() != "1")) return param_error(ctx, "-m", help);
  bool needs_value = type == "ecc-enable" || type == "power-limit";
  if (needs_value && !d.given()) return (*ctx.out << "Must input parameter of -d.\n", kExitInvalidParameter);
  if (needs_value && !valid_set_value(type, d.value())) return param_error(ctx, "-d", help);
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  auto ids = card_chip(ctx, session->snapshot, i, c, help, rc);
  if (!ids) return rc;
  SetRequest r{type, ids->npu, ids->chip, d.given() ? std::optional<std::string>(d.value()) : std::nullopt};
  return clear ? cmd_clear(ctx, *session, r) : cmd_set(ctx, *session, r);
}

}  // namespace npukit::smi::cli
