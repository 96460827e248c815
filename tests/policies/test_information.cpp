// The information model (policies/information.hpp): what policies may know about job
// durations, declared by the scenario's `information:` setting.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "experiments/compare.hpp"
#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "policies/information.hpp"
#include "policies/registry.hpp"
#include "rl/env/env_config.hpp"
#include "sim/error.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Wraps a policy and, at every decision, records what the information model says of each
// job in the system: (attained work, estimated remaining), by job id.
class Probe : public Policy {
 public:
  Probe(std::unique_ptr<Policy> inner, InformationModel info) : inner_(std::move(inner)), info_(std::move(info)) {}
  std::string name() const override { return inner_->name(); }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { inner_->on_job_queued(view, job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { inner_->on_job_finished(view, job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    std::map<std::string, std::pair<double, double>> seen;
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      seen[view.job(s).spec.id] = {attained_work_s(view, view.job(s)), info_.estimated_remaining_s(view, view.job(s))};
    }
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      seen[view.job(s).spec.id] = {attained_work_s(view, view.job(s)), info_.estimated_remaining_s(view, view.job(s))};
    }
    decisions.emplace_back(view.now().seconds(), seen);
    inner_->decide(view, out);
  }
  std::vector<std::pair<double, std::map<std::string, std::pair<double, double>>>> decisions;

 private:
  std::unique_ptr<Policy> inner_;
  InformationModel info_;
};

class StartOrder : public Observer {
 public:
  void on_job_start(const JobState& job) override { starts.push_back(job.spec.id); }
  void on_job_end(const JobState& job) override { ends[job.spec.id] = job.end.seconds(); }
  std::vector<std::string> starts;
  std::map<std::string, double> ends;
};

PolicyContext with(const InformationModel& info) {
  PolicyContext c;
  c.information = info;
  return c;
}

StartOrder run_with(const std::string& policy, const InformationModel& info, std::vector<JobSpec> jobs, int devices) {
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance p = registry.create(ConfigNode::load_string(policy, "policy.yaml"), with(info));
  VectorSource source(std::move(jobs));
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});  // the simulator keeps a reference
  Simulator sim(cluster, source, *p.policy);
  StartOrder order;
  sim.add_observer(order);
  sim.run();
  return order;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("information: estimates: jobs with equal estimates and different true durations are ranked the same by sjf and srtf", "[policies][information]") {
  // One device. B holds it first; Y then X arrive with the same estimate (50 s). Swapping
  // their true durations (90/10 and 10/90) must not change any decision: the policy only
  // sees the estimates, its attained service and the arrival order.
  const InformationModel info = InformationModel::estimates(EstimateSource::kTrace);
  const auto jobs = [](double y_s, double x_s) {
    return std::vector<JobSpec>{make_job("B", 0, 1, 100, 100), make_job("Y", 1, 1, y_s, 50), make_job("X", 2, 1, x_s, 50)};
  };
  for (const std::string policy : {"srtf", "sjf", "{name: sjf, by: estimate}", "{name: compose, order: srtf, backfill: easy}"}) {
    INFO(policy);
    const StartOrder long_first = run_with(policy, info, jobs(90, 10), 1);
    const StartOrder short_first = run_with(policy, info, jobs(10, 90), 1);
    CHECK(long_first.starts == short_first.starts);
  }
  // srtf by the estimates: Y (50) preempts B (100 - 1 = 99 left), X (50) waits behind Y
  // (49 left), then X before B (99).
  CHECK(run_with("srtf", info, jobs(90, 10), 1).starts == std::vector<std::string>{"B", "Y", "X", "B"});
  CHECK(run_with("srtf", info, jobs(90, 10), 1).ends == std::map<std::string, double>{{"Y", 91}, {"X", 101}, {"B", 200}});
  // The oracle sees the truth: srtf then runs the really short job first.
  CHECK(run_with("srtf", InformationModel::oracle(), jobs(90, 10), 1).starts != run_with("srtf", InformationModel::oracle(), jobs(10, 90), 1).starts);
}

