// The benchmark suite's workloads: their shape (events per job, rows read, sorted runs),
// not their speed (wall-clock numbers are never asserted; docs/benchmarks.md has them).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include <set>

#include "app/bench.hpp"
#include "scenario/scenario.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;

TEST_CASE("bench kernel: one arrival and one completion per job, same numbers every run", "[bench]") {
  const PolicyRegistry registry = builtin_policies();
  BenchOptions options;
  options.jobs = 5000;
  options.gpus = 400;
  const auto a = run_bench("kernel", options, registry);
  const auto b = run_bench("kernel", options, registry);
  REQUIRE(a.size() == 2);  // fifo and sjf
  CHECK(a[0].policy == "fifo");
  CHECK(a[1].policy == "sjf");
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].unit == "events");
    CHECK(a[i].events == 2 * 5000);
    CHECK(a[i].count == a[i].events);
    CHECK(a[i].gpus == 400);
    // FIFO and SJF without backfilling decide once per instant with a change: at most
    // once per event.
    CHECK(a[i].decision_points <= a[i].events);
    CHECK(a[i].decision_points >= 5000);
    CHECK(a[i].peak_rss_mib > 0);
    CHECK(b[i].decision_points == a[i].decision_points);
    CHECK(b[i].mean_jct_s == a[i].mean_jct_s);
  }
}

TEST_CASE("bench full turns on contention, failures, checkpoints, energy and inference services", "[bench]") {
  const PolicyRegistry registry = builtin_policies();
  const ScenarioConfig s = ScenarioConfig::parse(ConfigNode::load_string(bench_scenario_yaml("full", 2000, 160), "full"), registry);
  CHECK(s.physics.has_value());
  CHECK(s.failures.has_value());
  CHECK(s.energy.has_value());
  CHECK(s.signals.has_value());
  REQUIRE(s.inference.has_value());
  CHECK(s.num_devices() == 160);
  BenchOptions options;
  options.jobs = 2000;
  options.gpus = 160;
  options.policies = {"fifo"};
  const auto r = run_bench("full", options, registry);
  REQUIRE(r.size() == 1);
  // Periodic checkpoints (every 30 min of compute, mean job 1 h) add due and commit events.
  CHECK(r[0].events > 3 * 2000);
  CHECK(r[0].mean_jct_s > 0);
  // The inference policy ran in front of fifo: the service held replicas (without it, 0).
  CHECK(r[0].replica_hours > 0);
}

TEST_CASE("bench policies runs every registered policy that needs no argument", "[bench]") {
  const PolicyRegistry registry = builtin_policies();
  BenchOptions options;
  options.jobs = 200;
  options.gpus = 64;
  const auto results = run_bench("policies", options, registry);
  std::set<std::string> ran;
  for (const auto& r : results) {
    ran.insert(r.policy);
    CHECK(r.jobs == 200);
    CHECK(r.events >= 2 * 200);  // preemptive policies and wake-ups add events
  }
  for (const auto& info : registry.all()) {
    if (info.argument_option.empty()) CHECK(ran.count(info.name) == 1);
  }
  CHECK(ran.count("carbon-aware") == 1);  // the workload has signals
}

