#include "telemetry/program.hpp"

#include <gtest/gtest.h>

namespace npukit::telemetry {
namespace {

using nlohmann::json;

json minimal() {
  return json::parse(R"({"name": "p", "repeat": 2, "comm": {"name": "world"}, "ranks": [
      {"device": 0, "streams": 2, "events": 1,
       "setup": [{"op": "alloc", "buf": "w", "bytes": 1024}],
       "step": [{"op": "kernel", "stream": 1, "name": "aten::mm",
                 "inputs": [{"shape": [4, 4], "dtype": "float16"}, {"shape": [4, 4], "dtype": "float16"}]},
                {"op": "record", "stream": 1, "event": 0}, {"op": "host_delay", "ns": 5},
                {"op": "collective", "stream": 0, "kind": "AllReduce", "count": 16}, {"op": "sync"}]}]})");
}

std::string error_of(const json& j) {
  auto p = parse_program(j);
  return p.ok() ? "" : p.status().message();
}

TEST(Program, ParsesAndRoundTrips) {
  auto p = parse_program(minimal());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->repeat, 2);
  ASSERT_EQ(p->ranks.size(), 1u);
  EXPECT_EQ(p->ranks[0].step.size(), 5u);
  EXPECT_EQ(p->ranks[0].step[0].name, "aten::mm");
  EXPECT_EQ(p->ranks[0].step[3].count, 16u);
  auto again = parse_program(program_to_json(*p));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(program_to_json(*again), program_to_json(*p));
}

// An input op takes samples from its host's input pipeline, whose rate the program carries.
TEST(Program, AnInputOpAndTheHostPipelineRateRoundTripAndBadValuesAreNamed) {
  json j = minimal();
  j["host_input_samples_per_s"] = 16652;
  j["ranks"][0]["step"].insert(j["ranks"][0]["step"].begin(), json{{"op", "input"}, {"samples", 256}});
  auto p = parse_program(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->host_input_samples_per_s, 16652);
  EXPECT_EQ(p->ranks[0].step[0].kind, ProgramOp::Kind::kInput);
  EXPECT_EQ(p->ranks[0].step[0].count, 256u);
  EXPECT_EQ(program_to_json(*p)["ranks"][0]["step"][0], (json{{"op", "input"}, {"samples", 256}}));
  EXPECT_EQ(program_to_json(*p)["host_input_samples_per_s"], 16652);
  j["ranks"][0]["step"][0]["samples"] = 0;
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[0].samples: must be > 0");
  j["ranks"][0]["step"][0]["samples"] = 256;
  j["ranks"][0]["step"][0]["samples"] = -5;
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[0].samples: must be > 0");
  j["ranks"][0]["step"][0]["samples"] = 256;
  j["host_input_samples_per_s"] = -1;
  EXPECT_EQ(error_of(j), "program error: program.host_input_samples_per_s: must be >= 0");
}

// A rank can run an earlier rank's ops instead of carrying a copy (what the compiler emits for
// ranks with the same communicators); the reference is checked.
TEST(Program, ARankRunsAnEarlierRanksOpsByReference) {
  json j = minimal();
  j["ranks"].push_back({{"device", 1}, {"streams", 2}, {"events", 1}, {"ops_of", 0}});
  auto p = parse_program(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->ranks[1].ops_of, 0);
  EXPECT_TRUE(p->ranks[1].step.empty());
  EXPECT_EQ(&ops_of(p->ranks, 1), &p->ranks[0]);
  EXPECT_EQ(&ops_of(p->ranks, 0), &p->ranks[0]);
  auto again = parse_program(program_to_json(*p));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(program_to_json(*again), program_to_json(*p));
  j["ranks"][1]["ops_of"] = 1;
  EXPECT_EQ(error_of(j), "program error: ranks[1].ops_of: must name an earlier rank with its own ops");
  j["ranks"][1]["ops_of"] = 0;
  j["ranks"][1]["streams"] = 3;
  EXPECT_EQ(error_of(j), "program error: ranks[1].ops_of: rank 0 has other streams or events");
  j["ranks"][1]["streams"] = 2;
  j["ranks"][1]["step"] = json::array();
  EXPECT_EQ(error_of(j), "program error: ranks[1].ops_of: a rank with ops_of has no setup or step of its own");
  j["ranks"][1].erase("step");
  j["ranks"][1]["ops_of"] = -5;
  EXPECT_EQ(error_of(j), "program error: ranks[1].ops_of: must be a rank index or -1");
}

