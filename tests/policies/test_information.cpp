// The information model (policies/information.hpp): what policies may know about job
// durations, declared by the scenario's `information:` setting.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "app/compare.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/information.hpp"
#include "policies/registry.hpp"
#include "scenario/sections/env_section.hpp"
#include "base/error.hpp"
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
      seen[view.job(s).id()] = {attained_work_s(view, view.job(s)), info_.estimated_remaining_s(view, view.job(s))};
    }
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      seen[view.job(s).id()] = {attained_work_s(view, view.job(s)), info_.estimated_remaining_s(view, view.job(s))};
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

namespace {

// What a policy can name on a job's view (sim/job_view.hpp), checked at compile time: an
// accessor (or field) of that name the policy may use, or none.
#define SCHEDSIM_VIEW_HAS(name)                                                                                                   \
  template <class T, class = void>                                                                                                \
  struct offers_##name : std::false_type {};                                                                                      \
  template <class T>                                                                                                              \
  struct offers_##name<T, std::void_t<decltype(std::declval<const T&>().name)>> : std::true_type {};                              \
  template <class T, class = void>                                                                                                \
  struct offers_##name##_call : std::false_type {};                                                                               \
  template <class T>                                                                                                              \
  struct offers_##name##_call<T, std::void_t<decltype(std::declval<const T&>().name())>> : std::true_type {};                     \
  template <class T, class = void>                                                                                                \
  struct offers_##name##_at : std::false_type {};                                                                                 \
  template <class T>                                                                                                              \
  struct offers_##name##_at<T, std::void_t<decltype(std::declval<const T&>().name(Tick()))>> : std::true_type {};                 \
  template <class T>                                                                                                              \
  constexpr bool offers_any_##name = offers_##name<T>::value || offers_##name##_call<T>::value || offers_##name##_at<T>::value;

SCHEDSIM_VIEW_HAS(duration_s)
SCHEDSIM_VIEW_HAS(remaining_work_s)
SCHEDSIM_VIEW_HAS(work_done_s)
SCHEDSIM_VIEW_HAS(spec)
SCHEDSIM_VIEW_HAS(request)
SCHEDSIM_VIEW_HAS(iterations)
SCHEDSIM_VIEW_HAS(last_update)
SCHEDSIM_VIEW_HAS(completion_event)
SCHEDSIM_VIEW_HAS(num_gpus)
SCHEDSIM_VIEW_HAS(attained_work_s)
#undef SCHEDSIM_VIEW_HAS

// The detectors see what they should: the kernel's record has the truth, the view does not.
static_assert(offers_any_duration_s<JobSpec> && offers_any_remaining_work_s<JobState> && offers_any_spec<JobState>);
static_assert(offers_any_num_gpus<JobView> && offers_any_attained_work_s<JobView>);
static_assert(!offers_any_duration_s<JobView>, "a policy must not see a job's true duration");
static_assert(!offers_any_remaining_work_s<JobView>, "a policy must not see the kernel's remaining work");
static_assert(!offers_any_work_done_s<JobView> && !offers_any_iterations<JobView>, "nor the work done or the steps the job needs");
static_assert(!offers_any_spec<JobView> && !offers_any_request<JobView>, "nor the JobSpec that holds the duration");
static_assert(!offers_any_last_update<JobView> && !offers_any_completion_event<JobView>, "nor the kernel's bookkeeping");
static_assert(std::is_same_v<decltype(std::declval<const SchedulerView&>().job(0)), JobView>, "SchedulerView::job gives the view");
static_assert(!std::is_convertible_v<JobView, const JobState&> && !std::is_convertible_v<JobView, const JobSpec&>);
static_assert(!std::is_constructible_v<JobView, const JobState*>, "only the kernel's view makes job views");
// Zero-cost: one pointer, copied as such.
static_assert(sizeof(JobView) == sizeof(void*) && std::is_trivially_copyable_v<JobView>);

// Records at every decision what the policy learns of each job through its view and the
// information model: (size, remaining, attained, the scenario's estimate), by job id.
class SizeProbe : public Policy {
 public:
  explicit SizeProbe(InformationModel info) : info_(std::move(info)) {}
  std::string name() const override { return "size probe"; }
  void on_job_queued(const SchedulerView& /*view*/, JobSlot job) override { queue_.push_back(job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) record(view, s);
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) record(view, s);
    std::vector<DeviceId> free;  // fifo on the free devices (the batch's starts are applied after)
    for (DeviceId d = view.cluster_state().next_free(0); d >= 0; d = view.cluster_state().next_free(d + 1)) free.push_back(d);
    std::size_t used = 0;
    while (!queue_.empty() && free.size() - used >= static_cast<std::size_t>(view.job(queue_.front()).num_gpus())) {
      const auto n = static_cast<std::size_t>(view.job(queue_.front()).num_gpus());
      out.start(queue_.front(), std::vector<DeviceId>(free.begin() + static_cast<std::ptrdiff_t>(used), free.begin() + static_cast<std::ptrdiff_t>(used + n)));
      used += n;
      queue_.erase(queue_.begin());
    }
  }
  struct Seen {
    double total_s, remaining_s, attained_s, estimate_s;
  };
  std::map<double, std::map<std::string, Seen>> at;

