#include "smi/cli/help.hpp"

#include "smi/common/text.hpp"

namespace npukit::smi {

namespace {

std::string exit_code_lines() {
  std::string out;
  for (const npukit::cli::ExitCode& e : smi_exit_codes()) out += strprintf("\t%-13s %s\n", e.code.c_str(), e.meaning.c_str());
  return out;
}

}  // namespace

std::string top_help() {
  return "Usage: npu-smi <Command|-h|-v> [Options...]\n"
         "\n"
         "npu-smi Command:\n"
         "\t-h            This command's help information\n"
         "\t--help        This command's help information\n"
         "\t-v            Show npu-smi version information\n"
         "\tinfo          Show hardware details\n"
         "\tset           Modify device configuration properties\n"
         "\tclear         Clear device information\n"
         "\n"
         "npukit extensions (not in Huawei's npu-smi):\n"
         "\t--query=<fields> --format=csv[,noheader][,nounits] [-i|--id id]\n"
         "\t              One CSV row per chip; fields from --help-query\n"
         "\t              (--query-gpu and nvidia-smi's field names work too: memory.used, power.draw, ...)\n"
         "\t--help-query  List the fields --query takes, with units\n"
         "\thealth [-i id] [-v] [--json] [--npd]\n"
         "\t              Per-chip health verdict with reasons (exit codes below)\n"
         "\tdiag -r 1|2|3 [-i id] [--json]\n"
         "\t              Active diagnostics in a dcgmi-style result box (exit codes as health)\n"
         "\ttopo [--json] Device link matrix (HCCS/PIX/PHB/SYS) with CPU affinity\n"
         "\tstats [--job ID] [--json]\n"
         "\t              Job accounting: energy, utilization, HBM peak, throttling, ECC per job\n"
         "\tinfo ... --json\n"
         "\t              Any info query as one JSON document\n"
         "\tinfo watch ... -d 0.2 --timestamp --count N --format text|csv|json\n"
         "\t              Sub-second, timestamped, bounded, machine-readable watch\n"
         "\tset -t power-limit -i id [-c chip] -d watts\n"
         "\t              Set the enforced power limit\n"
         "\t--version     npukit's version (-v is the node's driver and firmware)\n"
         "\n"
         "The node is --node-name NAME or --node NAME (anywhere), else $NPU_NODE (default npukit); start one with: npu-emud start --node-name <name>\n"
         "\n"
         "Exit codes:\n" +
         exit_code_lines();
}

std::vector<npukit::cli::ExitCode> smi_exit_codes() {
  return {
      {"0", "success; health/diag: every chip PASS"},
      {"1", "health/diag: a WARN verdict, no FAIL"},
      {"2", "health/diag: a FAIL verdict (Alarm/Critical, link down, hang, ...)"},
      {"3", "health/diag: UNKNOWN (stale node, or a chip without data)"},
      {"4", "bad arguments to an extension (--query fields, --format, --count, health -i)"},
      {"5", "no node is running"},
      {"6", "the node's bus cannot be read (foreign or incompatible segment, bad $NPU_NODE, another user's private node)"},
      {"130", "diag: interrupted by SIGINT or SIGTERM (its test jobs are cancelled)"},
      {"211", "(-9005) command or option is not found"},
      {"215", "(-9001) invalid parameter (option, type, card/chip id, value)"},
      {"217", "(-9255) this chip does not support the set type"},
      {"232", "(-9016) reset declined at the prompt"},
      {"237", "(-9019) the node refused a set/clear request"},
      {"249", "(-9007) the node rejected the device id"},
  };
}

std::string info_help() {
  return "Usage: npu-smi info <watch|-h|-m|-l|-t type> [Options...]\n"
         "\n"
         "Commands:\n"
         "       watch          Show all device's status in scrolling format\n"
         "       -h, --help     Show this help text and exit\n"
         "       -m             Show all device's mapping information\n"
         "       -l             Show all device's topology information\n"
         "       -t type        Show information for type\n"
         "                      type: board, common, usages, health, temp, power, memory, ecc,\n"
         "                            proc-mem, product, sensors, topo, phyid-remap.\n"
         "\n"
         "Options:\n"
         "       -i %d          Card ID\n"
         "       -c %d          Chip ID\n"
         "       -p %d          Chip Physical ID\n"
         "       --json         Print the query as one JSON document (npukit)\n";
}

std::string watch_help() {
  return "Usage: npu-smi info watch [Options...]\n"
         "\n"
         "Options:\n"
         "       -i %d          Card ID\n"
         "       -c %d          Chip ID\n"
         "       -d %d          Delay time in seconds, 1-100 (npukit: fractions down to 0.01)\n"
         "       -s %s          One or more metrics [eg. info watch -s ptaicmb]\n"
         "                      p: Power, t: Temperature, a: AI Core, i: AI Cpu, c: Ctrl Cpu,\n"
         "                      m: Memory, b: Memory bandwidth, n: NPU utilization, u: AI Cube\n"
         "       --timestamp    Lead each row with a UTC timestamp (npukit)\n"
         "       --count %d     Stop after this many samples (npukit)\n"
         "       --format %s    text (default), csv (one row per chip per sample) or json\n"
         "                      (one line per sample); both always carry a timestamp (npukit)\n";
}

std::string set_help() {
  return "Usage: npu-smi set <-h|-t type> [Options...]\n"
         "\n"
         "Commands:\n"
         "       -h, --help     Show this help text and exit\n"
         "       -t type        Set information for type\n"
         "                      type: ecc-enable, reset, clear-ecc-info, power-limit (npukit).\n"
         "\n"
         "Options:\n"
         "       -i %d          Card ID\n"
         "       -c %d          Chip ID\n"
         "       -d %d          Config value (ecc-enable: 0 or 1; power-limit: watts)\n"
         "       -m %d          In-band reset (reset only; only 1)\n";
}

std::string clear_help() {
  return "Usage: npu-smi clear <-h|-t type> [Options...]\n"
         "\n"
         "Commands:\n"
         "       -h, --help     Show this help text and exit\n"
         "       -t type        Clear information for type\n"
         "                      type: ecc-info.\n"
         "\n"
         "Options:\n"
         "       -i %d          Card ID\n"
         "       -c %d          Chip ID\n";
}

std::string health_help() {
  return "Usage: npu-smi health [-i id] [-v|--verbose] [--json] [--npd]\n"
         "\n"
         "Judges every chip (or card id's chips) with the passive health rules: heartbeat, device\n"
         "health, temperature, throttling, ECC errors, isolated pages, memory, links, AI Core hang,\n"
         "power. Prints PASS/WARN/FAIL/UNKNOWN per chip with the reasons; -v also lists the active\n"
         "faults with their source and start (from the node's control channel). --npd: one line of\n"
         "at most 80 characters for node-problem-detector, exit 0 OK (warnings included), 1 an\n"
         "Alarm or Critical incident is active, 2 unknown (no node, stale node).\n"
         "Exit: 0 all PASS, 1 WARN, 2 FAIL, 3 UNKNOWN (stale node or no data), 4 usage, 5 no node.\n";
}

std::string stats_help() {
  return "Usage: npu-smi stats [--job|-j ID] [--json]\n"
         "\n"
         "Job accounting for the node's running and recent jobs: devices, start and end (virtual\n"
         "time), exit status, peak HBM reserved, and per chip the energy, AI Core utilization\n"
         "(average and maximum), highest temperature, throttled time by reason and ECC errors\n"
         "during the job.\n";
}

std::string topo_help() {
  return "Usage: npu-smi topo [--json]\n"
         "\n"
         "The link matrix between chips (X self, HCCS, PIX same card, PHB same host bridge, SYS\n"
         "across NUMA nodes or HCCS meshes) and each chip's CPU affinity.\n";
}

}  // namespace npukit::smi
