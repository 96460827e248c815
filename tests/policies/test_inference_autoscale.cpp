// The `inference` policy: a service's pool, reactive autoscaling through a drop and a
// burst, SLO violation minutes and replica-hours by hand, an elastic training job that
// borrows the idle replica device and gives it back (paying the checkpoint cost), and
// the predictive autoscaler.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

// 4 V100s; one service with a pool of 2 one-GPU replicas serving 10 req/s each. The
// rate is 10 req/s (reactive wants ceil(10 / (10 x 0.6)) = 2 replicas), dropped to 1 req/s
// (1 replica) over [0, 3600) and burst to 25 req/s (more than 2 replicas can serve) over
// [5000, 5600). One elastic job (2 GPUs, 1..4) runs from t = 0.
std::string scenario(const std::string& policy) {
  return R"(
seed: 1
cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}
physics: {}
workload: {trace: {path: jobs.csv, format: schedsim}}
inference:
  services:
    - name: chat
      rate: {diurnal: {mean_rps: 10, amplitude_rps: 0}}
      drops: [{start_s: 0, duration_s: 3600, factor: 0.1}]
      bursts: [{start_s: 5000, duration_s: 600, factor: 2.5}]
      capacity_rps: {V100: 10}
      slo_p99_s: 2
      min_replicas: 1
      max_replicas: 2
policy: )" + policy + "\n";
}

nlohmann::json run(TempDir& dir, const std::string& policy, const std::string& out) {
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\ntrain,0,2,20000,1,4\n");
  const std::string path = dir.write("s.yaml", scenario(policy));
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  run_scenario(s, reg, RunOptions{dir.path(out)});
  return nlohmann::json::parse(read_file(dir.path(out + "/results.json")));
}

}  // namespace

TEST_CASE("inference: elastic training borrows the idle replica device and gives it back when load returns", "[policies][inference]") {
  TempDir dir;
  const auto r = run(dir, "{name: inference, autoscaler: reactive, interval_s: 300}", "reactive");
  REQUIRE(r["inference"].size() == 1);
  const auto& svc = r["inference"][0];
  const double end_s = r["summary"]["makespan_s"];
  // One replica in service on [0, 3600), two after (the pool is never short).
  CHECK(double(svc["replica_hours"]) == Approx((3600.0 + 2 * (end_s - 3600)) / 3600).epsilon(1e-9));
  // Lent at the tick after the job started (300 s), taken back at 3600 s when the rate returns.
  CHECK(double(svc["borrowed_gpu_hours"]) == Approx(3300.0 / 3600).epsilon(1e-9));
  CHECK(svc["lends"] == 1);
  CHECK(svc["reclaims"] == 1);
  // The burst (25 req/s > 2 x 10) makes M/M/2 unstable for exactly its 10 minutes; the SLO
  // holds otherwise (M/M/1 at 1 req/s, M/M/2 at 10 req/s).
  CHECK(double(svc["slo_violation_minutes"]) == Approx(10.0).epsilon(1e-9));
  // Growing 2 -> 3 and shrinking back are two moves, each a checkpoint save + restore of
  // 10 GB at 2 GB/s (5 s + 5 s) on the new device set: 10 s x 3 + 10 s x 2 device-seconds.
  const std::string jobs = read_file(dir.path("reactive/jobs.csv"));
  CHECK(r["summary"]["moves"] == 2);
  CHECK(jobs.find(",50,0,2,") != std::string::npos);  // checkpoint_gpu_s 50, preemptions 0, moves 2
  // Without lending the job keeps its 2 devices and nothing is borrowed.
  const auto no_lend = run(dir, "{name: inference, lend: false}", "no-lend");
  CHECK(double(no_lend["inference"][0]["borrowed_gpu_hours"]) == 0.0);
  CHECK(no_lend["summary"]["moves"] == 0);
  CHECK(double(no_lend["summary"]["mean_jct_s"]) > double(r["summary"]["mean_jct_s"]));  // borrowing sped training up
}

TEST_CASE("inference: the predictive autoscaler provisions from the forecast curve", "[policies][inference]") {
  TempDir dir;
  const auto r = run(dir, "{name: inference, autoscaler: predictive, lend: false}", "predictive");
  const auto& svc = r["inference"][0];
  // Predictive sizes from the base curve (10 req/s; the drop and the burst are not
  // forecast): the fewest replicas with p99 <= 2 s at 10 req/s is 2 from the start.
  CHECK(svc["peak_replicas"] == 2);
  const double end_s = r["summary"]["makespan_s"];
  CHECK(double(svc["replica_hours"]) == Approx(2 * end_s / 3600).epsilon(1e-9));
  CHECK(double(svc["slo_violation_minutes"]) == Approx(10.0).epsilon(1e-9));  // the burst is still unforeseen
}

// ---- One world for every policy: services, their load and SLO metering under any policy. ----

#include <yaml-cpp/yaml.h>

#include "app/compare.hpp"
#include "first_fit_policy.hpp"

