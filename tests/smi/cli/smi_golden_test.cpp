// Golden tests: every npu-smi format against fixture buses (tests/data/smi/*.json), compared
// with checked-in text under tests/data/smi/. NPUKIT_UPDATE_GOLDEN=1 rewrites the goldens.
#include <gtest/gtest.h>

#include <regex>

#include "tests/smi/cli/smi_fixture.hpp"

namespace npukit::smi::testing {
namespace {

struct GoldenCase {
  const char* name;     // golden file stem and test name
  const char* fixture;  // tests/data/smi/<fixture>.json
  std::vector<std::string> args;
  int exit_code;
  bool stdout_only = true;  // false: the golden holds stdout then "--- stderr ---" and stderr
};

std::ostream& operator<<(std::ostream& os, const GoldenCase& c) { return os << c.name; }

const std::vector<GoldenCase>& cases() {
  static const std::vector<GoldenCase> all = {
      {"info_910b", "910b_reference", {"info"}, 0},
      {"info_910b_json", "910b_reference", {"info", "--json"}, 0},
      {"info_310p", "310p_classic", {"info"}, 0},
      {"info_310p_json", "310p_classic", {"info", "--json"}, 0},
      {"info_faults", "910b_faults", {"info"}, 0},
      {"info_stale", "910b_stale", {"info"}, 0, false},
      {"info_l_910b", "910b_reference", {"info", "-l"}, 0},
      {"info_l_310p", "310p_classic", {"info", "-l"}, 0},
      {"info_l_json", "310p_classic", {"info", "-l", "--json"}, 0},
      {"info_m_910b", "910b_reference", {"info", "-m"}, 0},
      {"info_m_310p", "310p_classic", {"info", "-m"}, 0},
      {"info_m_json", "310p_classic", {"info", "-m", "--json"}, 0},
      {"t_board_card", "910b_reference", {"info", "-t", "board", "-i", "0"}, 0},
      {"t_board_chip", "910b_reference", {"info", "-t", "board", "-i", "0", "-c", "0"}, 0},
      {"t_board_310p", "310p_classic", {"info", "-t", "board", "-i", "1"}, 0},
      {"t_common", "910b_reference", {"info", "-t", "common", "-i", "0"}, 0},
      {"t_common_310p", "310p_classic", {"info", "-t", "common", "-i", "2"}, 0},
      {"t_common_json", "910b_reference", {"info", "-t", "common", "-i", "0", "--json"}, 0},
      {"t_usages", "910b_reference", {"info", "-t", "usages", "-i", "1"}, 0},
      {"t_usages_chip", "910b_reference", {"info", "-t", "usages", "-i", "1", "-c", "0"}, 0},
      {"t_usages_310p", "310p_classic", {"info", "-t", "usages", "-i", "1"}, 0},
      {"t_usages_json", "310p_classic", {"info", "-t", "usages", "-i", "1", "--json"}, 0},
      {"t_health_card", "910b_faults", {"info", "-t", "health", "-i", "2"}, 0},
      {"t_health_chip", "910b_faults", {"info", "-t", "health", "-i", "2", "-c", "0"}, 0},
      {"t_health_chip_ok", "910b_faults", {"info", "-t", "health", "-i", "0", "-c", "0"}, 0},
      {"t_temp", "910b_reference", {"info", "-t", "temp", "-i", "0", "-c", "0"}, 0},
      {"t_temp_310p", "310p_classic", {"info", "-t", "temp", "-i", "1", "-c", "1"}, 0},
      {"t_power", "910b_reference", {"info", "-t", "power", "-i", "1", "-c", "0"}, 0},
      {"t_power_310p", "310p_classic", {"info", "-t", "power", "-i", "1", "-c", "0"}, 0},
      {"t_memory", "910b_reference", {"info", "-t", "memory", "-i", "0", "-c", "0"}, 0},
      {"t_memory_310p", "310p_classic", {"info", "-t", "memory", "-i", "2", "-c", "1"}, 0},
      {"t_ecc", "910b_faults", {"info", "-t", "ecc", "-i", "2", "-c", "0"}, 0},
      {"t_ecc_card_310p", "310p_classic", {"info", "-t", "ecc", "-i", "1"}, 0},
      {"t_proc_mem", "910b_reference", {"info", "-t", "proc-mem", "-i", "0", "-c", "0"}, 0},
      {"t_proc_mem_card", "310p_classic", {"info", "-t", "proc-mem", "-i", "2"}, 0},
      {"t_proc_mem_none", "910b_reference", {"info", "-t", "proc-mem", "-i", "1", "-c", "0"}, 0},
      {"t_product_310p", "310p_classic", {"info", "-t", "product", "-i", "1", "-c", "0"}, 0},
      {"t_product_910b", "910b_reference", {"info", "-t", "product", "-i", "0", "-c", "0"}, 0},
      {"t_sensors", "910b_reference", {"info", "-t", "sensors", "-i", "0", "-c", "0"}, 0},
      {"t_sensors_310p", "310p_classic", {"info", "-t", "sensors", "-i", "1", "-c", "0"}, 0},  // no HBM line
      {"t_phyid_remap", "310p_classic", {"info", "-t", "phyid-remap", "-p", "3"}, 0},
      {"t_topo", "910b_faults", {"info", "-t", "topo"}, 0},
      {"topo_310p", "310p_classic", {"topo"}, 0},
      {"topo_json", "910b_reference", {"topo", "--json"}, 0},
      {"watch_default", "910b_reference", {"info", "watch", "--count", "2", "-d", "0.01"}, 0},
      {"watch_310p_s", "310p_classic", {"info", "watch", "-i", "2", "-s", "ptm", "--count", "1"}, 0},
      // NPU Util / AI Cube asked for on a 310P: the headers, with NA (they were dropped, leaving no column).
      {"watch_310p_nu", "310p_classic", {"info", "watch", "-i", "2", "-s", "nu", "--count", "1"}, 0},
      {"watch_timestamp", "910b_reference", {"info", "watch", "--timestamp", "-s", "pta", "--count", "2", "-d", "0.01"}, 0},
      {"watch_csv", "910b_reference", {"info", "watch", "--format", "csv", "--count", "3", "-d", "0.01"}, 0},
      {"watch_json", "910b_reference", {"info", "watch", "--format", "json", "--count", "2", "-d", "0.01"}, 0},
      {"query_csv", "910b_reference",
       {"--query=npu_id,name,bus_id,npu_power_watts,npu_temperature_celsius,npu_hbm_used_bytes,npu_hbm_usage_percent,npu_health",
        "--format=csv"}, 0},
      {"query_noheader_nounits", "310p_classic",
       {"--query=npu_id,chip_id,npu_ddr_used_bytes,npu_hbm_used_bytes", "--format=csv,noheader,nounits", "-i", "2"}, 0},
      // A script ported from NVIDIA: nvidia-smi's flag and field names, in nvidia-smi's units.
      {"query_nvidia", "910b_reference",
       {"--query-gpu=index,name,uuid,pci.bus_id,temperature.gpu,power.draw,power.limit,memory.used,memory.total,"
        "memory.free,utilization.gpu,clocks.sm,clocks.max.sm,ecc.mode.current,clocks_event_reasons.active",
        "--format=csv"}, 0},
      {"query_nvidia_nounits", "910b_faults",
       {"--query-gpu=index,temperature.gpu,power.draw,memory.used,ecc.errors.uncorrected.volatile.total,"
        "clocks_throttle_reasons.active,total_energy_consumption", "--format=csv,noheader,nounits"}, 0},
      // On a 310P, nvidia-smi's memory.* is the DDR (it read NA: the HBM fields have no value there).
      {"query_nvidia_310p", "310p_classic", {"--query-gpu=index,memory.used,memory.total,memory.free", "--format=csv"}, 0},
      {"help_query", "910b_reference", {"--help-query"}, 0},
      {"health_faults", "910b_faults", {"health"}, 2},
      {"health_faults_json", "910b_faults", {"health", "--json"}, 2},
      {"health_warn", "910b_faults", {"health", "-i", "1"}, 1},
      {"health_ok", "910b_reference", {"health"}, 0},
      {"health_stale", "910b_stale", {"health"}, 3, false},
      {"help", "910b_reference", {"-h"}, 0},
      {"help_info", "910b_reference", {"info", "-h"}, 0},
      {"version", "910b_reference", {"-v"}, 0},
      {"err_not_found", "910b_reference", {"frobnicate"}, 211},
      {"err_no_args", "910b_reference", {}, 215},
      {"err_bad_type", "910b_reference", {"info", "-t", "frequency", "-i", "0"}, 215},
      {"err_bad_card", "910b_reference", {"info", "-t", "usages", "-i", "9"}, 215},
      {"err_bad_chip", "910b_reference", {"info", "-t", "usages", "-i", "0", "-c", "1"}, 215},
      {"err_missing_card", "910b_reference", {"info", "-t", "usages"}, 215},
      {"err_bad_option", "910b_reference", {"info", "-x", "1"}, 215},
      {"err_watch_delay", "910b_reference", {"info", "watch", "-d", "0"}, 215},
      {"err_huawei_type", "910b_reference", {"info", "-t", "flash", "-i", "0"}, 0},
      {"err_query_field", "910b_reference", {"--query=npu_id,power.usage", "--format=csv"}, 4, false},
      {"err_query_format", "910b_reference", {"--query=npu_id", "--format=xml"}, 4, false},
      {"err_watch_count", "910b_reference", {"info", "watch", "--count", "x"}, 4, false},
      {"err_health_id", "910b_reference", {"health", "-i", "7"}, 4, false},
      {"err_set_value", "910b_reference", {"set", "-t", "ecc-enable", "-i", "0", "-d", "2"}, 215},
      {"err_set_missing_value", "910b_reference", {"set", "-t", "power-limit", "-i", "0"}, 215},
      {"err_set_unsupported", "910b_reference", {"set", "-t", "ssh-enable", "-i", "0", "-d", "1"}, 217},
  };
  return all;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesCheckedInText) {
  const GoldenCase& c = GetParam();
  auto bus = make_bus(load_json(std::string(c.fixture) + ".json"));
  SmiRun r = run(bus, c.args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.out << r.err;
  // The stale reason names this test process's pid: the golden holds "pid N".
  std::string text = c.stdout_only ? r.out : r.out + "--- stderr ---\n" + r.err;
  text = std::regex_replace(text, std::regex("pid [0-9]+"), "pid N");
  if (c.stdout_only) {
    EXPECT_EQ(r.err, "") << "unexpected stderr";
  }
  expect_golden(std::string(c.name) + ".txt", text);
  expect_no_trailing_whitespace(r.out, c.name);
}

INSTANTIATE_TEST_SUITE_P(Npusmi, Golden, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return std::string(info.param.name); });

// The reference's 910B sample (shared/reference/npu-smi.md 1.3), verbatim: every line of the
// sample above its process table, and its process row, appear byte for byte in our output for
// the same values. (The sample closes its process table with a +---+ row and omits NPU 1; the
// current npu-smi source, which we follow, closes every card's block with +===+ and prints
// "No running processes found in NPU 1".)
TEST(GoldenReference, The910BSampleIsReproducedByteForByte) {
  const std::string sample =
      "+------------------------------------------------------------------------------------------------+\n"
      "| npu-smi 23.0.2.1                 Version: 23.0.2.1                                             |\n"
      "+---------------------------+---------------+----------------------------------------------------+\n"
      "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
      "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
      "+===========================+===============+====================================================+\n"
      "| 0     910B2C              | OK            | 88.6        51                0    / 0             |\n"
      "| 0                         | 0000:5A:00.0  | 0           0    / 0          20701/ 65536         |\n"
      "+===========================+===============+====================================================+\n"
      "| 1     910B2C              | OK            | 99.6        50                0    / 0             |\n"
      "| 0                         | 0000:19:00.0  | 0           0    / 0          20687/ 65536         |\n"
      "+===========================+===============+====================================================+\n"
      "+---------------------------+---------------+----------------------------------------------------+\n"
      "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |\n"
      "+===========================+===============+====================================================+\n"
      "| 0       0                 | 124528        | python3.8                | 17400                   |\n";
  auto bus = make_bus(load_json("910b_reference.json"));
  SmiRun r = run(bus, {"info"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.substr(0, sample.size()), sample);
  EXPECT_EQ(r.out.substr(sample.size()),
            "+===========================+===============+====================================================+\n"
            "| No running processes found in NPU 1                                                            |\n"
            "+===========================+===============+====================================================+\n");
}

// The 310P classic sample of the reference, whole, from the same values.
TEST(GoldenReference, The310PClassicSampleIsReproducedByteForByte) {
  auto bus = make_bus(load_json("310p_classic.json"));
  SmiRun r = run(bus, {"info"});
  ASSERT_EQ(r.exit_code, 0);
  std::ifstream in(data_path("reference_310p_sample.txt"));
  std::string sample((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(sample.empty());
  EXPECT_EQ(r.out, sample);
}

TEST(GoldenWidths, EveryTableLineHasItsLayoutsWidth) {
  for (auto [fixture, width] : {std::pair{"910b_reference.json", 98u}, {"310p_classic.json", 106u}, {"910b_faults.json", 98u}}) {
    auto bus = make_bus(load_json(fixture));
    std::istringstream in(run(bus, {"info"}).out);
    for (std::string line; std::getline(in, line);) EXPECT_EQ(line.size(), width) << fixture << ": " << line;
  }
}

}  // namespace
}  // namespace npukit::smi::testing