TEST_CASE("bench trace reads every row through the external sort", "[bench][trace]") {
  BenchOptions options;
  options.jobs = 150'001;  // more than one in-memory run (100,000 jobs), odd: one row unpaired
  const auto r = run_bench("trace", options, builtin_policies());
  REQUIRE(r.size() == 1);
  CHECK(r[0].unit == "rows");
  CHECK(r[0].count == 150'001);
  CHECK(r[0].policy == "schedsim (unsorted, 2 sorted runs)");
}

TEST_CASE("bench rejects unknown names and cluster sizes", "[bench]") {
  const PolicyRegistry registry = builtin_policies();
  CHECK_THROWS_WITH(run_bench("kernal", {}, registry), Catch::Contains("unknown benchmark") && Catch::Contains("kernel"));
  BenchOptions options;
  options.gpus = 12;
  CHECK_THROWS_WITH(run_bench("kernel", options, registry), Catch::Contains("multiple of 8"));
  options.gpus = 16;
  options.policies = {"fiffo"};
  CHECK_THROWS_WITH(run_bench("kernel", options, registry), Catch::Contains("unknown policy 'fiffo'"));
}

TEST_CASE("bench gavel runs gavel's LP in rounds on Gavel's job types with the measured throughputs", "[bench][gavel][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const std::string matrix = data + "/gavel/simulation_throughputs.json";
  const PolicyRegistry registry = builtin_policies();
  // 240 GPUs: 10 nodes of 8 each of V100, P100 and K80.
  const ScenarioConfig s = ScenarioConfig::parse(ConfigNode::load_string(bench_scenario_yaml("gavel", 200, 240, matrix), "gavel"), registry);
  REQUIRE(s.cluster.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(s.cluster[i].type == std::vector<std::string>{"V100", "P100", "K80"}[i]);
    CHECK(s.cluster[i].count == 10);
    CHECK(s.cluster[i].devices_per_node == 8);
  }
  REQUIRE(s.throughputs);
  CHECK(s.physics->reference_device == "V100");
  BenchOptions options;
  options.jobs = 200;
  options.gpus = 240;
  options.throughputs = matrix;
  const auto a = run_bench("gavel", options, registry);
  const auto b = run_bench("gavel", options, registry);
  REQUIRE(a.size() == 1);  // gavel alone by default
  CHECK(a[0].policy == "gavel");
  CHECK(a[0].jobs == 200);
  // Arrivals, completions, and the preemptions, moves and round wake-ups of Gavel's rounds.
  CHECK(a[0].events > 2 * 200);
  CHECK(b[0].events == a[0].events);
  CHECK(b[0].decision_points == a[0].decision_points);
  CHECK(b[0].mean_jct_s == a[0].mean_jct_s);
}

TEST_CASE("bench gavel needs three 8-GPU nodes and the throughput matrix", "[bench][gavel]") {
  const PolicyRegistry registry = builtin_policies();
  BenchOptions options;
  options.gpus = 16;
  CHECK_THROWS_WITH(run_bench("gavel", options, registry),
                    "--gpus: gavel needs at least 24 (one 8-GPU node each of V100, P100 and K80), got 16");
  options.gpus = 24;
  options.throughputs = "no-such-dir/m.json";
  CHECK_THROWS_WITH(run_bench("gavel", options, registry),
                    "--throughputs: cannot open Gavel's throughput matrix 'no-such-dir/m.json' (bench gavel reads "
                    "../shared/data/gavel/simulation_throughputs.json from the working directory unless --throughputs gives its path)");
}

TEST_CASE("bench gavel-trace runs gavel and gavel-las on Gavel's 6,143-job trace: the scenario file's run", "[bench][gavel][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const char* old = std::getenv("SCHEDSIM_DATA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("SCHEDSIM_DATA", data.c_str(), 1);
  const PolicyRegistry registry = builtin_policies();
  BenchOptions options;
  options.jobs = 5;  // not used: the trace's jobs
  const auto r = run_bench("gavel-trace", options, registry);
  REQUIRE(r.size() == 2);  // gavel and gavel-las by default
  CHECK(r[0].policy == "gavel");
  CHECK(r[1].policy == "gavel-las");
  for (const auto& x : r) {
    CHECK(x.name == "gavel-trace");
    CHECK(x.jobs == 6143);
    CHECK(x.gpus == 108);
  }
  // experiments/configs/gavel_continuous_6143.yaml's run (docs/benchmarks.md: 211,111 events).
  CHECK(r[0].events == 211111);
  CHECK(r[0].mean_jct_s == 63395.421228255385);
  CHECK(r[1].events == 126749);
  CHECK(r[1].mean_jct_s == 59926.38781197877);  // 127,202 events, 59,902.768 s before gavel's LP tie rule
  // Without the trace: the path, the folder and where the folder came from.
  ::setenv("SCHEDSIM_DATA", "/", 1);
  options.policies = {"gavel"};
  CHECK_THROWS_WITH(run_bench("gavel-trace", options, registry),
                    "bench gavel-trace:17: physics.throughputs: $SCHEDSIM_DATA/gavel/simulation_throughputs.json: /gavel/simulation_throughputs.json "
                    "does not exist (data folder /, from SCHEDSIM_DATA or --data-dir)");
  saved ? ::setenv("SCHEDSIM_DATA", saved->c_str(), 1) : ::unsetenv("SCHEDSIM_DATA");
}

TEST_CASE("bench las runs Tiresias' LAS presets and las, with demotion timers and preemptions", "[bench][las]") {
  const PolicyRegistry registry = builtin_policies();
  const ScenarioConfig s = ScenarioConfig::parse(ConfigNode::load_string(bench_scenario_yaml("las", 3000, 128), "las"), registry);
  CHECK(s.num_devices() == 128);
  BenchOptions options;
  options.jobs = 3000;
  options.gpus = 128;
  const auto a = run_bench("las", options, registry);
  const auto b = run_bench("las", options, registry);
  REQUIRE(a.size() == 3);
  CHECK(a[0].policy == "tiresias-dlas");
  CHECK(a[1].policy == "tiresias-dlas-gpu");
  CHECK(a[2].policy == "las");
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].jobs == 3000);
    CHECK(a[i].unit == "events");
    // The presets' exact demotion timers add wake-ups beyond one arrival and one
    // completion per job; las (demotion at the next event) has exactly those two.
    if (i < 2) CHECK(a[i].events > 2 * 3000);
    else CHECK(a[i].events == 2 * 3000);
    CHECK(b[i].events == a[i].events);
    CHECK(b[i].decision_points == a[i].decision_points);
    CHECK(b[i].mean_jct_s == a[i].mean_jct_s);
  }
}

