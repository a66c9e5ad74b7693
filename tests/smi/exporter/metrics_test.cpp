// The exposition rendered from in-process buses: names, labels, units, HELP/TYPE, staleness,
// and promtool's lint.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <set>
#include <sstream>

#include "tests/smi/exporter/exporter_util.hpp"
#include "smi/exporter/metrics.hpp"
#include "smi/exporter/server.hpp"
#include "smi/exporter/text.hpp"

namespace npukit::smi::exporter {
namespace {

using namespace testing;

std::string scrape_bus(const std::shared_ptr<tf::InProcessBus>& bus, const std::string& node) {
  Exporter e(node, [bus]() -> Result<std::unique_ptr<tf::Client>> { return bus->client(); });
  return e.scrape();
}

TEST(ExporterMetrics, MindxNamesCarryIdModelAndBusLabels) {
  auto bus = make_node("exp-mindx");
  std::string text = scrape_bus(bus, "exp-mindx");
  EXPECT_NE(text.find("npu_chip_info_temperature{id=\"1\",model_name=\"910B2\",pcie_bus_info=\"0000:51:00.0\",npu_id=\"1\","
                      "chip_id=\"0\"} 51\n"),
            std::string::npos) << text;
  EXPECT_EQ(value_of(text, "npu_chip_info_hbm_used_memory", "id=\"0\""), 3072);    // MB
  EXPECT_EQ(value_of(text, "npu_chip_info_hbm_total_memory", "id=\"0\""), 65536);
  EXPECT_EQ(value_of(text, "npu_chip_info_utilization", "id=\"0\""), 42.5);
  EXPECT_EQ(value_of(text, "npu_chip_info_health_status", "id=\"0\""), 1);
  EXPECT_EQ(value_of(text, "machine_npu_nums"), 2);
  EXPECT_EQ(value_of(text, "npu_exporter_node_up", "node=\"exp-mindx\""), 1);
}

TEST(ExporterMetrics, UnhealthyDeviceReadsZeroHealthStatusWithItsErrorCode) {
  auto bus = make_node("exp-unhealthy");
  bus->writer().update_device(1).set(fid::kHealth, uint64_t{2}).set(fid::kErrorCode, uint64_t{0x80E01802});
  std::string text = scrape_bus(bus, "exp-unhealthy");
  EXPECT_EQ(value_of(text, "npu_chip_info_health_status", "id=\"1\""), 0);
  EXPECT_EQ(value_of(text, "npu_chip_info_health_status", "id=\"0\""), 1);
  EXPECT_EQ(value_of(text, "npu_chip_info_error_code", "id=\"1\""), 0x80E01802);
  EXPECT_EQ(value_of(text, "npu_health", "id=\"1\""), 2);
}

TEST(ExporterMetrics, RegistryFieldsKeepTheirNamesWithNsConvertedToSeconds) {
  auto bus = make_node("exp-registry");
  std::string text = scrape_bus(bus, "exp-registry");
  EXPECT_EQ(value_of(text, "npu_aicore_busy_seconds_total", "id=\"0\""), 2.5);
  EXPECT_EQ(value_of(text, "npu_kernels_total", "id=\"1\""), 7);
  EXPECT_NE(text.find("# TYPE npu_kernels_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE npu_temperature_celsius gauge\n"), std::string::npos);
  EXPECT_TRUE(samples(text, "npu_snapshot_checksum").empty());
  EXPECT_EQ(value_of(text, "npu_link_up", "kind=\"hccs\""), 1);
  EXPECT_EQ(exporter_name(*tf::find_field(fid::kNodeHeartbeatNs)), "npu_node_heartbeat_seconds");
  EXPECT_EQ(exporter_name(*tf::find_field(fid::kProcessCount)), "npu_process_num");
  EXPECT_EQ(exporter_scale(*tf::find_field(fid::kAicoreBusyNs)), 1e-9);
  EXPECT_EQ(exporter_scale(*tf::find_field(fid::kPowerWatts)), 1.0);
}

// A family exported in seconds says seconds in its HELP: the registry's descriptions say ", ns",
// which the HELP repeated over values scaled by 1e-9.
TEST(ExporterMetrics, TheHelpOfAFamilyInSecondsNamesSeconds) {
  auto bus = make_node("exp-help");
  std::string text = scrape_bus(bus, "exp-help");
  EXPECT_NE(text.find("# HELP npu_aicore_busy_seconds_total AI-core busy time averaged over the device's AI cores, "
                      "seconds; its rate is the utilization\n"),
            std::string::npos);
  std::istringstream lines(text);
  int seconds_families = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# HELP ", 0) != 0 || line.find("_seconds") == std::string::npos) continue;
    ++seconds_families;
    EXPECT_EQ(line.find(", ns"), std::string::npos) << line;
  }
  EXPECT_GE(seconds_families, 2);
}

// MindX's HBM collector runs on HBM chips only: a 310P's DDR temperature, bandwidth and ECC
// counts were exported as npu_chip_info_hbm_* series.
TEST(ExporterMetrics, ADdrChipHasNoMindxHbmSeries) {
  for (const char* layout : {"hbm", "classic"}) {
    auto bus = make_node(std::string("exp-ddr-") + layout, layout);
    for (int d = 0; d < 2; ++d) {
      bus->writer().update_device(d).set(fid::kHbmTemperatureCelsius, 48.0).set(fid::kHbmBandwidthUtil, 72.4)
          .set(fid::kEccSingleBitVolatile, uint64_t{0});
    }
    std::string text = scrape_bus(bus, std::string("exp-ddr-") + layout);
    bool hbm = std::string(layout) == "hbm";
    for (const char* name : {"npu_chip_info_hbm_temperature", "npu_chip_info_hbm_bandwidth_utilization",
                             "npu_chip_info_hbm_ecc_single_bit_error_cnt"}) {
      EXPECT_EQ(samples(text, name).size(), hbm ? 2u : 0u) << layout << " " << name;
    }
    EXPECT_EQ(samples(text, "npu_chip_info_temperature").size(), 2u) << layout;
  }
}

// A link's series name its direction: device_a sends, device_b receives, and an end that is no
// device is named (host, switch, roce). The two directions of a PCIe link both read
// device_a="1",device_b="host" before, so a dashboard could not tell what the host sent.
TEST(ExporterMetrics, LinkSeriesNameTheDirectionTheyCarry) {
  tf::WriterOptions o;
  o.node = "exp-dir-" + std::to_string(getpid());
  o.node_info.card_count = 2;
  for (int d = 0; d < 2; ++d) {
    tf::DeviceInfo info;
    info.npu_id = info.logic_id = info.phy_id = d;
    info.name = "910B2";
    o.devices.push_back(info);
  }
  o.links = {{0, 1, "hccs", 56e9}, {1, 0, "hccs", 56e9}, {1, -1, "pcie", 32e9}, {-1, 1, "pcie", 32e9},
             {0, -1, "roce", 25e9}, {-1, 0, "roce", 25e9}};
  auto bus = tf::InProcessBus::create(o);
  ASSERT_TRUE(bus.ok()) << bus.status().message();
  for (int l = 0; l < 6; ++l) (*bus)->writer().update_link(l).set(fid::kLinkUp, uint64_t{1});
  std::string text = scrape_bus(*bus, o.node);
  for (const char* labels : {"link=\"0\",kind=\"hccs\",device_a=\"0\",device_b=\"1\",pair=\"0-1\"",
                             "link=\"1\",kind=\"hccs\",device_a=\"1\",device_b=\"0\",pair=\"0-1\"",
                             "link=\"2\",kind=\"pcie\",device_a=\"1\",device_b=\"host\",pair=\"1-host\"",
                             "link=\"3\",kind=\"pcie\",device_a=\"host\",device_b=\"1\",pair=\"1-host\"",
                             "link=\"4\",kind=\"roce\",device_a=\"0\",device_b=\"roce\",pair=\"0-roce\"",
                             "link=\"5\",kind=\"roce\",device_a=\"roce\",device_b=\"0\",pair=\"0-roce\""}) {
    EXPECT_NE(text.find(std::string("npu_link_up{") + labels + "} 1\n"), std::string::npos) << labels << "\n" << text;
  }
  o.links = {{-1, -1, "pcie", 32e9}};
  o.node += "-bad";
  auto bad = tf::InProcessBus::create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("link 0 joins devices -1 and -1"), std::string::npos) << bad.status().message();
}