TEST(Program, ErrorsNameTheJsonPath) {
  json j = minimal();
  j["ranks"][0]["step"][1]["stream"] = 2;
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[1].stream: stream 2 does not exist (rank has 2 streams)");
  j = minimal();
  j["ranks"][0]["step"][1]["event"] = 3;
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[1].event: event 3 does not exist (rank has 1 events)");
  j = minimal();
  j["ranks"][0]["setup"][0]["op"] = "allocate";
  EXPECT_EQ(error_of(j), "program error: ranks[0].setup[0].op: unknown op 'allocate'");
  j = minimal();
  j["ranks"][0]["setup"][0]["size"] = 1;
  EXPECT_EQ(error_of(j), "program error: ranks[0].setup[0].size: unknown field");
  j = minimal();
  j["ranks"][0]["step"][2]["ns"] = "5";
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[2].ns: expected an integer, got string");
  j = minimal();
  j.erase("ranks");
  EXPECT_EQ(error_of(j), "program error: program.ranks: expected a non-empty array");
  EXPECT_EQ(error_of(json::array()), "program error: program: expected an object");
  j = minimal();
  j.erase("comm");
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[3].comm: communicator 0 does not exist (program has 0)");
  j = minimal();
  j["faults"] = json::parse(R"([{"at_ns": 5, "device": 0, "action": "explode"}])");
  EXPECT_EQ(error_of(j), "program error: faults[0].action: expected inject, clear, reset or power-limit, got 'explode'");
  j["faults"] = json::parse(R"([{"at_ns": 5, "device": 0, "action": "power-limit"}])");
  EXPECT_EQ(error_of(j), "program error: faults[0].watts: expected a power limit > 0 W");
}

TEST(Program, AVaryingDimAndOnlineCompileRoundTripAndAreChecked) {
  json j = minimal();
  j["jit_compile"] = true;
  j["ranks"][0]["step"][0]["vary"] = {{"input", 0}, {"dim", 0}, {"values", {4, 8, 12}}};
  auto p = parse_program(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->jit_compile);
  const ProgramOp::Vary& v = p->ranks[0].step[0].vary;
  EXPECT_EQ(v.input, 0);
  EXPECT_EQ(v.values, (std::vector<int64_t>{4, 8, 12}));
  EXPECT_EQ(program_to_json(*parse_program(program_to_json(*p))), program_to_json(*p));
  EXPECT_FALSE(parse_program(minimal())->jit_compile);
  EXPECT_FALSE(program_to_json(*parse_program(minimal())).contains("jit_compile"));

  auto vary_error = [](const json& vary) {
    json k = minimal();
    k["ranks"][0]["step"][0]["vary"] = vary;
    return error_of(k);
  };
  EXPECT_EQ(vary_error({{"input", 2}, {"dim", 0}, {"values", {4}}}),
            "program error: ranks[0].step[0].vary.input: input 2 does not exist (the kernel has 2 inputs)");
  EXPECT_EQ(vary_error({{"input", 1}, {"dim", 2}, {"values", {4}}}),
            "program error: ranks[0].step[0].vary.dim: dim 2 does not exist (input 1 has 2 dims)");
  EXPECT_EQ(vary_error({{"input", 0}, {"dim", 0}, {"values", json::array()}}),
            "program error: ranks[0].step[0].vary.values: expected 1 to 4096 dim sizes");
  EXPECT_EQ(vary_error({{"input", 0}, {"dim", 0}, {"values", {4, 0}}}),
            "program error: ranks[0].step[0].vary.values[1]: expected a dim size >= 1");
  EXPECT_EQ(vary_error({{"input", 0}, {"dim", 0}}), "program error: ranks[0].step[0].vary.values: expected 1 to 4096 dim sizes");
  EXPECT_EQ(vary_error({{"input", 0}, {"dim", 0}, {"values", {4}}, {"step", 1}}),
            "program error: ranks[0].step[0].vary.step: unknown field");
  EXPECT_EQ(vary_error({{"dim", 0}, {"values", {4}}}), "program error: ranks[0].step[0].vary.input: missing");

  j = minimal();
  j["ranks"][0]["setup"][0]["bytes_by_step"] = {512, 1024};
  auto a = parse_program(j);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->ranks[0].setup[0].bytes_by_step, (std::vector<uint64_t>{512, 1024}));
  EXPECT_EQ(program_to_json(*parse_program(program_to_json(*a))), program_to_json(*a));
  j["ranks"][0]["setup"][0]["bytes_by_step"] = {512, 2048};
  EXPECT_EQ(error_of(j), "program error: ranks[0].setup[0].bytes_by_step[1]: expected a size in [1, bytes]");
  j["ranks"][0]["setup"][0]["bytes_by_step"] = json::array();
  EXPECT_EQ(error_of(j), "program error: ranks[0].setup[0].bytes_by_step: expected 1 to 4096 sizes");
}

TEST(Program, MemtestNeedsAStreamABufferAndPatternsInRange) {
  json j = minimal();
  j["ranks"][0]["step"].push_back({{"op", "memtest"}, {"stream", 0}, {"buf", "w"}, {"patterns", 2}});
  auto p = parse_program(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->ranks[0].step.back().kind, ProgramOp::Kind::kMemTest);
  EXPECT_EQ(p->ranks[0].step.back().count, 2u);
  EXPECT_EQ(program_to_json(*p)["ranks"][0]["step"][5], j["ranks"][0]["step"][5]);
  j["ranks"][0]["step"][5]["patterns"] = 9;
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[5].patterns: must be 1..8");
  j["ranks"][0]["step"][5].erase("patterns");
  j["ranks"][0]["step"][5].erase("stream");
  EXPECT_EQ(error_of(j), "program error: ranks[0].step[5].stream: stream -1 does not exist (rank has 2 streams)");
}

}  // namespace
}  // namespace npukit::telemetry