namespace {

// 4 V100s; one service needing 2 one-GPU replicas at its 10 req/s (reactive: ceil(10 /
// (10 x 0.6)) = 2; M/M/2 meets p99 <= 2 s), bursting to 25 req/s (more than 2 x 10) over
// [5000, 5600); one rigid 2-GPU training job on [0, 20000).
std::string two_replica_scenario(const std::string& policy, const std::string& autoscaler = "") {
  return R"(
seed: 1
cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}
physics: {}
workload: {trace: {path: rigid.csv, format: schedsim}}
inference:
  services:
    - name: chat
      rate: {diurnal: {mean_rps: 10, amplitude_rps: 0}}
      bursts: [{start_s: 5000, duration_s: 600, factor: 2.5}]
      capacity_rps: {V100: 10}
      slo_p99_s: 2
      min_replicas: 1
      max_replicas: 2
)" + autoscaler + "policy: " + policy + "\n";
}

nlohmann::json run_two_replicas(TempDir& dir, const std::string& policy, const std::string& out, const std::string& autoscaler = "") {
  dir.write("rigid.csv", "job_id,submit_time_s,num_gpus,duration_s\ntrain,0,2,20000\n");
  const std::string path = dir.write(out + ".yaml", two_replica_scenario(policy, autoscaler));
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  run_scenario(s, reg, RunOptions{dir.path(out)});
  return nlohmann::json::parse(read_file(dir.path(out + "/results.json")));
}

}  // namespace

TEST_CASE("world: under fifo the services run behind the default autoscaler and the meter gives the hand-computed SLO numbers", "[world][inference]") {
  TempDir dir;
  const auto r = run_two_replicas(dir, "fifo", "fifo");
  CHECK(r["policy"] == "fifo");
  CHECK(r["summary"]["makespan_s"] == 20000.0);
  REQUIRE(r["inference"].size() == 1);
  const auto& svc = r["inference"][0];
  CHECK(svc["name"] == "chat");
  // Two replicas from the first decision (t = 0) to the job's end (20000 s).
  CHECK(double(svc["replica_hours"]) == Approx(2 * 20000.0 / 3600).epsilon(1e-12));
  CHECK(svc["peak_replicas"] == 2);
  // M/M/2 at 25 req/s with mu 10 is unstable for exactly the burst's 10 minutes.
  CHECK(double(svc["slo_violation_minutes"]) == Approx(10.0).epsilon(1e-12));
  CHECK(svc["lends"] == 0);  // the training job is not elastic
  CHECK(double(svc["borrowed_gpu_hours"]) == 0.0);
  // results.json says which autoscaler ran (the default: the `inference` policy's defaults).
  CHECK(r["config"]["inference"]["autoscaler"] ==
        nlohmann::json::parse(R"({"name": "reactive", "target_utilization": 0.6, "interval_s": 300.0, "lead_s": 300.0, "lend": true})"));
  CHECK(r["config"]["policy"]["name"] == "fifo");
  // The `inference` policy in front of fifo is that default: the same world, the same numbers.
  const auto explicit_ = run_two_replicas(dir, "{name: inference, base: fifo}", "inference");
  CHECK(explicit_["inference"] == r["inference"]);
  CHECK(explicit_["summary"] == r["summary"]);
  CHECK_FALSE(explicit_["config"]["inference"].contains("autoscaler"));  // its own options are under policy
}

TEST_CASE("world: a replica device its spot provider takes back leaves the service at once", "[world][inference][market]") {
  TempDir dir;
  // Devices 0 and 1 are the spot offer's; the service's pool takes them (the lowest free
  // devices) before fifo starts the job on 2 and 3. Device 1 is taken back over [3600,
  // 7200): one replica in service then (no free device to top up from), M/M/1 at 10 req/s
  // with mu 10 unstable; the burst lies inside that hour.
  dir.write("avail.csv", "Datetime (UTC),devices\n2023-01-01 00:00:00,2\n2023-01-01 01:00:00,1\n2023-01-01 02:00:00,2\n");
  const auto r = run_two_replicas(dir, "fifo", "spot", "market: {offers: [{type: V100, spot: {devices: 2, usd_h: 1, availability: {file: avail.csv}}}]}\n");
  CHECK(r["market"]["spot_reclamations"] == 1);
  const auto& svc = r["inference"][0];
  CHECK(double(svc["replica_hours"]) == Approx((2 * 20000.0 - 3600.0) / 3600).epsilon(1e-12));
  CHECK(double(svc["slo_violation_minutes"]) == Approx(60.0).epsilon(1e-12));
  CHECK(svc["peak_replicas"] == 2);
}

