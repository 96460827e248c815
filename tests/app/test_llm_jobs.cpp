// Issue 26 in the kernel: LLM training jobs under a parallelism plan (auto or declared),
// through the scenario layer: iteration time and memory from the plan, placement-time
// OOM, waiting for enough devices, max-min sharing of DP traffic, the jobs.csv plan
// column. Expected numbers come from the planner / time model called by hand.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "parallelism/llm_plan_model.hpp"
#include "parallelism/planner.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/csv.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

// jobs.csv as rows of fields (no quoted commas in these runs).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> row;
    std::string field;
    std::istringstream l(line);
    while (std::getline(l, field, ',')) row.push_back(field);
    if (!line.empty() && line.back() == ',') row.push_back("");
    rows.push_back(row);
  }
  return rows;
}

std::string column(const std::vector<std::vector<std::string>>& rows, std::size_t row, const std::string& name) {
  for (std::size_t c = 0; c < rows[0].size(); ++c)
    if (rows[0][c] == name) return rows[row][c];
  FAIL("no column " << name);
  return "";
}

RunResult run(const TempDir& dir, const std::string& yaml, const std::string& out) {
  const PolicyRegistry reg = builtin_policies();
  RunOptions options{dir.path(out)};
  options.check_invariants = true;
  return run_scenario(load_scenario(dir.write(out + ".yaml", yaml), {}, std::nullopt, reg), reg, options);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a LLaMA-2-70B job on 64 H100 runs at the planner's iteration time (auto plan)", "[experiments][llm]") {
  // Durations are work on the reference placement: 64 A100-80GB under the planner's
  // plan there. On H100 the job runs t_ref / t_iter faster.
  TempDir dir;
  const std::string yaml = R"(
seed: 1
cluster:
  nodes: [{count: 8, type: H100-SXM, devices_per_node: 8}]
workload:
  synthetic:
    num_jobs: 1
    arrival: {process: fixed, interarrival_s: 10}
    duration_s: {dist: constant, value: 100000}
    gpus: {64: 1}
    models: {LLaMA-2-70B: 1}
physics: {reference_device: A100-80GB}
policy: fifo
)";
  run(dir, yaml, "a");
  const auto rows = csv_rows(read_file(dir.path("a/jobs.csv")));
  REQUIRE(rows.size() == 2);
  REQUIRE(rows[0].back() == "plan");

  const ModelSpec model = find_model("LLaMA-2-70B");
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const TopologyConfig topo;
  const PlanChoice h100 = plan_training(model, acc.get("H100-SXM"), ClusterNetwork::from_topology(topo, acc.get("H100-SXM"), 8), 64, 1024);
  const PlanChoice a100 = plan_training(model, acc.get("A100-80GB"), ClusterNetwork::from_topology(topo, acc.get("A100-80GB"), 8), 64, 1024);
  CHECK(h100.plan.describe() == "tp=2 pp=1 dp=32 ep=1 cp=1 sp=on zero3 recompute=none mb=1 gb=1024");  // docs/parallelism.md's table
  CHECK(h100.time.iteration_s == Approx(49.809).margin(5e-4));
  CHECK(a100.time.iteration_s == Approx(151.336).margin(5e-4));  // the default topology's NICs (docs' table: 400 Gb/s)
  CHECK(column(rows, 1, "plan") == h100.plan.describe());
  const double run_s = std::stod(column(rows, 1, "end_s")) - std::stod(column(rows, 1, "start_s"));
  // rate = t_ref / t_iter; the kernel rounds the completion to the microsecond.
  CHECK(run_s == Approx(100000.0 * h100.time.iteration_s / a100.time.iteration_s).margin(2e-6));
  CHECK(run_s == Approx(32912.66).margin(0.01));
}