TEST_CASE("information: estimates: remaining time is max(estimate - attained, floor x estimate), equal at equal attained service", "[policies][information]") {
  // Two devices: X (10 s) and Y (90 s), both estimated at 50 s, run side by side from t=0;
  // arrivals at t=5 and t=60 are decision points. The floor is 0.1 x 50 = 5 s.
  const InformationModel info = InformationModel::estimates(EstimateSource::kTrace);
  const PolicyRegistry registry = builtin_policies();
  Probe probe(registry.create("fifo", with(info)).policy, info);
  VectorSource source({make_job("X", 0, 1, 10, 50), make_job("Y", 0, 1, 90, 50), make_job("P", 5, 2, 1, 1), make_job("Q", 60, 2, 1, 1)});
  const ClusterSpec cluster({NodeGroup{1, "test", 2}});
  Simulator sim(cluster, source, probe);
  sim.run();
  std::map<double, std::map<std::string, std::pair<double, double>>> at;
  for (const auto& [t, seen] : probe.decisions) at[t] = seen;
  REQUIRE(at.count(5.0));
  CHECK(at[5.0].at("X") == std::make_pair(5.0, 45.0));
  CHECK(at[5.0].at("Y") == std::make_pair(5.0, 45.0));  // the same as X's, whatever the truth
  REQUIRE(at.count(60.0));
  CHECK(at[60.0].at("Y") == std::make_pair(60.0, 5.0));  // outlived its estimate: the floor, not 0
  // Under oracle the remaining time is the estimate scaled by the true fraction left (the
  // old behaviour): X's reaches 0 when X really ends.
  CHECK(InformationModel::oracle().describe() == "oracle");
  CHECK(info.describe() == "estimates (trace)");
}

TEST_CASE("information: none: policies that need durations refuse with the policy, what needs it and the level", "[policies][information]") {
  const PolicyRegistry registry = builtin_policies();
  const PolicyContext none = with(InformationModel::none());
  const std::string tail = " needs job duration information, but the scenario declares information: none; declare information: estimates (the jobs' runtime estimates) "
                           "or information: oracle, or use a policy that needs none (fifo, las, tiresias, gittins)";
  CHECK_THROWS_WITH(registry.create("sjf", none), "policy 'sjf': by: auto (ranks jobs by their size)" + tail);
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: sjf, by: estimate}", "p.yaml"), none), "policy 'sjf': by: estimate (ranks jobs by their size)" + tail);
  CHECK_THROWS_WITH(registry.create("srtf", none), "policy 'srtf': its order (shortest remaining time)" + tail);
  CHECK_THROWS_WITH(registry.create("slurm-easy", none), "policy 'slurm-easy': backfill: easy (reservations from running jobs' estimated ends)" + tail);
  CHECK_THROWS_WITH(registry.create("themis", none), "policy 'themis': its finish-time fairness (a job's run time alone)" + tail);
  CHECK_THROWS_WITH(registry.create("carbon-aware", none), "policy 'carbon-aware': its shift (each job's start window over its estimated run)" + tail);
  CHECK_THROWS_WITH(registry.create("spatial", none), "policy 'spatial': route: signal (each datacenter's forecast over the job's run)" + tail);
  CHECK_THROWS_WITH(registry.create("spatio-temporal", none), "policy 'spatio-temporal': its plan (each job's start and datacenter over its estimated run)" + tail);
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: compose, order: {name: sjf, by: auto}}", "p.yaml"), none),
                    "policy 'compose': by: auto (ranks jobs by their size)" + tail);
  // by: duration reads the truth: only the oracle may.
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: sjf, by: duration}", "p.yaml"), with(InformationModel::estimates(EstimateSource::kTrace))),
                    "policy 'sjf': by: duration reads the true job durations, which only information: oracle provides (the scenario declares information: "
                    "estimates (trace)); declare information: oracle, or rank by what the scheduler may know");
  // Policies that need nothing run.
  for (const char* name : {"fifo", "las", "tiresias", "gittins", "tiresias-dlas", "fair-share", "priority", "edf", "volcano-binpack"}) {
    INFO(name);
    CHECK_NOTHROW(registry.create(name, none));
  }
  // From a scenario the refusal comes when the run builds the policy, before it writes
  // anything (compare --policies never builds the scenario's own policy).
  const std::string golden = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  schedsim::test::TempDir dir;
  const ScenarioConfig srtf = load_scenario(golden, {"information=none", "policy=srtf"}, std::nullopt, registry);
  CHECK_THROWS_WITH(run_scenario(srtf, registry, RunOptions{dir.path("srtf")}), "policy 'srtf': its order (shortest remaining time)" + tail);
  CHECK_FALSE(std::filesystem::exists(dir.path("srtf")));
  CHECK(run_scenario(load_scenario(golden, {"information=none", "policy=las"}, std::nullopt, registry), registry, RunOptions{}).summary.jobs_completed == 80);
  // The RL observation's shortest_estimate order needs sizes too.
  rl::EnvConfig env;
  env.order = rl::CandidateOrder::kShortestEstimate;
  env.information = InformationModel::none();
  CHECK_THROWS_WITH(env.check_information("policy 'rl'"), "policy 'rl': env.order: shortest_estimate" + tail);
}

