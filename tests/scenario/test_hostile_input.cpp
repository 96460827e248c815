// Hostile input (docs/errors.md): huge numbers, 10^7 columns, deeply nested YAML, invalid
// UTF-8, NUL bytes, time series with a gap or going backwards. Each gives one clear error
// naming the file and line, in bounded time and memory, and leaves no result file.
#include <catch2/catch.hpp>

#include <csignal>

#include "sim/interrupt.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "app/sweep.hpp"
#include "base/error.hpp"
#include "base/text_checks.hpp"
#include "test_support.hpp"
#include "traces/trace_test_util.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {

const std::string kCluster = "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 8}]}\n";

// Loads and runs `scenario` (with `files` written next to it) into out/; the error with
// the temp folder shown as DIR, "" when the run succeeded. A failed run must leave out/ empty.
std::string run_error(const std::string& scenario, const std::vector<std::pair<std::string, std::string>>& files = {}) {
  TempDir dir;
  for (const auto& [name, content] : files) dir.write(name, content);
  const std::string config = dir.write("run.yaml", scenario);
  std::string error;
  try {
    const PolicyRegistry reg = builtin_policies();
    run_scenario(load_scenario(config, {}, std::nullopt, reg), reg, RunOptions{dir.path("out")});
  } catch (const Error& e) {
    error = e.what();
    for (std::size_t pos; (pos = error.find(dir.path())) != std::string::npos;) error.replace(pos, dir.path().size(), "DIR");
  }
  if (!error.empty()) {
    for (const auto& f : dir.files()) CHECK(f.rfind("out/", 0) != 0);
  }
  return error;
}

std::string trace_run(const std::string& trace, const std::string& extra = "") {
  return run_error(kCluster + "workload: {trace: {path: t.csv" + extra + "}}\n", {{"t.csv", trace}});
}

const std::string kHeader = "job_id,submit_time_s,num_gpus,duration_s";

}  // namespace

TEST_CASE("hostile input: huge numbers", "[experiments][errors][hostile]") {
  const std::string w = "workload: {synthetic: {num_jobs: 5}}\n";
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 99999999999999999999}}\n") ==
        "DIR/run.yaml:2: workload.synthetic.num_jobs: expected an integer, got '99999999999999999999'");
  CHECK(run_error("cluster: {nodes: [{count: 1e300, type: V100, devices_per_node: 8}]}\n" + w) ==
        "DIR/run.yaml:1: cluster.nodes[0].count: expected an integer, got '1e300'");
  CHECK(run_error("cluster: {nodes: [{count: 100000000, type: V100, devices_per_node: 8}]}\n" + w) ==
        "DIR/run.yaml:1: cluster.nodes[0].count: more than 10,000,000 nodes in one group; is this a typo?");
  CHECK(trace_run(kHeader + "\na,1e300,1,10\n") == "DIR/t.csv:2: submit_time_s: the value '1e300' is out of range (over 10^12 seconds)");
  CHECK(trace_run(kHeader + "\na,0,1,1e309\n") == "DIR/t.csv:2: duration_s: the value '1e309' is beyond the range of a double");
  CHECK(trace_run(kHeader + "\na,0,4294967297,10\n") == "DIR/t.csv:2: num_gpus: must be between 1 and 1000000 GPUs, got '4294967297'");
}

TEST_CASE("hostile input: 10^7 columns", "[experiments][errors][hostile]") {
  std::string wide_row = kHeader + "\na,0,1,10";
  wide_row.reserve(wide_row.size() + 20'000'001);
  for (int i = 0; i < 10'000'000; ++i) wide_row += ",x";
  CHECK(trace_run(wide_row + "\n") == "DIR/t.csv:2: expected 4 fields like the header, got 10000004");
  std::string wide_header = kHeader;
  for (int i = 0; i < 10'000'000; ++i) wide_header += ",x";
  CHECK(trace_run(wide_header + "\na,0,1,10\n") ==
        "DIR/t.csv:1: the header has 10000004 columns, more than the 10000 schedsim reads; is the delimiter right, and is this a trace?");
}