TEST_CASE("world: the scenario's inference.autoscaler sets the default autoscaler", "[world][inference]") {
  TempDir dir;
  // Target utilization 1: ceil(10 / 10) = 1 replica, and M/M/1 at lambda = mu is unstable;
  // the ticks at 5100 and 5400 s see the burst (ceil(25 / 10) = 3, capped at 2), so 2
  // replicas over [5100, 5700), unstable at 25 req/s until 5600 and meeting the SLO on
  // [5600, 5700): violated all but those 100 s.
  const auto r = run_two_replicas(dir, "las", "las", "  autoscaler: {name: reactive, target_utilization: 1}\n");
  const auto& svc = r["inference"][0];
  CHECK(double(svc["replica_hours"]) == Approx((20000.0 + 600.0) / 3600).epsilon(1e-12));
  CHECK(double(svc["slo_violation_minutes"]) == Approx((20000.0 - 100.0) / 60).epsilon(1e-12));
  CHECK(svc["peak_replicas"] == 2);
  CHECK(r["config"]["inference"]["autoscaler"]["target_utilization"] == 1.0);
  // Short form, and bad values named by key.
  const auto p = run_two_replicas(dir, "fifo", "short", "  autoscaler: predictive\n");
  CHECK(p["config"]["inference"]["autoscaler"]["name"] == "predictive");
  // Under a policy that scales the services itself its own options decide, with a warning.
  const auto own = run_two_replicas(dir, "inference", "own", "  autoscaler: predictive\n");
  CHECK(own["config"]["policy"]["autoscaler"] == "reactive");
  // (The first warning is the trace's: its job has no workload profile under physics.)
  REQUIRE(own["warnings"].size() == 2);
  CHECK(own["warnings"][1] == "inference.autoscaler: not used: policy 'inference' scales the services with its own options");
  const PolicyRegistry reg = builtin_policies();
  const std::string bad = dir.write("bad.yaml", two_replica_scenario("fifo", "  autoscaler: {name: psychic}\n"));
  CHECK_THROWS_WITH(load_scenario(bad, {}, std::nullopt, reg), Catch::Contains("inference.autoscaler.name: must be reactive or predictive, got 'psychic'"));
  const std::string bad_key = dir.write("bad_key.yaml", two_replica_scenario("fifo", "  autoscaler: {interval: 60}\n"));
  CHECK_THROWS_WITH(load_scenario(bad_key, {}, std::nullopt, reg), Catch::Contains("inference.autoscaler") && Catch::Contains("interval"));
}

TEST_CASE("world: a policy from outside the registry (the path of Python and plugin policies) runs the services too", "[world][inference]") {
  TempDir dir;
  dir.write("rigid.csv", "job_id,submit_time_s,num_gpus,duration_s\ntrain,0,2,20000\n");
  const std::string path = dir.write("s.yaml", two_replica_scenario("fifo"));
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  schedsim::test::FirstFit policy;
  const RunResult r = run_scenario(s, policy, YAML::Load("{name: first-fit}"), RunOptions{});
  CHECK(r.policy_name == "first-fit");
  REQUIRE(r.inference.size() == 1);
  CHECK(r.inference[0].replica_s == Approx(2 * 20000.0).epsilon(1e-12));
  CHECK(r.inference[0].slo_violation_s == Approx(600.0).epsilon(1e-12));
}

namespace {

// Every world model on at once: inference services, device failures and loss spikes with
// checkpoints, spot capacity that is taken back, a thermal model with power caps, energy
// with price and carbon signals, elastic jobs.
const char* const kEveryModel = R"(
seed: 7
information: oracle
cluster: {nodes: [{count: 4, type: A100-80GB, devices_per_node: 8}]}
workload:
  synthetic:
    num_jobs: 40
    arrival: {process: poisson, mean_interarrival_s: 900}
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
    elastic: {fraction: 0.3}
physics: {}
failures:
  devices: {mtbf_h: 100, unit: node, repair_h: 2, on_failure: requeue, restart_s: 60}
  loss_spikes: {rate_per_gpu_hour: 0.01, restart_s: 60}
  checkpoint: {interval_s: 1800, cost_s: 60}
energy:
  thermal:
    outside_c: {synthetic: {mean_c: 30, amplitude_c: 8, peak_hour_local: 15}}
    setpoint_c: 22
    setpoint_range_c: [18, 30]
  power_caps:
    A100-80GB: {fraction: 0.75, curve: {points: [{limit_w: 200, time_s: 12, power_w: 190}, {limit_w: 300, time_s: 9, power_w: 280}, {limit_w: 400, time_s: 8, power_w: 380}]}}
signals:
  price: {diurnal: {mean: 80, amplitude: 30, peak_hour_utc: 18}}
  carbon: {diurnal: {mean: 300, amplitude: 100, peak_hour_utc: 19}}
market:
  offers:
    - {type: A100-80GB, on_demand_usd_h: 3, spot: {devices: 8, usd_h: 1, availability: {model: on_off, mean_up_h: 2, mean_down_h: 1}}}
inference:
  services:
    - name: chat
      rate: {diurnal: {mean_rps: 20, amplitude_rps: 10, peak_hour_local: 14}}
      bursts: [{start_s: 20000, duration_s: 1800, factor: 1.8}]
      capacity_rps: {A100-80GB: 10}
      slo_p99_s: 1
      min_replicas: 1
      max_replicas: 4
policy: fifo
)";

// The same models over two datacenters with their own signals, thermal models, spot
// offers and one service each.
const char* const kEveryModelGeo = R"(
seed: 8
information: oracle
datacenters:
  sites:
    - name: A
      nodes: [{count: 2, type: A100-80GB, devices_per_node: 8}]
      utc_offset_h: 1
      signals: {carbon: {diurnal: {mean: 300, amplitude: 150}}, price: {diurnal: {mean: 80, amplitude: 30}}}
      thermal: {outside_c: {synthetic: {mean_c: 30, amplitude_c: 8, peak_hour_local: 15}}, setpoint_c: 22, setpoint_range_c: [18, 30]}
    - name: B
      nodes: [{count: 2, type: A100-80GB, devices_per_node: 8}]
      utc_offset_h: -8
      signals: {carbon: {diurnal: {mean: 200, amplitude: 100}}, price: {diurnal: {mean: 60, amplitude: 20}}}
      thermal: {outside_c: {synthetic: {mean_c: 20, amplitude_c: 6, peak_hour_local: 15}}, setpoint_c: 22, setpoint_range_c: [18, 30]}
  allowed: any
