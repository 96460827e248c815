// The bad-input catalogue: each case gives one message naming the file and line or key,
// and leaves no result file behind.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

const std::string kCluster = "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 8}]}\n";
const std::string kHeader = "job_id,submit_time_s,num_gpus,duration_s\n";

struct Outcome {
  std::string error;                // "" when the run succeeded
  std::vector<std::string> files;   // what the run left in the folder
  std::vector<std::string> warnings;
  std::string results;
};

// Writes the trace (if any) and the scenario, loads and runs it into out/, and reports
// the error message (with the temp folder replaced by "DIR") and the files left.
Outcome attempt(const std::string& scenario, const std::string& trace = "", const std::vector<std::string>& overrides = {}) {
  TempDir dir;
  if (!trace.empty()) dir.write("jobs.csv", trace);
  const std::string config = dir.write("run.yaml", scenario);
  Outcome o;
  try {
    const PolicyRegistry reg = builtin_policies();
    const ScenarioConfig s = load_scenario(config, overrides, std::nullopt, reg);
    const RunResult r = run_scenario(s, reg, RunOptions{dir.path("out")});
    o.warnings = r.warnings;
    o.results = read_file(dir.path("out/results.json"));
  } catch (const Error& e) {
    o.error = e.what();
    for (std::size_t pos; (pos = o.error.find(dir.path())) != std::string::npos;) o.error.replace(pos, dir.path().size(), "DIR");
  }
  for (const auto& f : dir.files()) {
    if (f.rfind("out/", 0) == 0) o.files.push_back(f);
  }
  return o;
}

std::string trace_scenario(const std::string& extra = "") {
  return kCluster + "workload: {trace: {path: jobs.csv, format: schedsim}" + extra + "}\npolicy: fifo\n";
}

}  // namespace

TEST_CASE("bad input: missing files", "[experiments][bad-input]") {
  const Outcome o = attempt(kCluster + "workload: {trace: {path: nothere.csv}}\n");
  CHECK(o.error == "DIR/nothere.csv: cannot open the trace file (does it exist?)");
  CHECK(o.files.empty());
  CHECK_THROWS_WITH(load_scenario("/nonexistent/x.yaml", {}, std::nullopt, builtin_policies()),
                    "/nonexistent/x.yaml: cannot open the config file (does it exist?)");
}

TEST_CASE("bad input: unknown keys and wrong types", "[experiments][bad-input]") {
  CHECK(attempt(kCluster + "workload: {synthetic: {num_jobs: 5}}\npolicy: fifo\nsed: 3\n").error ==
        "DIR/run.yaml:4: unknown key 'sed' (did you mean 'seed'?); valid keys here: seed, name, cluster, workload, policy, accelerators, workload_profiles, physics, energy, signals, failures, env, train, datacenters, inference, market, metrics, information");
  CHECK(attempt(kCluster + "workload:\n  synthetic:\n    num_jobs: 5\n    gpu: 1\n").error ==
        "DIR/run.yaml:5: workload.synthetic: unknown key 'gpu' (did you mean 'gpus'?); valid keys here: preset, num_jobs, arrival, load, duration_s, gpus, start_s, estimate_error_sigma, recorded_status, models, elastic");
  CHECK(attempt(kCluster + "workload:\n  synthetic:\n    num_jobs: lots\n").error ==
        "DIR/run.yaml:4: workload.synthetic.num_jobs: expected an integer, got 'lots'");
  CHECK(attempt("cluster: {nodes: [{count: 1, type: V100, devices_per_node: eight}]}\nworkload: {synthetic: {}}\n").error ==
        "DIR/run.yaml:1: cluster.nodes[0].devices_per_node: expected an integer, got 'eight'");
  CHECK(attempt("cluster: {nodes: {count: 1}}\nworkload: {synthetic: {}}\n").error ==
        "DIR/run.yaml:1: cluster.nodes: expected a list, got a map");
  CHECK(attempt("cluster: {nodes: [{count: 1, type: V100, devices_per_node: 8}]}\n").error == "DIR/run.yaml:1: missing required key 'workload'");
  CHECK(attempt(kCluster + "workload: {synthetic: {}}\npolicy: {name: sjf, by: size}\n").error ==
        "DIR/run.yaml:3: policy.by: 'size' is not allowed; choose one of: auto, duration, estimate");
  CHECK(attempt(kCluster + "workload: {synthetic: {}}\npolicy: lifo\n").error ==
        "DIR/run.yaml:3: policy: unknown policy 'lifo' (did you mean 'fifo'?); registered policies: fifo, sjf, srtf, las, edf, priority, compose, slurm-easy, tiresias, volcano-binpack, gittins, fair-share, themis, elastic-goodput, gandiva, carbon-aware, price-aware, spatial, spatio-temporal, inference, fgd, gavel, thermal-aware, tiresias-dlas, tiresias-dlas-gpu, tiresias-fifo-yarn, round_fifo, gavel-fifo-perf, gavel-las, rounds, slurm, pai-reservation, singularity, kubernetes, queue-tree, volcano, yunikorn (see `schedsim policies`)");
  CHECK(attempt(kCluster + "workload: {synthetic: {}, trace: x.csv}\n").error ==
        "DIR/run.yaml:2: workload: give exactly one of 'trace' (a file) or 'synthetic' (a generated workload)");
  CHECK(attempt(kCluster + "workload: {synthetic: {}}\n", "", {"workload.synthetic.num_jobs=-1"}).error ==
        "--set workload.synthetic.num_jobs=-1: must be a positive integer, got '-1'");
}