TEST_CASE("hostile input: deeply nested YAML", "[experiments][errors][hostile]") {
  const std::string deep(100'000, '[');
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\nname: " + deep + std::string(100'000, ']') + "\n") ==
        "DIR/run.yaml:3: lists and maps nested about 500 levels deep, more than the YAML reader allows; no scenario needs that: is this the right file?");
  std::string block = kCluster + "workload: {synthetic: {num_jobs: 5}}\nname:\n";
  for (int i = 0; i < 2000; ++i) block += std::string(static_cast<std::size_t>(2 * i + 2), ' ') + "k:\n";
  CHECK_THAT(run_error(block), Catch::StartsWith("DIR/run.yaml:") && Catch::EndsWith("lists and maps nested about 500 levels deep, more than the YAML reader allows; "
                                                                                      "no scenario needs that: is this the right file?"));
  // A nested map the loader does not expect is a plain type error, however deep.
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\nname: [[[[[[[[1]]]]]]]]\n") == "DIR/run.yaml:3: name: expected a string, got a list");
}

TEST_CASE("hostile input: invalid UTF-8 and NUL bytes", "[experiments][errors][hostile]") {
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\nname: \"\xff\xfe run\"\n") ==
        "DIR/run.yaml:3: invalid UTF-8 (byte 0xFF at column 8); save the file as UTF-8");
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\npolicy: fi" + std::string(1, '\0') + "fo\n") ==
        "DIR/run.yaml:3: the file contains a NUL byte (byte 0x00 at column 11); is it a binary file? Scenarios are UTF-8 text");
  CHECK(trace_run(kHeader + "\na,0,1,10\n\xc3\x28,1,1,10\n") ==
        "DIR/t.csv:3: the line is not UTF-8 text (byte 0xC3 at column 1); convert the file, e.g. iconv -f latin1 -t utf-8");
  CHECK(trace_run(kHeader + "\na,0,1,10\nb,1,1" + std::string(1, '\0') + "0\n") == "DIR/t.csv:3: the line contains a NUL byte; is this a binary file?");
  // Valid multi-byte UTF-8 is read as is.
  CHECK(trace_run(kHeader + "\n\xe4\xbd\x9c\xe4\xb8\x9a-1,0,1,10\n").empty());
  const std::string nul_signal = "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1" + std::string(1, '\0') + "\n2023-01-01 01:00:00,2\n";
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\nsignals: {price: {file: p.csv}}\n", {{"p.csv", nul_signal}}) ==
        "DIR/p.csv:2: the line contains a NUL byte; is this a binary file?");
}

TEST_CASE("the UTF-8 check accepts every valid form and rejects each invalid one", "[experiments][errors][hostile]") {
  CHECK(invalid_utf8_at("plain ascii") == std::string_view::npos);
  CHECK(invalid_utf8_at("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == std::string_view::npos);  // é € 😀
  CHECK(invalid_utf8_at("ab\x80") == 2);              // continuation without a lead
  CHECK(invalid_utf8_at("a\xc0\xaf") == 1);           // overlong '/'
  CHECK(invalid_utf8_at("\xed\xa0\x80") == 0);        // surrogate U+D800
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0);    // above U+10FFFF
  CHECK(invalid_utf8_at("xyz\xe2\x82") == 3);         // cut short
  CHECK(invalid_utf8_at("\xff") == 0);
}

TEST_CASE("hostile input: time series with a gap, going backwards or repeated", "[experiments][errors][hostile]") {
  const std::string head = "Datetime (UTC),Price (USD/MWh)\n";
  const std::string scenario = kCluster + "workload: {synthetic: {num_jobs: 5}}\nsignals: {price: {file: p.csv}}\n";
  CHECK_THAT(run_error(scenario, {{"p.csv", head + "2023-01-01 00:00:00,1\n2023-01-01 01:00:00,2\n2023-01-01 03:00:00,3\n"}}),
             Catch::StartsWith("DIR/p.csv:4: gap in the series"));
  CHECK(run_error(scenario, {{"p.csv", head + "2023-01-01 01:00:00,1\n2023-01-01 00:00:00,2\n"}}) ==
        "DIR/p.csv:3: time 2023-01-01T00:00:00Z is before the previous row's (2023-01-01T01:00:00Z); rows must be sorted by time without duplicates");
  CHECK_THAT(run_error(scenario, {{"p.csv", head + "2023-01-01 00:00:00,1\n2023-01-01 00:00:00,2\n"}}), Catch::StartsWith("DIR/p.csv:3: "));
}

TEST_CASE("hostile input: a damaged gzip trace", "[experiments][errors][hostile]") {
  TempDir dir;
  std::string rows = kHeader + "\n";
  for (int i = 0; i < 2000; ++i) rows += "j" + std::to_string(i) + ",0,1,10\n";
  const std::string path = dir.path("t.csv.gz");
  schedsim::test::write_gzip(path, rows);
  std::string bytes = schedsim::test::read_file(path);
  for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i) bytes[i] = static_cast<char>(~bytes[i]);  // damage the middle
  dir.write("t.csv.gz", bytes);
  // The damage, not the garbage rows zlib decodes before it notices (issue 22).
  CHECK_THAT(schedsim::test::read_trace_error(path, "schedsim"),
             Catch::StartsWith("t.csv.gz: the gzip stream is truncated or damaged after line ") && Catch::Contains(" (zlib: "));
}