TEST(ExporterMetrics, ProcessesAreLabelledWithDeviceAndPid) {
  auto bus = make_node("exp-procs");
  std::string text = scrape_bus(bus, "exp-procs");
  EXPECT_NE(text.find("npu_process_hbm_used_bytes{id=\"1\",process_id=\"4242\",process_name=\"python3\"} 536870912\n"),
            std::string::npos) << text;
  EXPECT_EQ(value_of(text, "npu_chip_info_process_info", "process_id=\"4242\""), 512);
}

TEST(ExporterMetrics, NotSupportedSamplesAreLeftOutNotZero) {
  auto bus = make_node("exp-nosupport");
  std::string text = scrape_bus(bus, "exp-nosupport");
  EXPECT_TRUE(samples(text, "npu_chip_info_voltage").empty());
  EXPECT_EQ(text.find("# HELP npu_chip_info_voltage"), std::string::npos);  // empty family: no HELP either
}

TEST(ExporterMetrics, EveryFamilyHasHelpAndTypeAndCountersEndInTotal) {
  auto bus = make_node("exp-help");
  std::string text = scrape_bus(bus, "exp-help");
  std::set<std::string> helped, typed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) helped.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line.rfind("# TYPE ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      typed.insert(name);
      if (line.ends_with(" counter")) {
        EXPECT_TRUE(name.ends_with("_total")) << name;
      }
    }
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(helped.count(name) && typed.count(name)) << "no HELP/TYPE before " << line;
  }
  EXPECT_EQ(helped, typed);
  EXPECT_GT(helped.size(), 30u);
}