TEST_CASE("bad input: trace rows", "[experiments][bad-input]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {kHeader + "a,0,1,10\nb,5,1,-3\n", "DIR/jobs.csv:3: duration_s: must be > 0 seconds, got '-3'"},
      {kHeader + "a,0,1,0\n", "DIR/jobs.csv:2: duration_s: must be > 0 seconds, got '0'"},
      {kHeader + "a,0,1,NaN\n", "DIR/jobs.csv:2: duration_s: expected a finite number, got 'NaN'"},
      {kHeader + "a,soon,1,10\n", "DIR/jobs.csv:2: submit_time_s: expected a number, got 'soon'"},
      {"job_id,submit_time_s,duration_s\na,0,10\n", "DIR/jobs.csv:1: missing column 'num_gpus' for the schedsim format (header has: job_id, submit_time_s, duration_s)"},
      {kHeader, "DIR/jobs.csv: the trace has a header but no jobs"},
  };
  for (const auto& [trace, message] : cases) {
    const Outcome o = attempt(trace_scenario(), trace);
    CHECK(o.error == message);
    CHECK(o.files.empty());
  }
}

TEST_CASE("bad input: a job larger than the cluster, unless dropped", "[experiments][bad-input]") {
  const std::string trace = kHeader + "a,0,1,10\nbig,1,16,10\nc,2,8,10\n";
  const Outcome o = attempt(trace_scenario(), trace);
  CHECK(o.error == "DIR/jobs.csv:3: job 'big': asks for 16 GPUs but the cluster has 8 in total; enlarge the cluster or set workload.oversized: drop to skip such jobs");
  CHECK(o.files.empty());  // the run had started: its partial outputs were removed
  const Outcome dropped = attempt(kCluster + "workload: {trace: {path: jobs.csv}, oversized: drop}\n", trace);
  REQUIRE(dropped.error.empty());
  const auto j = nlohmann::json::parse(dropped.results);
  CHECK(j["summary"]["jobs_dropped_oversized"] == 1);
  CHECK(j["summary"]["jobs_completed"] == 2);
  // A synthetic mix that cannot fit is caught before the run.
  CHECK(attempt(kCluster + "workload: {synthetic: {gpus: {1: 0.5, 16: 0.5}}}\n").error ==
        "DIR/run.yaml:2: workload.synthetic.gpus: jobs may ask for 16 GPUs but the cluster has 8; enlarge the cluster or set workload.oversized: drop");
}

TEST_CASE("bad input: unsorted submit times are sorted with a warning", "[experiments][bad-input]") {
  const Outcome o = attempt(trace_scenario(), kHeader + "a,10,1,5\nb,0,1,5\n");
  REQUIRE(o.error.empty());
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::EndsWith("jobs.csv:3: submit times are not in order; the trace was sorted by submit time (ties keep file order)"));
  const auto j = nlohmann::json::parse(o.results);
  CHECK(j["warnings"].size() == 1);
  CHECK(j["summary"]["jobs_completed"] == 2);
}