// Issue 22 (reliability): sizes are bounded before anything is built, and a signal stops
// a long scenario read (docs/config.md#limits).
TEST_CASE("hostile input: a datacenters list or a node-group list over the limit", "[experiments][errors][hostile][reliability]") {
  const std::string w = "workload: {synthetic: {num_jobs: 5, gpus: {1: 1}}}\npolicy: spatial\n";
  std::string sites = "datacenters:\n  sites:\n";
  for (std::size_t i = 0; i <= kMaxDatacenters; ++i) sites += "    - {name: R" + std::to_string(i) + ", nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n";
  CHECK(run_error(sites + w) == "DIR/run.yaml:3: datacenters.sites: a list of 1001 datacenters, more than the 1000 schedsim models (docs/config.md#limits: every pair has a WAN link)");
  std::string groups = "cluster:\n  nodes:\n";
  for (std::size_t i = 0; i <= kMaxNodeGroups; ++i) groups += "    - {count: 1, type: V100, devices_per_node: 1}\n";
  CHECK(run_error(groups + "workload: {synthetic: {num_jobs: 5}}\n") ==
        "DIR/run.yaml:3: cluster.nodes: a list of 100001 node groups, more than the 100000 schedsim reads (docs/config.md#limits); merge groups of the same device type and size");
}

TEST_CASE("hostile input: a sweep grid over the run limit fails before it is built", "[experiments][errors][hostile][reliability]") {
  TempDir dir;
  dir.write("s.yaml", kCluster + "workload: {synthetic: {num_jobs: 5}}\n");
  CHECK_THROWS_WITH(SweepGrid::load_file(dir.write("g.yaml", "scenario: s.yaml\npolicies: [fifo, sjf]\nseeds: 1000000000\n")),
                    dir.path("g.yaml") + ":1: the grid has 2000000000 runs (2 policies x 1000000000 seeds), more than the 100000 one sweep runs "
                                         "(docs/config.md#limits); split it into several grids");
  std::string params = "scenario: s.yaml\nseeds: 1\nparameters:\n";
  for (int i = 0; i < 20; ++i) params += "  k" + std::to_string(i) + ": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n";
  CHECK_THROWS_WITH(SweepGrid::load_file(dir.write("h.yaml", params)), Catch::StartsWith(dir.path("h.yaml") + ":1: the grid has more than 2^64 runs (10 values of k0 x") &&
                                                                Catch::EndsWith("10 values of k19 x 1 policy x 1 seed), more than the 100000 one sweep runs (docs/config.md#limits); split it into several grids"));
  CHECK_THROWS_WITH(SweepGrid::load_file(dir.write("i.yaml", "scenario: s.yaml\nseeds: [1, 0100]\n")),
                    dir.path("i.yaml") + ":2: seeds[1]: '0100' has a leading zero (octal in YAML 1.1); write 100");
  CHECK_THROWS_WITH(SweepGrid::load_file(dir.write("j.yaml", "scenario: s.yaml\nseeds: [9223372036854775808]\n")),
                    dir.path("j.yaml") + ":2: seeds[0]: must be an integer in 0..9223372036854775807 (2^63-1), got '9223372036854775808'");
  // At the limit is fine (the grid is only listed, not run).
  CHECK(SweepGrid::load_file(dir.write("k.yaml", "scenario: s.yaml\npolicies: [fifo]\nseeds: 100000\n")).runs().size() == kMaxSweepRuns);
}

TEST_CASE("hostile input: a signal while reading a scenario stops it", "[experiments][errors][hostile][reliability]") {
  TempDir dir;
  const std::string config = dir.write("run.yaml", "datacenters:\n  sites:\n    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n"
                                                   "workload: {synthetic: {num_jobs: 5, gpus: {1: 1}}}\npolicy: spatial\n");
  InterruptGuard guard;
  std::raise(SIGTERM);
  try {
    load_scenario(config, {}, std::nullopt, builtin_policies());
    FAIL("no Interrupted");
  } catch (const Interrupted& e) {
    CHECK(e.signal() == SIGTERM);
    CHECK(std::string(e.what()) == "interrupted by SIGTERM while reading the scenario's datacenters; nothing was written");
  }
  { InterruptGuard clear; }  // a new guard forgets the signal, which later tests must not see
}