workload:
  synthetic:
    num_jobs: 40
    arrival: {process: poisson, mean_interarrival_s: 900}
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
    elastic: {fraction: 0.3}
physics: {}
failures:
  devices: {mtbf_h: 100, unit: node, repair_h: 2, on_failure: requeue, restart_s: 60}
  loss_spikes: {rate_per_gpu_hour: 0.01, restart_s: 60}
  checkpoint: {interval_s: 1800, cost_s: 60}
energy:
  power_caps:
    A100-80GB: {fraction: 0.75, curve: {points: [{limit_w: 200, time_s: 12, power_w: 190}, {limit_w: 300, time_s: 9, power_w: 280}, {limit_w: 400, time_s: 8, power_w: 380}]}}
market:
  offers:
    - {datacenter: A, type: A100-80GB, on_demand_usd_h: 3, spot: {devices: 4, usd_h: 1, availability: {model: on_off, mean_up_h: 2, mean_down_h: 1}}}
    - {datacenter: B, type: A100-80GB, on_demand_usd_h: 2.5, spot: {devices: 4, usd_h: 0.8, availability: {model: on_off, mean_up_h: 2, mean_down_h: 1}}}
inference:
  services:
    - {name: chat-a, datacenter: A, rate: {diurnal: {mean_rps: 20, amplitude_rps: 10}}, capacity_rps: {A100-80GB: 10}, slo_p99_s: 1, max_replicas: 4}
    - {name: chat-b, datacenter: B, rate: {diurnal: {mean_rps: 20, amplitude_rps: 10}}, capacity_rps: {A100-80GB: 10}, slo_p99_s: 1, max_replicas: 4}
policy: fifo
)";

// Runs `policies` as `compare` does on `yaml` and checks the world's metrics of each.
std::vector<RunResult> check_every_policy(TempDir& dir, const std::string& yaml, const std::vector<std::string>& policies,
                                          const std::vector<std::string>& service_names) {
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(dir.write("every.yaml", yaml), {}, std::nullopt, reg);
  std::vector<RunResult> runs = compare_policies(s, reg, policies, RunOptions{}, "");
  const std::string services = YAML::Dump(runs.at(0).resolved_config["inference"]["services"]);
  for (const RunResult& r : runs) {
    INFO("policy " << r.policy_name);
    // The same services, metered.
    CHECK(YAML::Dump(r.resolved_config["inference"]["services"]) == services);
    REQUIRE(r.inference.size() == service_names.size());
    for (std::size_t i = 0; i < service_names.size(); ++i) {
      CHECK(r.inference[i].name == service_names[i]);
      CHECK(r.inference[i].replica_s > 3600.0);
      CHECK(r.inference[i].peak_replicas >= 2);
      CHECK(r.inference[i].slo_violation_s >= 0.0);
    }
    // Energy with price and carbon, the thermal model.
    REQUIRE(r.energy.has_value());
    CHECK(r.energy->facility.energy_kwh > 0.0);
    CHECK(r.energy->facility.cost_usd.value_or(0.0) > 0.0);
    CHECK(r.energy->facility.co2_kg.value_or(0.0) > 0.0);
    CHECK(r.energy->thermal);
    CHECK(r.energy->cooling_energy_kwh > 0.0);
    // Failures and the market's spot reclamations happen whatever the policy.
    CHECK(r.stats.unit_failures > 0);
    CHECK(r.stats.loss_spikes + r.stats.job_failure_hits > 0);
    CHECK(r.stats.spot_reclamations > 0);
    REQUIRE(r.market.has_value());
    CHECK(r.market->total.device_h > 0.0);
    CHECK(r.summary.jobs_completed == 40);
  }
  return runs;
}

// `decorated` is the `inference` policy with default options in front of `plain`'s
// policy: what the runner puts in front of `plain`, so the same run.
void check_same_run(const RunResult& plain, const RunResult& decorated) {
  INFO(plain.policy_name << " vs " << decorated.policy_name);
  REQUIRE(plain.inference.size() == decorated.inference.size());
  for (std::size_t i = 0; i < plain.inference.size(); ++i) {
    CHECK(plain.inference[i].replica_s == decorated.inference[i].replica_s);
    CHECK(plain.inference[i].slo_violation_s == decorated.inference[i].slo_violation_s);
    CHECK(plain.inference[i].borrowed_device_s == decorated.inference[i].borrowed_device_s);
  }
  CHECK(plain.summary.mean_jct_s == decorated.summary.mean_jct_s);
  CHECK(plain.sorted_jct_s == decorated.sorted_jct_s);
}

}  // namespace