TEST_CASE("bad input: energy and signals keys and a signal file with a gap", "[experiments][errors][energy]") {
  const std::string w = kCluster + "workload: {synthetic: {num_jobs: 5}}\npolicy: fifo\n";
  CHECK_THAT(attempt(w + "energy: {pue: 0.9}\n").error, Catch::Contains("run.yaml:4") && Catch::Contains("must be in [1, 10]"));
  CHECK_THAT(attempt(w + "energy: {pwe: 1.2}\n").error, Catch::Contains("unknown key 'pwe' (did you mean 'pue'?)"));
  CHECK_THAT(attempt(w + "signals: {origin_utc: 2023-01-01T00:00:00Z}\n").error, Catch::Contains("give at least one of price (USD/MWh) or carbon"));
  CHECK_THAT(attempt(w + "signals: {origin_utc: yesterday, carbon: 300}\n").error, Catch::Contains("expected a UTC date-time"));
  CHECK_THAT(attempt(w + "signals: {carbon: {constant: 1, diurnal: {mean: 1, amplitude: 0}}}\n").error,
             Catch::Contains("give exactly one of file, constant or diurnal"));
  CHECK_THAT(attempt("cluster: {nodes: [{count: 1, type: MyGPU, devices_per_node: 8}]}\nworkload: {synthetic: {num_jobs: 5}}\nenergy: {}\n").error,
             Catch::Contains("the energy model needs the power of device type 'MyGPU'") && Catch::Contains("add it under `accelerators:` with tdp_w and idle_w"));
  // A signal file with a missing hour: the error names the file and line, and no result is written.
  TempDir dir;
  const std::string csv = dir.write("c.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\n2023-01-01 02:00:00,2\n2023-01-01 03:00:00,3\n");
  const Outcome o = attempt(w + "signals: {price: {file: " + csv + "}}\n");
  CHECK_THAT(o.error, Catch::Contains("c.csv:4: gap in the series"));
  CHECK(o.files.empty());
  // A run with energy and signals writes the totals.
  const Outcome ok = attempt(w + "energy: {pue: 1.1}\nsignals: {price: 100, carbon: {diurnal: {mean: 300, amplitude: 100}}}\n");
  REQUIRE(ok.error.empty());
  const auto j = nlohmann::json::parse(ok.results);
  CHECK(j["energy"]["energy_kwh"].get<double>() == Approx(1.1 * j["energy"]["it_energy_kwh"].get<double>()).epsilon(1e-12));
  // A constant price: cost = energy x price.
  CHECK(j["energy"]["cost_usd"].get<double>() == Approx(j["energy"]["energy_kwh"].get<double>() / 1000 * 100).epsilon(1e-12));
}

TEST_CASE("bad input: datacenters keys", "[experiments][errors][datacenters]") {
  const std::string w = "workload: {synthetic: {num_jobs: 5, gpus: {1: 1}}}\ninformation: oracle\npolicy: spatial\n";
  const std::string two = "datacenters:\n  sites:\n    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 4}], signals: {carbon: 100}}\n"
                          "    - {name: B, nodes: [{count: 1, type: V100, devices_per_node: 4}], signals: {carbon: 200}}\n";
  CHECK_THAT(attempt(kCluster + two + w).error, Catch::Contains("with `datacenters:` the nodes go under each datacenter"));
  CHECK_THAT(attempt(two + "signals: {carbon: 1}\n" + w).error, Catch::Contains("the signals go under each datacenter"));
  CHECK_THAT(attempt(two + "energy: {pue: 1.2}\n" + w).error, Catch::Contains("the PUE goes under each datacenter"));
  CHECK_THAT(attempt(two + "  wan: {links: [{between: [A, C]}]}\n" + w).error, Catch::Contains("'C' is not one of the datacenters under sites"));
  CHECK_THAT(attempt(two + "  wan: {bandwidth_gbit_s: 0}\n" + w).error, Catch::Contains("bandwidth_gbit_s"));
  CHECK_THAT(attempt(two + "  allowed: nowhere\n" + w).error, Catch::Contains("must be any (every datacenter) or home"));
  CHECK_THAT(attempt("datacenters:\n  sites:\n    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 4}], signals: {carbon: 100}}\n"
                     "    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 4}], signals: {carbon: 100}}\n" + w).error,
             Catch::Contains("datacenter 'A' is listed twice"));
  CHECK_THAT(attempt("datacenters:\n  sites:\n    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 4}], signals: {carbon: 100}}\n"
                     "    - {name: B, nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n" + w).error,
             Catch::Contains("needs signals like the first datacenter"));
  CHECK_THAT(attempt(two + "workload: {synthetic: {num_jobs: 5, gpus: {8: 1}}}\npolicy: spatial\n").error,
             Catch::Contains("the largest datacenter has 4 and a job runs inside one datacenter"));
  // A valid two-datacenter run reports energy per datacenter.
  const Outcome ok = attempt(two + "energy: {}\n" + w);
  REQUIRE(ok.error.empty());
  const auto r = nlohmann::json::parse(ok.results);
  REQUIRE(r["energy"]["by_datacenter"].size() == 2);
  CHECK(r["energy"]["by_datacenter"][1]["name"] == "B");
  CHECK(r["config"]["datacenters"]["sites"][0]["pue"] == 1.0);
}