TEST_CASE("an LLM job waits while no plan fits the free devices and starts when enough are free", "[experiments][llm]") {
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const ModelSpec model = find_model("LLaMA-2-70B");
  const ClusterNetwork net = ClusterNetwork::from_topology(TopologyConfig{}, acc.get("H100-SXM"), 8);
  CHECK_THROWS_WITH(plan_training(model, acc.get("H100-SXM"), net, 4, 1024),
                    Catch::StartsWith("planner: LLaMA-2-70B on 4 x H100-SXM, global batch 1024: no plan fits 80.0 GB per device"));
  for (int n = 5; n < 16; ++n) CHECK_THROWS_AS(plan_training(model, acc.get("H100-SXM"), net, n, 1024), InputError);
  const PlanChoice on16 = plan_training(model, acc.get("H100-SXM"), net, 16, 1024);
  // 36 H100; three elastic LLaMA-2-70B jobs that may run on 4..16 devices. The first two
  // take 16 each, leaving 4 free, on which no plan fits: the third waits (elastic-goodput
  // would start it on min_gpus = 4) and starts on 16 when the first ends.
  TempDir dir;
  const std::string yaml = R"(
seed: 1
cluster:
  nodes:
    - {count: 4, type: H100-SXM, devices_per_node: 8}
    - {count: 1, type: H100-SXM, devices_per_node: 4}
workload:
  synthetic:
    num_jobs: 3
    arrival: {process: fixed, interarrival_s: 5}
    duration_s: {dist: constant, value: 500}
    gpus: {16: 1}
    elastic: {fraction: 1, min_scale: 0.25, max_scale: 1}
    models: {LLaMA-2-70B: 1}
physics: {}
information: oracle
policy: elastic-goodput
)";
  run(dir, yaml, "w");
  const auto rows = csv_rows(read_file(dir.path("w/jobs.csv")));
  REQUIRE(rows.size() == 4);
  for (std::size_t r = 1; r <= 3; ++r) CHECK(column(rows, r, "plan") == on16.plan.describe());
  CHECK(column(rows, 1, "start_s") == column(rows, 1, "submit_s"));
  CHECK(column(rows, 2, "start_s") == column(rows, 2, "submit_s"));
  CHECK(column(rows, 3, "start_s") == column(rows, 1, "end_s"));  // not at its submission, when 4 were free
  CHECK(std::stod(column(rows, 3, "queue_delay_s")) > 400);
  // On its own device count of the reference type: rate 1.
  CHECK(std::stod(column(rows, 1, "end_s")) - std::stod(column(rows, 1, "start_s")) == Approx(500).margin(1e-6));
}

TEST_CASE("a declared plan that does not fit is refused at placement time with the OOM numbers", "[experiments][llm]") {
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const ModelSpec model = find_model("LLaMA-2-70B");
  ParallelismPlan plan;
  plan.tensor = 8;
  plan.data = 2;
  plan.global_batch = 1024;
  std::string oom;
  try {
    check_fits(model, plan, acc.get("H100-SXM"));
  } catch (const InputError& e) {
    oom = e.what();
  }
  CHECK(oom ==
        "plan tp=8 pp=1 dp=2 ep=1 cp=1 sp=on zero0 recompute=none mb=1 gb=1024 for LLaMA-2-70B on 16 x H100-SXM: out of memory: needs 151.6 GB per "
        "device (parameters 17.2 GB, gradients 17.2 GB, optimizer states 103.5 GB, activations 11.3 GB, buffers 2.3 GB) but H100-SXM has 80.0 GB; "
        "shard more (zero1..zero3), recompute activations, or raise tensor/pipeline");
  TempDir dir;
  const std::string yaml = R"(
seed: 1
cluster:
  nodes: [{count: 2, type: H100-SXM, devices_per_node: 8}]
workload:
  synthetic:
    num_jobs: 1
    arrival: {process: fixed, interarrival_s: 10}
    duration_s: {dist: constant, value: 100}
    gpus: {16: 1}
    models: {LLaMA-2-70B: {share: 1, plan: {tensor: 8}}}
physics: {}
policy: fifo
)";
  const std::string err = error_of([&] { run(dir, yaml, "o"); });
  CHECK_THAT(err, Catch::StartsWith("policy 'fifo' at t=10 s: action #0 (start job '"));
  CHECK_THAT(err, Catch::EndsWith("'): " + oom));
}

