// The `inference` policy: a service's pool, reactive autoscaling through a drop and a
// burst, SLO violation minutes and replica-hours by hand, an elastic training job that
// borrows the idle replica device and gives it back (paying the checkpoint cost), and
// the predictive autoscaler.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
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