// Issue 22 (reliability): inputs that used to run with another meaning or fail obscurely.
TEST_CASE("bad input: duplicate keys, octal-looking integers and seeds out of range", "[experiments][bad-input][reliability]") {
  const std::string w = "workload: {synthetic: {num_jobs: 5}}\n";
  CHECK(attempt(kCluster + w + "policy: fifo\npolicy: sjf\n").error ==
        "DIR/run.yaml:4: duplicate key 'policy' (first given on line 3); a key may appear only once in a map");
  CHECK(attempt(kCluster + w + "---\npolicy: sjf\n").error ==
        "DIR/run.yaml:3: a second YAML document starts here ('---'); schedsim reads one document per file and would ignore the rest: remove the '---' line or split the file");
  CHECK(attempt(kCluster + "workload:\n  synthetic:\n    num_jobs: 0100\n").error ==
        "DIR/run.yaml:4: workload.synthetic.num_jobs: '0100' has a leading zero (octal in YAML 1.1); write 100");
  CHECK(attempt(kCluster + w + "seed: 010\n").error == "DIR/run.yaml:3: seed: '010' has a leading zero (octal in YAML 1.1); write 10");
  CHECK(attempt(kCluster + w + "seed: -1\n").error == "DIR/run.yaml:3: seed: must be an integer in 0..9223372036854775807 (2^63-1), got '-1'");
  CHECK(attempt(kCluster + w + "seed: 9223372036854775808\n").error ==
        "DIR/run.yaml:3: seed: must be an integer in 0..9223372036854775807 (2^63-1), got '9223372036854775808'");
  CHECK(attempt(kCluster + w, "", {"seed=-1"}).error == "--set seed=-1: must be an integer in 0..9223372036854775807 (2^63-1), got '-1'");
  CHECK_THROWS_WITH(load_scenario(ConfigNode::load_string(kCluster + w, "s.yaml"), {}, kMaxSeed + 1, builtin_policies()),
                    "seed: must be an integer in 0..9223372036854775807 (2^63-1), got 9223372036854775808");
  // GPU counts are map keys: the same rule.
  CHECK(attempt(kCluster + "workload: {synthetic: {gpus: {01: 1.0}}}\n").error ==
        "DIR/run.yaml:2: workload.synthetic.gpus.01: GPU counts must be positive integers: '01' has a leading zero (octal in YAML 1.1); write 1");
}

TEST_CASE("bad input: a --set value is reported as the --set option", "[experiments][bad-input][reliability]") {
  const std::string s = kCluster + "workload: {synthetic: {num_jobs: 5}}\n";
  CHECK(attempt(s, "", {"workload.synthetic.num_jobs=abc"}).error == "--set workload.synthetic.num_jobs=abc: expected an integer, got 'abc'");
  CHECK(attempt(s, "", {"policy={name: sjf, by: size}"}).error ==
        "--set policy={name: sjf, by: size}: policy.by: 'size' is not allowed; choose one of: auto, duration, estimate");
  CHECK(attempt(s, "", {"cluster.nodes.0.count=0x8"}).error ==
        "--set cluster.nodes.0.count=0x8: '0x8' is not a decimal integer (hexadecimal prefixes are not read); write 8");
  // An error in the file itself still names the file, with overrides given.
  CHECK(attempt(s + "policy: lifo\n", "", {"seed=3"}).error.rfind("DIR/run.yaml:3: policy: unknown policy 'lifo'", 0) == 0);
}

TEST_CASE("bad input: a NUL or a line break in a path or name", "[experiments][bad-input][reliability]") {
  CHECK(attempt(kCluster + "workload: {trace: {path: \"jobs.csv\\0.txt\"}}\n", kHeader + "a,0,1,10\n").error ==
        "DIR/run.yaml:2: workload.trace.path: the value contains a NUL character (\\0) at character 9; control characters are not allowed in names and paths");
  CHECK(attempt(kCluster + "workload: {synthetic: {num_jobs: 5}}\nname: \"a\\rb\"\n").error ==
        "DIR/run.yaml:3: name: the value contains a carriage return (\\r) at character 2; control characters are not allowed in names and paths");
}

