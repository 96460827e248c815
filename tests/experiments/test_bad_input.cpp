// The bad-input catalogue: each case gives one message naming the file and line or key,
// and leaves no result file behind.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "sim/error.hpp"
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
        "DIR/run.yaml:4: unknown key 'sed' (did you mean 'seed'?); valid keys here: seed, name, cluster, workload, policy, accelerators, workload_profiles, physics, env");
  CHECK(attempt(kCluster + "workload:\n  synthetic:\n    num_jobs: 5\n    gpu: 1\n").error ==
        "DIR/run.yaml:5: workload.synthetic: unknown key 'gpu' (did you mean 'gpus'?); valid keys here: preset, num_jobs, arrival, duration_s, gpus, start_s, estimate_error_sigma, recorded_status, models, elastic");
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
        "DIR/run.yaml:3: policy: unknown policy 'lifo'; registered policies: fifo, sjf, srtf, las, edf, priority, compose, slurm-easy, tiresias, volcano-binpack, gittins, fair-share, themis, elastic-goodput, gandiva (see `schedsim policies`)");
  CHECK(attempt(kCluster + "workload: {synthetic: {}, trace: x.csv}\n").error ==
        "DIR/run.yaml:2: workload: give exactly one of 'trace' (a file) or 'synthetic' (a generated workload)");
  CHECK(attempt(kCluster + "workload: {synthetic: {}}\n", "", {"workload.synthetic.num_jobs=-1"}).error ==
        "DIR/run.yaml: workload.synthetic.num_jobs: must be a positive integer, got '-1'");
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