TEST_CASE("world: every policy of `compare all` runs in the same world and the world's metrics are produced for all", "[world]") {
  // (The rl policy is not in "all": it needs a checkpoint and LibTorch, which this test
  // binary does not link; it runs through the same run_scenario as the outside policy above.)
  TempDir dir;
  SECTION("one cluster: every policy of compare all") {
    const auto runs = check_every_policy(dir, kEveryModel, {"all"}, {"chat"});
    CHECK(runs.size() >= 28);
    const auto by_name = [&](const std::string& name) -> const RunResult& {
      const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunResult& r) { return r.policy_name == name; });
      REQUIRE(it != runs.end());
      return *it;
    };
    check_same_run(by_name("fifo"), by_name("inference"));
  }
  // Every policy but the round-based ones places a job inside one datacenter it may run
  // in (before, all but the spatial ones handed out sets spanning two, which the kernel
  // refused). round_fifo, gavel-fifo-perf and rounds still do (docs/policies.md).
  SECTION("two datacenters: every policy of compare all but the round-based ones") {
    const PolicyRegistry reg = builtin_policies();
    std::vector<std::string> policies;
    for (const auto& info : reg.all()) {
      if (!info.argument_option.empty() || info.name == "round_fifo" || info.name == "gavel-fifo-perf" || info.name == "rounds") continue;
      policies.push_back(info.name);
    }
    policies.push_back("{name: inference, base: spatial}");
    const auto runs = check_every_policy(dir, kEveryModelGeo, policies, {"chat-a", "chat-b"});
    CHECK(runs.size() >= 27);
    const auto by_name = [&](const std::string& name) -> const RunResult& {
      const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunResult& r) { return r.policy_name == name; });
      REQUIRE(it != runs.end());
      return *it;
    };
    check_same_run(by_name("spatial"), runs.back());
  }
}

// ---- Request-level services (issue 26): the meter drives a server with the kernel's clock. ----

#include <cmath>
#include <filesystem>
#include <sstream>

#include "run/snapshot_run.hpp"
#include "sim/snapshot_archive.hpp"

namespace {

// A request-level model whose server counts arrivals and records what the meter asks of
// it: starts, replica changes, and that its clock never goes back.
struct ServerLog {
  std::vector<std::string> calls;
  bool clock_went_back = false;
};

class RecordingServer : public RequestServer {
 public:
  RecordingServer(std::shared_ptr<ServerLog> log, std::vector<double> arrivals, double start_s, int replicas)
      : log_(std::move(log)), arrivals_(std::move(arrivals)), now_s_(start_s), replicas_(replicas) {
    while (next_ < arrivals_.size() && arrivals_[next_] < start_s) ++next_;
    first_ = next_;
  }
  void advance_to(double t_s) override {
    if (t_s < now_s_) log_->clock_went_back = true;
    now_s_ = t_s;
    while (next_ < arrivals_.size() && arrivals_[next_] <= t_s) ++next_;
  }
  void set_replicas(double t_s, int replicas) override {
    std::ostringstream s;
    s << "set " << t_s << ' ' << replicas;
    log_->calls.push_back(s.str());
    replicas_ = replicas;
  }
  int replicas() const override { return replicas_; }
  RequestLevelTotals totals(double span_s) const override {
    RequestLevelTotals t;
    t.arrived = t.finished = static_cast<std::int64_t>(next_ - first_);
    t.slo_attainment = 1.0;
    t.goodput_rps = span_s > 0 ? static_cast<double>(t.arrived) / span_s : 0.0;
    return t;
  }
  void write_requests_csv(std::ostream& out) const override { out << "id\n"; }

 private:
  std::shared_ptr<ServerLog> log_;
  std::vector<double> arrivals_;
  std::size_t next_ = 0, first_ = 0;
  double now_s_;
  int replicas_;
};

class RecordingModel : public RequestLevelModel {
 public:
  RecordingModel(std::shared_ptr<ServerLog> log, std::vector<double> arrivals) : log_(std::move(log)), arrivals_(std::move(arrivals)) {}
  std::unique_ptr<RequestServer> start(double start_s, int replicas) const override {
    std::ostringstream s;
    s << "start " << start_s << ' ' << replicas;
    log_->calls.push_back(s.str());
    return std::make_unique<RecordingServer>(log_, arrivals_, start_s, replicas);
  }
  const std::string& device_type() const override { return type_; }

 private:
  std::shared_ptr<ServerLog> log_;
  std::vector<double> arrivals_;
  std::string type_ = "V100";
};

// The lending scenario above (`scenario()`) with its service made request-level: the same
// rate curve and capacity, so the autoscaler and the kernel see what they saw before.
ScenarioConfig request_level_scenario(TempDir& dir, const std::string& policy, std::shared_ptr<ServerLog> log) {
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\ntrain,0,2,20000,1,4\n");
  const PolicyRegistry reg = builtin_policies();
  ScenarioConfig s = load_scenario(dir.write("s.yaml", scenario(policy)), {}, std::nullopt, reg);
  auto services = std::make_shared<std::vector<ServiceSpec>>(*s.inference->services);
  std::vector<double> arrivals;
  for (int k = 0; k <= 400; ++k) arrivals.push_back(100.0 * k);  // one request every 100 s over [0, 40000]
  (*services)[0].request_level = std::make_shared<RecordingModel>(log, arrivals);
  s.inference->services = services;
  return s;
}

}  // namespace