TEST_CASE("information: estimates with source: trace reports a job without an estimate when a policy needs its size", "[policies][information]") {
  CHECK_THROWS_WITH(run_with("sjf", InformationModel::estimates(EstimateSource::kTrace), {make_job("a", 0, 1, 10), make_job("b", 1, 1, 10)}, 1),
                    "job 'a': has no runtime estimate, which information: estimates (source: trace) needs for a policy that uses job sizes (add an estimate_s "
                    "column, or declare information: {estimates: {source: noisy}} or information: oracle)");
  // fifo never asks.
  CHECK_NOTHROW(run_with("fifo", InformationModel::estimates(EstimateSource::kTrace), {make_job("a", 0, 1, 10)}, 1));
}

TEST_CASE("information: noisy estimates are seeded: the same seed gives the same estimates, another seed others", "[policies][information]") {
  const JobSpec a = make_job("a", 3, 1, 1000), b = make_job("b", 3, 1, 1000);
  const InformationModel s1 = InformationModel::estimates(EstimateSource::kNoisy, 0.5, 1.0, 0.1, 1);
  const InformationModel s1_again = InformationModel::estimates(EstimateSource::kNoisy, 0.5, 1.0, 0.1, 1);
  const InformationModel s2 = s1.with_seed(2);
  CHECK(s1.estimated_total_s(a) == s1_again.estimated_total_s(a));
  CHECK(s1.estimated_total_s(a) == s1.estimated_total_s(a));  // stateless: every call the same
  CHECK(s1.estimated_total_s(a) != s2.estimated_total_s(a));
  CHECK(s1.estimated_total_s(a) != s1.estimated_total_s(b));  // per job
  CHECK(s1.estimated_total_s(a) != 1000.0);
  // sigma 0: the truth times the bias.
  CHECK(InformationModel::estimates(EstimateSource::kNoisy, 0.0, 2.0, 0.1, 1).estimated_total_s(a) == 2000.0);
  CHECK(s1.describe() == "estimates (noisy, sigma 0.5, bias 1)");

  // End to end: the golden scenario under noisy estimates, twice: the same bytes, and not
  // the oracle's.
  const PolicyRegistry registry = builtin_policies();
  const std::string golden = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  schedsim::test::TempDir dir;
  const std::vector<std::string> noisy = {"policy=sjf", "information={estimates: {source: noisy, sigma: 1}}"};
  run_scenario(load_scenario(golden, noisy, std::nullopt, registry), registry, RunOptions{dir.path("a")});
  run_scenario(load_scenario(golden, noisy, std::nullopt, registry), registry, RunOptions{dir.path("b")});
  run_scenario(load_scenario(golden, {"policy=sjf", "information=oracle"}, std::nullopt, registry), registry, RunOptions{dir.path("oracle")});
  CHECK(read(dir.path("a/jobs.csv")) == read(dir.path("b/jobs.csv")));
  CHECK(read(dir.path("a/jobs.csv")) != read(dir.path("oracle/jobs.csv")));
}