TEST_CASE("two LLM jobs whose DP traffic crosses one NIC get its max-min share", "[experiments][llm]") {
  // 3 nodes of 8 H100 behind 10 Gb/s NICs. Two LLaMA-2-7B jobs on 12 devices each with a
  // declared plan (TP 4, DP 3): the first takes node 0 and half of node 1, the second the
  // other half and node 2; both DP rings leave their nodes through node 1's NIC.
  TempDir dir;
  const std::string base = R"(
seed: 1
cluster:
  nodes: [{count: 3, type: H100-SXM, devices_per_node: 8}]
  topology: {nic_bandwidth_gbps: 10, nics_per_node: 1}
workload:
  synthetic:
    num_jobs: NJOBS
    arrival: {process: fixed, interarrival_s: 1}
    duration_s: {dist: constant, value: 20000}
    gpus: {12: 1}
    models: {LLaMA-2-7B: {share: 1, plan: {tensor: 4, global_batch: 768}}}
physics: {}
policy: fifo
)";
  auto with = [&](int n) {
    std::string y = base;
    y.replace(y.find("NJOBS"), 5, std::to_string(n));
    return y;
  };
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const ModelSpec model = find_model("LLaMA-2-7B");
  TopologyConfig topo;
  topo.nic_bandwidth_gbps = 10;
  topo.nics_per_node = 1;
  ParallelismPlan plan;
  plan.tensor = 4;
  plan.data = 3;
  plan.global_batch = 768;
  const IterationBreakdown alone = iteration_time(model, plan, acc.get("H100-SXM"), ClusterNetwork::from_topology(topo, acc.get("H100-SXM"), 8));
  const double nic_Bps = 10e9 / 8;              // one 10 Gb/s NIC per node
  const double wire = alone.dp_network_bytes * 8;  // a node's worth of devices through each link
  const double demand = wire / alone.iteration_s;
  REQUIRE(demand < nic_Bps);      // alone, a NIC carries it
  REQUIRE(2 * demand > nic_Bps);  // together, node 1's NIC does not: each gets half
  const double shared_rate = alone.iteration_s / (wire / (nic_Bps / 2));
  CHECK(shared_rate == Approx(0.8487).epsilon(1e-4));

  run(dir, with(1), "one");
  const auto one = csv_rows(read_file(dir.path("one/jobs.csv")));
  CHECK(column(one, 1, "plan") == "tp=4 pp=1 dp=3 ep=1 cp=1 sp=on zero0 recompute=none mb=1 gb=768");
  CHECK(std::stod(column(one, 1, "end_s")) - std::stod(column(one, 1, "start_s")) == Approx(20000).margin(1e-6));

  run(dir, with(2), "two");
  const auto two = csv_rows(read_file(dir.path("two/jobs.csv")));
  REQUIRE(two.size() == 3);
  // Job 1 alone for 1 s, both at the shared rate until job 1 ends, then job 2 alone.
  const double s1 = std::stod(column(two, 1, "start_s")), s2 = std::stod(column(two, 2, "start_s"));
  REQUIRE(s2 - s1 == Approx(1.0));
  const double e1 = s1 + 1.0 + (20000 - 1.0) / shared_rate;
  const double e2 = e1 + (20000 - shared_rate * (e1 - s2));
  CHECK(std::stod(column(two, 1, "end_s")) == Approx(e1).margin(2e-6));
  CHECK(std::stod(column(two, 2, "end_s")) == Approx(e2).margin(4e-6));
  CHECK(column(two, 2, "plan") == "tp=4 pp=1 dp=3 ep=1 cp=1 sp=on zero0 recompute=none mb=1 gb=768");
}