 private:
  void record(const SchedulerView& view, JobSlot s) {
    const JobView job = view.job(s);
    at[view.now().seconds()][job.id()] = Seen{info_.estimated_total_s(job), info_.estimated_remaining_s(view, job), job.attained_work_s(view.now()), job.estimate_s()};
  }
  InformationModel info_;
  std::vector<JobSlot> queue_;
};

std::map<double, std::map<std::string, SizeProbe::Seen>> sizes_seen(const InformationModel& info, std::vector<JobSpec> jobs) {
  SizeProbe probe(info);
  VectorSource source(std::move(jobs));
  const ClusterSpec cluster({NodeGroup{1, "test", 2}});
  Simulator sim(cluster, source, probe);
  sim.run();
  return probe.at;
}

}  // namespace

TEST_CASE("information: a policy sees the information model's estimates through the job view, never the true duration", "[policies][information][job_view]") {
  // Two devices. A: 100 s of work, estimated at 40 s by its trace; B: 60 s, no estimate;
  // both start at t=0. P's arrival at t=10 is a decision point: A and B have attained 10 s.
  const auto jobs = [] { return std::vector<JobSpec>{make_job("A", 0, 1, 100, 40), make_job("B", 0, 1, 60), make_job("P", 10, 1, 1)}; };
  SECTION("oracle: the size is the estimate when there is one, else the duration; the remaining time scales it by the true fraction left") {
    const auto at = sizes_seen(InformationModel::oracle(), jobs());
    REQUIRE(at.count(10.0));
    const auto& a = at.at(10.0).at("A");
    const auto& b = at.at(10.0).at("B");
    CHECK(a.total_s == 40.0);
    CHECK(a.remaining_s == 36.0);  // 40 x 90 / 100
    CHECK(a.attained_s == 10.0);
    CHECK(a.estimate_s == 40.0);
    CHECK(b.total_s == 60.0);
    CHECK(b.remaining_s == 50.0);  // 60 x 50 / 60
    CHECK(b.attained_s == 10.0);
    CHECK(std::isnan(b.estimate_s));
  }
  SECTION("estimates (noisy): the draw (here sigma 0, bias 2: twice the duration) minus the attained work") {
    const auto at = sizes_seen(InformationModel::estimates(EstimateSource::kNoisy, 0.0, 2.0, 0.1, 7), jobs());
    REQUIRE(at.count(10.0));
    CHECK(at.at(10.0).at("A").total_s == 200.0);
    CHECK(at.at(10.0).at("A").remaining_s == 190.0);
    CHECK(at.at(10.0).at("B").total_s == 120.0);
    CHECK(at.at(10.0).at("B").remaining_s == 110.0);
    CHECK(at.at(10.0).at("B").attained_s == 10.0);
  }
  SECTION("estimates (trace): the trace's estimate minus the attained work, the floor once outlived") {
    const auto at = sizes_seen(InformationModel::estimates(EstimateSource::kTrace), {make_job("A", 0, 1, 100, 40), make_job("P", 10, 1, 1, 1), make_job("Q", 50, 1, 1, 1)});
    REQUIRE(at.count(10.0));
    CHECK(at.at(10.0).at("A").total_s == 40.0);
    CHECK(at.at(10.0).at("A").remaining_s == 30.0);
    REQUIRE(at.count(50.0));
    CHECK(at.at(50.0).at("A").remaining_s == 4.0);  // 0.1 x 40: outlived its estimate
    CHECK(at.at(50.0).at("A").attained_s == 50.0);
  }
}