TEST_CASE("world: a request-level service's server follows the kernel clock and the autoscaler's replicas, and the kernel runs as before",
          "[world][inference][request-level]") {
  TempDir dir;
  const std::string policy = "{name: inference, autoscaler: reactive, interval_s: 300}";
  const auto before = run(dir, policy, "replica-level");
  auto log = std::make_shared<ServerLog>();
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = request_level_scenario(dir, policy, log);
  run_scenario(s, reg, RunOptions{dir.path("request-level")});
  const auto r = nlohmann::json::parse(read_file(dir.path("request-level/results.json")));
  // One replica from the span's first instant (loaded before it), two from the 3600 s
  // tick when the drop ends; the burst wants more than the pool of 2.
  CHECK(log->calls == std::vector<std::string>{"start 0 1", "set 3600 2"});
  CHECK_FALSE(log->clock_went_back);
  // The kernel's run is the replica-level one's: same jobs, lending and reclaim.
  CHECK(r["summary"] == before["summary"]);
  CHECK(read_file(dir.path("request-level/jobs.csv")) == read_file(dir.path("replica-level/jobs.csv")));
  const auto& svc = r["inference"][0];
  CHECK(svc["replica_hours"] == before["inference"][0]["replica_hours"]);
  CHECK(svc["lends"] == 1);
  CHECK(svc["reclaims"] == 1);
  // Taking the lent device back pays the checkpoint: save + restore on each move, as above.
  CHECK(read_file(dir.path("request-level/jobs.csv")).find(",50,0,2,") != std::string::npos);
  CHECK(svc["slo_violation_minutes"].is_null());  // per request instead
  // Requests over the span [0, makespan]: one each 100 s.
  const double end_s = r["summary"]["makespan_s"];
  CHECK(svc["requests"]["arrived"] == static_cast<std::int64_t>(std::floor(end_s / 100.0)) + 1);
  CHECK(double(svc["requests"]["goodput_rps"]) == Approx((std::floor(end_s / 100.0) + 1) / end_s).epsilon(1e-12));
  CHECK(svc["requests"]["ttft"].contains("p99_s"));
}

TEST_CASE("world: gavel runs with a request-level service behind the default autoscaler", "[world][inference][request-level]") {
  TempDir dir;
  auto log = std::make_shared<ServerLog>();
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = request_level_scenario(dir, "gavel", log);
  const RunResult r = run_scenario(s, reg, RunOptions{});
  CHECK(r.policy_name == "gavel");
  REQUIRE(r.inference.size() == 1);
  REQUIRE(r.inference[0].requests);
  CHECK(r.inference[0].requests->arrived > 0);
  CHECK(log->calls.front() == "start 0 1");
  CHECK(std::find(log->calls.begin(), log->calls.end(), "set 3600 2") != log->calls.end());
  CHECK_FALSE(log->clock_went_back);
}

TEST_CASE("world: snapshots of a run with a request-level service are refused before it starts, naming the service",
          "[world][inference][request-level][snapshot]") {
  TempDir dir;
  auto log = std::make_shared<ServerLog>();
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = request_level_scenario(dir, "fifo", log);
  RunOptions o{dir.path("snap")};
  o.snapshot.every = Tick::from_seconds(3600);
  CHECK_THROWS_MATCHES(run_scenario(s, reg, o), InputError,
                       Catch::Message("--snapshot-every: request-level inference service 'chat' (its serving engine's state) cannot "
                                      "be saved in a snapshot; run without --snapshot-every"));
  CHECK_FALSE(std::filesystem::exists(dir.path("snap/results.json")));
}

// ---- Request-level services from YAML: the serving engine inside the run. ----

#include "serving/request_service.hpp"

namespace {

// 4 H100s; a LLaMA-2-13B service (one device a replica) fed by a synthetic stream of 2
// req/s for an hour, 1..2 replicas; one rigid 2-GPU training job on [500, 3500).
std::string request_level_yaml(const std::string& service_extra, const std::string& type = "H100", const std::string& requests = "") {
  return R"(
seed: 1
cluster: {nodes: [{count: 1, type: )" + type + R"(, devices_per_node: 4}]}
physics: {}
workload: {trace: {path: rigid.csv, format: schedsim}}
inference:
  services:
    - name: chat
      requests: )" + (requests.empty() ? "{synthetic: {rate_rps: 2, duration_s: 3600, prompt_tokens: {fixed: 200}, output_tokens: {fixed: 20}, seed: 3}}" : requests) + R"(
      deployment: {model: LLaMA-2-13B, device: H100, tensor_parallel: 1}
      slo: {ttft_s: 1, tpot_s: 0.1}
      min_replicas: 1
      max_replicas: 2
)" + service_extra + "policy: fifo\n";
}

ScenarioConfig load_request_level(TempDir& dir, const std::string& yaml) {
  dir.write("rigid.csv", "job_id,submit_time_s,num_gpus,duration_s\ntrain,500,2,3000\n");
  const PolicyRegistry reg = builtin_policies();
  return load_scenario(dir.write("rl.yaml", yaml), {}, std::nullopt, reg);
}