TEST_CASE("runs without LLM plans keep their jobs.csv columns; plan keys are strict", "[experiments][llm]") {
  TempDir dir;
  const std::string yaml = R"(
seed: 1
cluster:
  nodes: [{count: 1, type: H100-SXM, devices_per_node: 8}]
workload:
  synthetic:
    num_jobs: 2
    gpus: {2: 1}
    models: {ResNet-50: 1}
physics: {}
)";
  run(dir, yaml, "p");
  const auto rows = csv_rows(read_file(dir.path("p/jobs.csv")));
  CHECK(rows[0].back() == "co2_kg");
  const PolicyRegistry reg = builtin_policies();
  auto load = [&](const std::string& models) {
    std::string y = yaml;
    y.replace(y.find("{ResNet-50: 1}"), 14, models);
    return error_of([&] { load_scenario(dir.write("bad.yaml", y), {}, std::nullopt, reg); });
  };
  CHECK_THAT(load("{LLaMA-3-8B: {share: 1, plan: {tensors: 2}}}"), Catch::Contains("workload.synthetic.models.LLaMA-3-8B.plan: unknown key 'tensors'"));
  CHECK_THAT(load("{LLaMA-3-8B: {share: 1, plan: {sharding: zero4}}}"), Catch::Contains("workload.synthetic.models.LLaMA-3-8B.plan.sharding:"));
  CHECK_THAT(load("{LLaMA-3-8B: {share: 1, plan: {tensor: 0}}}"), Catch::Contains("workload.synthetic.models.LLaMA-3-8B.plan.tensor:"));
  CHECK_THAT(load("{LLaMA-3-8B: {share: 1, plan: fast}}"), Catch::Contains("workload.synthetic.models.LLaMA-3-8B.plan:"));
  CHECK(load("{ResNet-50: {share: 1, plan: auto}}") ==
        dir.path("bad.yaml") + ":9: workload.synthetic.models.ResNet-50.plan: 'ResNet-50' is no model of the parallelism catalogue (LLaMA-2-7B, LLaMA-2-13B, "
        "LLaMA-2-70B, LLaMA-3-8B, LLaMA-3-70B, LLaMA-3-405B, GPT-3-175B, Mixtral-8x7B), so it cannot run under a plan; use one of those names or drop `plan:`");
  CHECK(load("{LLaMA-3-8B: {share: 1, plan: auto}}").empty());
  CHECK(load("{LLaMA-3-8B: 1}").empty());  // a catalogue LLM without a profile: auto plan
}

TEST_CASE("trace model rules give LLM models a plan; the resolved config keeps it", "[experiments][llm]") {
  TempDir dir;
  dir.write("t.csv",
            "job_id,submit_time_s,num_gpus,duration_s,estimate_s,user,group,model,gpu_type,gpu_milli,iterations,deadline_s,priority,status\n"
            "a,0,32,1000,,,,llama70,,,,,,\n"
            "b,10,2,500,,,,,,,,,,\n");
  const std::string yaml = R"(
seed: 1
cluster:
  nodes: [{count: 8, type: H100-SXM, devices_per_node: 8}]
workload:
  trace:
    path: t.csv
    models:
      - {trace_model: llama70, model: LLaMA-3-70B, plan: {tensor: 8, sharding: zero3}}
      - {model: ResNet-50}
physics: {}
policy: fifo
)";
  const RunResult r = run(dir, yaml, "tr");
  CHECK(r.summary.jobs_completed == 2);
  const auto rows = csv_rows(read_file(dir.path("tr/jobs.csv")));
  REQUIRE(rows.size() == 3);
  const std::size_t a = column(rows, 1, "job_id") == "a" ? 1 : 2, b = 3 - a;  // rows in end order
  CHECK(column(rows, a, "job_id") == "a");
  CHECK(column(rows, a, "plan") == "tp=8 pp=1 dp=4 ep=1 cp=1 sp=on zero3 recompute=none mb=1 gb=512");
  CHECK(column(rows, b, "plan").empty());  // ResNet-50: data-parallel profile
  const auto config = nlohmann::json::parse(read_file(dir.path("tr/results.json")))["config"];
  CHECK(config["workload"]["trace"]["models"][0]["plan"] == nlohmann::json::parse(R"({"tensor": 8, "sharding": "zero3"})"));
  // The resolved config runs the same jobs again.
  run(dir, config.dump(), "again");
  CHECK(read_file(dir.path("again/jobs.csv")) == read_file(dir.path("tr/jobs.csv")));
  // One model, two plans: an error naming both rules.
  std::string two = yaml;
  two.replace(two.find("      - {model: ResNet-50}"), 26, "      - {model: LLaMA-3-70B, plan: auto}");
  const PolicyRegistry reg = builtin_policies();
  CHECK_THAT(error_of([&] { load_scenario(dir.write("two.yaml", two), {}, std::nullopt, reg); }),
             Catch::Contains("two.yaml:10: workload.trace.models[1]: gives 'LLaMA-3-70B' another plan than ") &&
                 Catch::Contains("; a model has one plan in a run"));
}