TEST_CASE("hostile input: times beyond the simulated clock name their key", "[experiments][errors][hostile][reliability]") {
  const std::string w = "workload: {synthetic: {num_jobs: 5}}\n";
  // Each used to stop the run with "time is too large (over 100,000 years)", naming nothing.
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5, start_s: 1e13}}\n") ==
        "DIR/run.yaml:2: workload.synthetic.start_s: the value '1e13' is out of range (over 10^12 seconds)");
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5, arrival: {mean_interarrival_s: 2e12}}}\n") ==
        "DIR/run.yaml:2: workload.synthetic.arrival.mean_interarrival_s: the value '2e12' is out of range (over 10^12 seconds)");
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5, duration_s: {dist: constant, value: 1e15}}}\n") ==
        "workload.synthetic.duration_s: job 0 drew a duration of 1e+15 s, over the 4e12 s (about 100,000 years) a simulation can span; lower the distribution's parameters");
  CHECK(run_error(kCluster + w + "failures: {devices: {mtbf_h: 1, repair_h: 1e300}}\n") ==
        "DIR/run.yaml:3: failures.devices.repair_h: '1e300' is out of range (over 10^12 seconds, about 31,700 years)");
  CHECK(run_error(kCluster + w + "failures: {checkpoint: {interval_s: 100, cost_s: 1e300}}\n") ==
        "DIR/run.yaml:3: failures.checkpoint.cost_s: '1e300' is out of range (over 10^12 seconds, about 31,700 years)");
  CHECK(run_error(kCluster + w + "failures: {loss_spikes: {rate_per_gpu_hour: 1, restart_s: 1e300}}\n") ==
        "DIR/run.yaml:3: failures.loss_spikes.restart_s: '1e300' is out of range (over 10^12 seconds, about 31,700 years)");
}

TEST_CASE("the size limits are documented with the values the code enforces", "[experiments][errors][hostile][reliability]") {
  const std::string doc = schedsim::test::read_file(std::string(SCHEDSIM_SOURCE_DIR) + "/docs/config.md");
  REQUIRE(kMaxDatacenters == 1'000);
  REQUIRE(kMaxNodeGroups == 100'000);
  REQUIRE(kMaxSweepRuns == 100'000);
  CHECK_THAT(doc, Catch::Contains("## Limits"));
  CHECK_THAT(doc, Catch::Contains("| `datacenters.sites` | 1,000 datacenters |"));
  CHECK_THAT(doc, Catch::Contains("| 100,000 node groups |"));
  CHECK_THAT(doc, Catch::Contains("| 100,000 runs |"));
  CHECK_THAT(doc, Catch::Contains("| 10^12 s (about 31,700 years) |"));
  CHECK_THAT(doc, Catch::Contains("| 256 MiB |"));
}

TEST_CASE("hostile input: YAML aliases that expand a small file without end", "[experiments][errors][hostile][reliability]") {
  // "Billion laughs": 10 aliases per level, 8 levels = 10^8 values from 1 KB of text; and
  // an alias inside its own anchor (a cycle). Both used to hang or overflow the stack
  // where the tree is copied (--set values, sweep grids, the resolved config).
  std::string bomb = "name: [&p0 [x, x, x, x, x, x, x, x, x, x]";
  for (int i = 1; i <= 8; ++i) {
    const std::string prev = "*p" + std::to_string(i - 1);
    bomb += ", &p" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) bomb += ", " + prev;
    bomb += "]";
  }
  bomb += "]\n";
  const std::string msg = "the document has more than 10,000,000 values once its aliases (*name) are expanded, or an alias refers to a "
                          "node that contains it (docs/config.md#limits); write the values out";
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\n" + bomb) == "DIR/run.yaml: " + msg);
  CHECK(run_error(kCluster + "workload: {synthetic: {num_jobs: 5}}\nname: &a [*a]\n") == "DIR/run.yaml: " + msg);
  YAML::Node doc = ConfigNode::load_string(kCluster, "c.yaml").yaml();
  CHECK_THROWS_WITH(apply_override(doc, "name=&a [x, *a]"), "--set name=&a [x, *a]: " + msg);
  // Aliases that stay small are fine.
  CHECK(run_error("cluster: {nodes: [&g {count: 1, type: V100, devices_per_node: 8}, *g]}\nworkload: {synthetic: {num_jobs: 5}}\n").empty());
}