std::string load_error(TempDir& dir, const std::string& yaml) {
  try {
    load_request_level(dir, yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("world: a request-level service from YAML is served by the engine over the training's span, under fifo and gavel",
          "[world][inference][request-level]") {
  TempDir dir;
  const ScenarioConfig s = load_request_level(dir, request_level_yaml("      capacity_rps: {H100: 4}\n"));
  const ServiceSpec& spec = s.inference->services->at(0);
  REQUIRE(spec.is_request_level());
  CHECK(spec.gpus_per_replica == 1);
  CHECK(spec.capacity_rps_by_type.at("H100") == 4.0);
  // The default model load: 13B parameters x 2 bytes / (1 device x 1 GB/s).
  const auto* model = dynamic_cast<const EngineRequestModel*>(spec.request_level.get());
  REQUIRE(model);
  CHECK(model->spec().model_load_s == Approx(model->spec().deployment.model.total_params() * 2.0 / 1e9).epsilon(1e-12));
  CHECK(model->spec().model_load_s == Approx(26.03).epsilon(1e-3));
  const PolicyRegistry reg = builtin_policies();
  run_scenario(s, reg, RunOptions{dir.path("out")});
  const auto r = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  const auto& svc = r["inference"][0];
  CHECK(svc["slo_violation_minutes"].is_null());
  const auto& q = svc["requests"];
  // The span is the training job's [500, 3500]: the stream's requests that arrived in it.
  std::int64_t in_span = 0;
  for (const serving::Request& x : *model->spec().requests) in_span += x.arrival_s >= 500.0 && x.arrival_s <= 3500.0 ? 1 : 0;
  CHECK(q["arrived"] == in_span);
  // One replica up over the span, counted from its start (not from the engine's t = 0).
  CHECK(double(q["active_replica_hours"]) == Approx(3000.0 / 3600).epsilon(1e-9));
  CHECK(double(svc["replica_hours"]) == Approx(3000.0 / 3600).epsilon(1e-9));
  CHECK(int(q["finished"]) <= int(q["arrived"]));
  CHECK(int(q["finished"]) >= int(q["arrived"]) - 5);  // 2 req/s on replicas far from full: a few in flight at the end
  CHECK(double(q["slo_attainment"]) >= 0.0);
  CHECK(double(q["slo_attainment"]) <= 1.0);
  CHECK(double(q["ttft"]["p50_s"]) > 0.0);
  CHECK(double(q["ttft"]["p50_s"]) <= double(q["ttft"]["p99_s"]));
  CHECK(double(q["energy_kwh"]) > 0.0);
  // Reactive at 2 req/s: ceil(2 / (4 x 0.6)) = 1 replica all along.
  CHECK(svc["peak_replicas"] == 1);
  CHECK(q["replica_changes"] == 0);
  CHECK(r["config"]["inference"]["services"][0]["gpus_per_replica"] == 1);
  CHECK_FALSE(r["config"]["inference"]["services"][0].contains("slo_p99_s"));
  // Deterministic: the same bytes again.
  run_scenario(s, reg, RunOptions{dir.path("again")});
  CHECK(read_file(dir.path("again/results.json")) == read_file(dir.path("out/results.json")));
  CHECK_FALSE(std::filesystem::exists(dir.path("out/requests_0.csv")));  // only when asked
  // requests_csv: one row per finished request, the rest of the run unchanged.
  const ScenarioConfig with_csv = load_request_level(dir, request_level_yaml("      capacity_rps: {H100: 4}\n      requests_csv: true\n"));
  run_scenario(with_csv, reg, RunOptions{dir.path("csv")});
  const std::string csv = read_file(dir.path("csv/requests_0.csv"));
  CHECK(csv.rfind("id,arrival_s,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,prompt_tokens,output_tokens,replica,preemptions\n", 0) == 0);
  CHECK(static_cast<std::int64_t>(std::count(csv.begin(), csv.end(), '\n')) == 1 + std::int64_t(q["finished"]));
  const auto r_csv = nlohmann::json::parse(read_file(dir.path("csv/results.json")));
  CHECK(r_csv["inference"] == r["inference"]);
  CHECK(r_csv["summary"] == r["summary"]);
  // gavel runs the same world: the engine serves the same requests over the same span.
  const YAML::Node gavel = YAML::Load("gavel");
  const RunResult g = run_scenario(s, reg, RunOptions{}, &gavel);
  CHECK(g.policy_name == "gavel");
  REQUIRE(g.inference.size() == 1);
  REQUIRE(g.inference[0].requests);
  CHECK(g.inference[0].requests->arrived == std::int64_t(q["arrived"]));
  CHECK(g.inference[0].requests->finished == std::int64_t(q["finished"]));
}

TEST_CASE("world: without capacity_rps a request-level service's capacity is one replica's measured saturation throughput",
          "[world][inference][request-level]") {
  TempDir dir;
  const ScenarioConfig s = load_request_level(dir, request_level_yaml(""));
  const ServiceSpec& spec = s.inference->services->at(0);
  const auto* model = dynamic_cast<const EngineRequestModel*>(spec.request_level.get());
  REQUIRE(model);
  const double measured = saturation_capacity_rps(model->spec().deployment, *model->spec().requests);
  CHECK(measured > 0.0);
  CHECK(spec.capacity_rps_by_type.at("H100") == measured);
}

TEST_CASE("inference config: request_copies replays the trace within its duration, each copy compressed", "[world][inference][request-level]") {
  TempDir dir;
  dir.write("conv.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0000000,10,2\n2023-11-16 18:00:01.0000000,20,3\n"
                        "2023-11-16 18:00:02.0000000,30,4\n");
  const ScenarioConfig s = load_request_level(
      dir, request_level_yaml("      capacity_rps: {H100: 4}\n      request_copies: 2\n", "H100", "{trace: conv.csv, format: azure_llm, duration_s: 100}"));
  const auto* model = dynamic_cast<const EngineRequestModel*>(s.inference->services->at(0).request_level.get());
  REQUIRE(model);
  std::vector<double> arrivals;
  std::vector<std::int32_t> prompts;
  for (const serving::Request& q : *model->spec().requests) {
    arrivals.push_back(q.arrival_s);
    prompts.push_back(q.prompt_tokens);
  }
  // The trace stretched to [0, 100] s is 0, 50, 100; two copies in 100 s: halves of it.
  CHECK(arrivals == std::vector<double>{0, 25, 50, 50, 75, 100});
  CHECK(prompts == std::vector<std::int32_t>{10, 20, 30, 10, 20, 30});
  // More requests than a run holds is refused before any is made.
  CHECK_THAT(load_error(dir, request_level_yaml("      capacity_rps: {H100: 4}\n      request_copies: 40000000\n", "H100",
                                                "{trace: conv.csv, format: azure_llm, duration_s: 100}")),
             Catch::EndsWith("inference.services[0].request_copies: 40000000 copies of 3 requests would be more than the 100,000,000 requests a run holds"));
}

TEST_CASE("inference config: request-level services refuse the replica-level keys and a device their datacenter does not have",
          "[world][inference][request-level]") {
  TempDir dir;
  CHECK_THAT(load_error(dir, request_level_yaml("      capacity_rps: {A100-80GB: 4}\n", "A100-80GB")),
             Catch::EndsWith("inference.services[0].deployment.device: is H100-SXM, but the replicas of service 'chat' run on device type "
                             "'A100-80GB' (the first device type of its datacenter)"));
  CHECK_THAT(load_error(dir, request_level_yaml("      slo_p99_s: 2\n")),
             Catch::EndsWith("inference.services[0].slo_p99_s: not used by a request-level service (one with `requests`): its SLO is `slo: {ttft_s, tpot_s}`"));
  CHECK_THAT(load_error(dir, request_level_yaml("      gpus_per_replica: 2\n")),
             Catch::EndsWith("inference.services[0].gpus_per_replica: not used by a request-level service (one with `requests`): its replicas have "
                             "deployment.tensor_parallel devices"));
  CHECK_THAT(load_error(dir, request_level_yaml("      rate: {diurnal: {mean_rps: 1}}\n")),
             Catch::EndsWith("inference.services[0]: give rate (a replica-level service) or requests (a request-level one), not both"));
  CHECK_THAT(load_error(dir, request_level_yaml("      request_copies: 3\n")),
             Catch::EndsWith("inference.services[0].request_copies: replays a trace; for a synthetic stream raise its rate_rps instead"));
  CHECK_THAT(load_error(dir, request_level_yaml("      capacity_rps: {V100: 4}\n")),
             Catch::EndsWith("inference.services[0].capacity_rps: lists no capacity for device type 'H100', where the replicas of service 'chat' run"));
  // A replica-level service refuses the request-level keys.
  const std::string replica_level = two_replica_scenario("fifo");
  std::string with_deployment = replica_level;
  with_deployment.replace(with_deployment.find("      slo_p99_s: 2\n"), 0, "      deployment: {model: LLaMA-2-13B, device: V100}\n");
  CHECK_THAT(load_error(dir, with_deployment), Catch::EndsWith("inference.services[0].deployment: only a request-level service (one with `requests`) has it"));
}

// Issue 26's co-scheduling with planned training: an elastic LLaMA-2-70B job (16 H100, up
// to 32) beside a service whose pool has one idle 8-device replica. 24 devices admit no
// plan of its model (no DP x PP x TP split of 24 divides its 80 layers and a global batch
// of 1024), so the autoscaler lends it only what leaves a plan: before the fix it lent
// all 8 and the run stopped with the planner's error on the move.
TEST_CASE("inference: lending grows a job under a parallelism plan only to a device count some plan splits", "[policies][inference][llm]") {
  TempDir dir;
  const std::string path = dir.write("s.yaml", R"(
seed: 1
cluster: {nodes: [{count: 4, type: H100-SXM, devices_per_node: 8}]}
physics: {checkpoint: {storage_bandwidth_gbps: 100}}
workload:
  synthetic:
    num_jobs: 1
    arrival: {process: fixed, interarrival_s: 10}
    duration_s: {dist: constant, value: 20000}
    gpus: {16: 1}
    models: {LLaMA-2-70B: {share: 1, plan: auto}}
    elastic: {fraction: 1.0, min_scale: 1.0, max_scale: 2.0}
inference:
  services:
    - name: chat
      rate: {diurnal: {mean_rps: 1, amplitude_rps: 0}}
      capacity_rps: {H100-SXM: 10}
      gpus_per_replica: 8
      slo_p99_s: 2
      min_replicas: 1
      max_replicas: 2
policy: {name: inference, autoscaler: reactive, interval_s: 300}
)");
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  REQUIRE_NOTHROW(run_scenario(s, reg, RunOptions{dir.path("out")}));
  const auto r = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  const auto& svc = r["inference"][0];
  CHECK(r["summary"]["jobs_completed"] == 1);
  CHECK(svc["lends"] == 1);
  CHECK(r["summary"]["moves"] == 1);
  const std::string jobs = read_file(dir.path("out/jobs.csv"));
  INFO(jobs);
  CHECK(jobs.find(",1,0,0,0,0,0,,,,tp=1 pp=5 dp=4 ep=1 cp=1 sp=off zero3 recompute=full mb=1 gb=1024\n") != std::string::npos);  // 20 devices: moves 1
}