TEST_CASE("bench llm runs LLM training jobs under parallelism plans (planner, plan memory, DP contention) under fifo and sjf", "[bench][llm]") {
  const PolicyRegistry registry = builtin_policies();
  const ScenarioConfig s = ScenarioConfig::parse(ConfigNode::load_string(bench_scenario_yaml("llm", 200, 256), "llm"), registry);
  CHECK(s.num_devices() == 256);
  BenchOptions options;
  options.jobs = 200;
  options.gpus = 256;
  const auto a = run_bench("llm", options, registry);
  const auto b = run_bench("llm", options, registry);
  REQUIRE(a.size() == 2);
  CHECK(a[0].policy == "fifo");
  CHECK(a[1].policy == "sjf");
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].jobs == 200);
    CHECK(a[i].unit == "events");
    // One arrival and one completion per job at least (checkpoint stalls and rate
    // changes add more); every job finishes, so the mean JCT is positive.
    CHECK(a[i].events >= 2 * 200);
    CHECK(a[i].mean_jct_s > 0);
    CHECK(b[i].events == a[i].events);
    CHECK(b[i].decision_points == a[i].decision_points);
    CHECK(b[i].mean_jct_s == a[i].mean_jct_s);
  }
  // sjf ranks by the (oracle) size: a different schedule than fifo's on the same jobs.
  CHECK(a[1].mean_jct_s != a[0].mean_jct_s);
}

TEST_CASE("bench serving: the Azure conversation hour on 32 replicas, or a synthetic stream of its size without the data", "[bench][serving]") {
  const PolicyRegistry registry = builtin_policies();
  const char* old = std::getenv("SCHEDSIM_DATA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  const std::string data = schedsim::test::shared_data_dir();  // before SCHEDSIM_DATA changes
  // Without the data folder: the same-size synthetic stream, labelled as such.
  ::setenv("SCHEDSIM_DATA", "/", 1);
  const auto s = run_bench("serving", {}, registry);
  REQUIRE(s.size() == 1);
  CHECK(s[0].name == "serving");
  CHECK(s[0].policy == "synthetic(no-data)");
  CHECK(s[0].jobs == 19482);  // the seeded stream at 19,366 requests per 3,501.72 s
  CHECK(s[0].unit == "iterations");
  CHECK(s[0].gpus == 32);
  CHECK(s[0].count == s[0].events);
  CHECK(s[0].count >= s[0].jobs);  // every request needs a prefill iteration
  CHECK(run_bench("serving", {}, registry)[0].count == s[0].count);
  if (!data.empty()) {
    ::setenv("SCHEDSIM_DATA", data.c_str(), 1);
    const auto r = run_bench("serving", {}, registry);
    CHECK(r[0].policy == "azure-conv");
    CHECK(r[0].jobs == 19366);
    CHECK(r[0].count >= r[0].jobs);
  } else {
    WARN("skipped the trace half: ../shared/data is absent");
  }
  saved ? ::setenv("SCHEDSIM_DATA", saved->c_str(), 1) : ::unsetenv("SCHEDSIM_DATA");
}