TEST(ExporterMetrics, StaleNodeShowsUpZeroAndNoDeviceSeries) {
  auto bus = make_node("exp-stale");
  bus->close();
  std::string text = scrape_bus(bus, "exp-stale");
  EXPECT_EQ(value_of(text, "npu_exporter_node_up"), 0);
  EXPECT_EQ(value_of(text, "npu_exporter_node_stale"), 1);
  EXPECT_EQ(value_of(text, "npu_exporter_scrape_errors_total"), 1);
  EXPECT_TRUE(samples(text, "npu_chip_info_temperature").empty());
  EXPECT_TRUE(samples(text, "npu_process_hbm_used_bytes").empty());
}

TEST(ExporterMetrics, AbsentNodeIsUpZeroAndRetriedOnEveryScrape) {
  int opens = 0;
  Exporter e("exp-absent", [&opens]() -> Result<std::unique_ptr<tf::Client>> {
    ++opens;
    return Status(Code::kUnavailable, "no npukit node 'exp-absent' is running");
  });
  e.scrape();
  std::string text = e.scrape();
  EXPECT_EQ(opens, 2);
  EXPECT_EQ(value_of(text, "npu_exporter_node_up", "node=\"exp-absent\""), 0);
  EXPECT_EQ(value_of(text, "npu_exporter_node_stale"), 0);
  EXPECT_EQ(value_of(text, "npu_exporter_scrapes_total"), 2);
  EXPECT_EQ(value_of(text, "npu_exporter_scrape_errors_total"), 2);
  EXPECT_TRUE(samples(text, "machine_npu_nums").empty());
}

TEST(ExporterMetrics, MindxTableMapsDistinctNamesToDeviceFields) {
  std::set<std::string_view> names;
  for (const MindxMetric& m : mindx_metrics()) {
    const tf::FieldDef* f = tf::find_field(m.field);
    ASSERT_NE(f, nullptr) << m.name;
    EXPECT_EQ(f->level, tf::EntityLevel::kDevice) << m.name;
    EXPECT_TRUE(m.name.starts_with("npu_chip_info_")) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
  }
  EXPECT_GE(names.size(), 20u);
}

TEST(ExporterText, EscapesLabelValuesAndHelpAndFormatsValuesExactly) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_help("x\\y\nz\""), "x\\\\y\\nz\"");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(-INFINITY), "-Inf");
  auto bus = make_node("exp-escape");
  std::string text = scrape_bus(bus, "exp-escape");
  EXPECT_NE(text.find("serial_number=\"SN\\\"0\""), std::string::npos);
}

TEST(ExporterMetrics, PromtoolCheckMetricsPassesOnTheExposition) {
  std::string why = ensure_promtool();
  if (!why.empty()) GTEST_SKIP() << why;
  auto bus = make_node("exp-promtool");
  std::string path = write_temp("metrics.txt", scrape_bus(bus, "exp-promtool"));
  Cmd r = run_command("promtool check metrics < " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::remove(path.c_str());
}

TEST(ExporterArgs, ListenAndNodeAreValidated) {
  ExporterOptions o;
  bool help = false;
  std::string error;
  const char* good[] = {"npu-exporter", "--listen", "127.0.0.1:0", "--node", "n1"};
  ASSERT_TRUE(parse_exporter_args(5, good, o, help, error)) << error;
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(o.node, "n1");
  const char* bad_port[] = {"npu-exporter", "--listen", "127.0.0.1:99999"};
  EXPECT_FALSE(parse_exporter_args(3, bad_port, o, help, error));
  EXPECT_NE(error.find("IPV4:PORT"), std::string::npos);
  // A malformed or IPv6 host is a bad argument too (it was an address the exporter failed to
  // listen on, exit 1); localhost is taken.
  for (const char* host : {"999.1.1.1:9182", "[::1]:9182", "host.example:9182"}) {
    const char* bad_host[] = {"npu-exporter", "--listen", host};
    EXPECT_FALSE(parse_exporter_args(3, bad_host, o, help, error)) << host;
  }
  const char* local[] = {"npu-exporter", "--listen", "localhost:9101"};
  EXPECT_TRUE(parse_exporter_args(3, local, o, help, error)) << error;
  const char* bad_node[] = {"npu-exporter", "--node", "../etc"};
  EXPECT_FALSE(parse_exporter_args(3, bad_node, o, help, error));
  EXPECT_NE(error.find("invalid node name"), std::string::npos);
  const char* extra[] = {"npu-exporter", "--bogus"};
  EXPECT_FALSE(parse_exporter_args(2, extra, o, help, error));
}

}  // namespace
}  // namespace npukit::smi::exporter