TEST_CASE("information: the setting is parsed strictly, resolved into the config and recorded in results.json and the comparison table", "[policies][information]") {
  const PolicyRegistry registry = builtin_policies();
  const std::string golden = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  CHECK_THROWS_WITH(load_scenario(golden, {"information=psychic"}, std::nullopt, registry),
                    "--set information=psychic: 'psychic' is not allowed; choose one of: oracle, estimates, none");
  CHECK_THROWS_WITH(load_scenario(golden, {"information={estimates: {source: trace, sigma: 1}}"}, std::nullopt, registry),
                    Catch::Contains("sigma only applies to source: noisy (source: trace uses the workload's estimates as they are)"));
  CHECK_THROWS_WITH(load_scenario(golden, {"information={estimates: {source: noisy, floor: 2}}"}, std::nullopt, registry),
                    Catch::Contains("must be a fraction of the estimate in (0, 1], got 2"));
  CHECK_THROWS_WITH(load_scenario(golden, {"information={guess: 1}"}, std::nullopt, registry), Catch::Contains("unknown key 'guess'"));

  const ScenarioConfig noisy = load_scenario(golden, {"policy=fifo", "information={estimates: {source: noisy, sigma: 0.25, bias: 2}}"}, std::nullopt, registry);
  CHECK(noisy.information.describe() == "estimates (noisy, sigma 0.25, bias 2)");
  const YAML::Node resolved = noisy.to_yaml(YAML::Node("fifo"))["information"];
  CHECK(resolved["estimates"]["source"].as<std::string>() == "noisy");
  CHECK(resolved["estimates"]["sigma"].as<double>() == 0.25);
  CHECK(resolved["estimates"]["bias"].as<double>() == 2.0);
  CHECK(resolved["estimates"]["floor"].as<double>() == 0.1);
  CHECK(load_scenario(golden, {"information=estimates"}, std::nullopt, registry).information.describe() == "estimates (trace)");

  schedsim::test::TempDir dir;
  const ScenarioConfig oracle = load_scenario(golden, {"information=oracle"}, std::nullopt, registry);
  const std::vector<RunResult> runs = compare_policies(oracle, registry, {"fifo", "las"}, RunOptions{dir.path("cmp")});
  CHECK(read(dir.path("cmp/fifo/results.json")).find("\"information\": \"oracle\"") != std::string::npos);
  // One line of the header above the table (with the offered load and the window).
  const std::string header = comparison_header(runs, 8);
  CHECK(header.substr(header.rfind("information: ")) == "information: oracle\n");
  CHECK(comparison_table(runs, false).find("information") == std::string::npos);

  // compare without --policy leaves out what the level refuses, as it does policies that
  // need missing signals.
  const ScenarioConfig none = load_scenario(golden, {"information=none", "policy=fifo"}, std::nullopt, registry);
  std::vector<std::string> ran;
  for (const RunResult& r : compare_policies(none, registry, {}, RunOptions{})) ran.push_back(r.policy_name);
  CHECK(std::find(ran.begin(), ran.end(), "fifo") != ran.end());
  CHECK(std::find(ran.begin(), ran.end(), "gittins") != ran.end());
  for (const char* refused : {"sjf", "srtf", "slurm-easy", "themis", "carbon-aware", "spatio-temporal", "elastic-goodput"}) {
    INFO(refused);
    CHECK(std::find(ran.begin(), ran.end(), refused) == ran.end());
  }
  CHECK(information_serves(none, registry, "las"));
  CHECK_FALSE(information_serves(none, registry, "sjf"));
}