TEST_CASE("bad input: env: and train: are checked by every command that loads the scenario", "[experiments][bad-input][reliability]") {
  const std::string s = kCluster + "workload: {synthetic: {num_jobs: 5}}\n";
  CHECK(attempt(s + "train: {total_step: 5}\n").error.rfind("DIR/run.yaml:3: train: unknown key 'total_step' (did you mean 'total_steps'?); valid keys here: algorithm,", 0) == 0);
  CHECK(attempt(s + "train: {num_envs: 0100}\n").error == "DIR/run.yaml:3: train.num_envs: '0100' has a leading zero (octal in YAML 1.1); write 100");
  CHECK(attempt(s + "train: {seed: -2}\n").error == "DIR/run.yaml:3: train.seed: must be an integer in 0..9223372036854775807 (2^63-1), got '-2'");
  CHECK(attempt(s + "env: {max_candidate: 8}\n").error.rfind("DIR/run.yaml:3: env: unknown key 'max_candidate' (did you mean 'max_candidates'?)", 0) == 0);
  CHECK(attempt(s, "", {"train.epochs=lots"}).error == "--set train.epochs=lots: expected an integer, got 'lots'");
  // The environment's cross-check too: cooling set-points need a thermal model.
  CHECK(attempt(s + "env:\n  max_candidates: 8\n  cooling_setpoints: [20, 24]\n").error ==
        "DIR/run.yaml:5: env.cooling_setpoints needs a thermal model: add `thermal:` under `energy:` or under each datacenter");
  // A valid train: map does not change a run.
  CHECK(attempt(s + "train: {total_steps: 1000, seed: 3}\nenv: {max_candidates: 8}\n").error.empty());
}

TEST_CASE("bad input: a folder given as the config", "[experiments][bad-input][reliability]") {
  TempDir dir;
  CHECK(attempt("# nothing here\n").error == "DIR/run.yaml: the scenario is empty; it needs at least cluster and workload (`schedsim default-config` prints a complete one)");
  std::filesystem::create_directories(dir.path("conf"));
  CHECK_THROWS_WITH(load_scenario(dir.path("conf"), {}, std::nullopt, builtin_policies()), dir.path("conf") + ": is a directory, not a config file");
}

TEST_CASE("the largest seed runs, is recorded as given and runs again identically", "[experiments][bad-input][reliability]") {
  TempDir dir;
  const std::string base = kCluster + "workload: {synthetic: {num_jobs: 20, arrival: {mean_interarrival_s: 30}}}\npolicy: fifo\n";
  const PolicyRegistry reg = builtin_policies();
  run_scenario(load_scenario(dir.write("a.yaml", base), {}, kMaxSeed, reg), reg, RunOptions{dir.path("a")});
  const auto first = nlohmann::json::parse(read_file(dir.path("a/results.json")));
  REQUIRE(first["seed"].is_number_unsigned());
  const std::uint64_t recorded = first["seed"].get<std::uint64_t>();
  CHECK(recorded == kMaxSeed);
  // The recorded seed given back, as YAML and as the seed argument: the same run.
  run_scenario(load_scenario(dir.write("b.yaml", base + "seed: " + std::to_string(recorded) + "\n"), {}, std::nullopt, reg), reg, RunOptions{dir.path("b")});
  run_scenario(load_scenario(dir.write("c.yaml", base), {}, recorded, reg), reg, RunOptions{dir.path("c")});
  CHECK(read_file(dir.path("b/jobs.csv")) == read_file(dir.path("a/jobs.csv")));
  CHECK(read_file(dir.path("c/jobs.csv")) == read_file(dir.path("a/jobs.csv")));
  const auto second = nlohmann::json::parse(read_file(dir.path("b/results.json")));
  CHECK(second["seed"] == first["seed"]);
  CHECK(second["summary"] == first["summary"]);
}

TEST_CASE("bad input: an inference request-rate file is called a request-rate series", "[experiments][bad-input]") {
  const std::string scenario = kCluster + "workload: {synthetic: {num_jobs: 5}}\npolicy: inference\n"
                               "inference: {services: [{name: s, rate: {file: rate.csv}, capacity_rps: {V100: 10}, slo_p99_s: 1}]}\n";
  const Outcome o = attempt(scenario);
  CHECK(o.error == "DIR/rate.csv: cannot open the request-rate series (does it exist?)");
  CHECK(o.files.empty());
}
