// The RL environment: masks, the return identity, determinism, autoreset, thread-count
// independence, and one hand-built case with known candidates and features.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/simulation_setup.hpp"
#include "rl/env/candidates.hpp"
#include "world/physics/cluster_physics.hpp"
#include "rl/env/env_bench.hpp"
#include "rl/env/features.hpp"
#include "rl/env/mdp.hpp"
#include "rl/env/scheduling_env.hpp"
#include "rl/env/vector_env.hpp"
#include "base/error.hpp"
#include "base/rng.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

namespace schedsim::rl {
namespace {

std::shared_ptr<const ScenarioConfig> scenario_from(const std::string& yaml) {
  const PolicyRegistry registry = builtin_policies();
  return std::make_shared<const ScenarioConfig>(ScenarioConfig::parse(ConfigNode::load_string(yaml, "test scenario"), registry));
}

// Heterogeneous, physics on, 2 racks: every placement option can differ.
const char* kHetero = R"(
seed: 3
cluster:
  nodes:
    - {count: 2, type: H100-SXM, devices_per_node: 4}
    - {count: 2, type: V100, devices_per_node: 4}
  topology: {nodes_per_rack: 2, oversubscription: 2.0}
workload:
  synthetic:
    num_jobs: 60
    arrival: {process: poisson, mean_interarrival_s: 200}
    duration_s: {dist: lognormal, median: 1200, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
    estimate_error_sigma: 0.5
    models: {ResNet-50: 0.4, BERT-large: 0.3, GPT-2-1.5B: 0.3}
physics: {reference_device: V100, interference_factor: 0.9}
)";

// Plain queueing model (no physics), for the identity on an unrelated world.
const char* kPlain = R"(
seed: 5
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 4}
workload:
  synthetic:
    num_jobs: 80
    arrival: {process: poisson, mean_interarrival_s: 60}
    duration_s: {dist: lognormal, median: 600, sigma: 1.2}
    gpus: {1: 0.6, 2: 0.2, 4: 0.1, 8: 0.1}
)";

struct Obs {
  std::vector<float> cand, global;
  std::vector<std::uint8_t> mask;
  explicit Obs(const EnvShape& s)
      : cand(static_cast<std::size_t>(s.num_candidates * s.candidate_features)), global(static_cast<std::size_t>(s.global_features)),
        mask(static_cast<std::size_t>(s.num_actions())) {}
  void read(const SchedulingEnv& env) { env.write_observation(cand.data(), global.data(), mask.data()); }
  // Feature values by their documented names (SchedulingEnv::*_feature_names()).
  float cand_at(int row, const std::string& name) const {
    return cand[static_cast<std::size_t>(row * kCandidateFeatures + column(SchedulingEnv::candidate_feature_names(), name))];
  }
  float global_at(const std::string& name) const { return global[static_cast<std::size_t>(column(SchedulingEnv::global_feature_names(), name))]; }
  static int column(const std::vector<std::string>& names, const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return static_cast<int>(it - names.begin());
  }
};

// A uniformly random legal action.
int random_legal(const std::vector<std::uint8_t>& mask, Rng& rng) {
  std::vector<int> legal;
  for (std::size_t a = 0; a < mask.size(); ++a) {
    if (mask[a]) legal.push_back(static_cast<int>(a));
  }
  REQUIRE(!legal.empty());
  return legal[rng.below(legal.size())];
}

// Sum over all jobs of end - submit, recorded independently of the kernel's integral.
class JctSum : public Observer {
 public:
  void on_job_end(const JobState& j) override { total_s += (j.end - j.spec.submit).seconds(); }
  double total_s = 0.0;
};

}  // namespace

TEST_CASE("Random legal actions never reach the kernel illegally and masked actions throw", "[rl][env]") {
  auto sc = scenario_from(kHetero);
  EnvConfig cfg;
  cfg.check_invariants = true;
  cfg.max_candidates = 8;
  SchedulingEnv env(sc, cfg);
  const EnvShape& shape = env.shape();
  CHECK(shape.candidate_features == static_cast<int>(SchedulingEnv::candidate_feature_names().size()));
  CHECK(shape.global_features == static_cast<int>(SchedulingEnv::global_feature_names().size()));
  Obs obs(shape);
  Rng rng(11, "test.actions");
  std::uint64_t steps = 0, masked_checked = 0, episodes = 0, starts = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    env.reset(seed);
    while (!env.done()) {
      obs.read(env);
      // Padding rows are zero and masked; at least one action is legal.
      for (int i = 0; i < shape.num_candidates; ++i) {
        const SchedulingEnv::CandidateInfo info = env.candidate(i);
        CHECK(static_cast<bool>(obs.mask[static_cast<std::size_t>(i)]) == info.legal);
        if (info.job == kNoJob) {
          for (int f = 0; f < shape.candidate_features; ++f) CHECK(obs.cand[static_cast<std::size_t>(i * shape.candidate_features + f)] == 0.0f);
        }
        if (info.legal) CHECK(static_cast<int>(info.devices.size()) == env.simulator().job(info.job).spec.num_gpus);
      }
      // Every masked action throws InvalidAction and leaves the env unchanged.
      for (int a = 0; a < shape.num_actions() && masked_checked < 2000; ++a) {
        if (obs.mask[static_cast<std::size_t>(a)]) continue;
        CHECK_THROWS_AS(env.step(a), InvalidAction);
        ++masked_checked;
      }
      const int a = random_legal(obs.mask, rng);
      starts += a < shape.num_candidates ? 1 : 0;
      env.step(a);
      ++steps;
    }
    ++episodes;
    CHECK(env.simulator().num_pending() == 0);
    CHECK(env.jobs_completed() == 60);
  }
  CHECK(steps > 300);
  CHECK(starts == 4 * 60);  // every job started exactly once, by the agent
  CHECK(masked_checked > 100);
  CHECK_THROWS_AS(env.step(0), InvalidAction);  // after the end
  env.reset(1);
  try {
    env.step(shape.num_actions());
    FAIL("an out-of-range action was accepted");
  } catch (const InvalidAction& e) {
    CHECK(std::string(e.what()).find("action 9 is out of range") != std::string::npos);
    CHECK(std::string(e.what()).find("mask") != std::string::npos);
  }
  CHECK_THROWS_AS(env.step(-1), PolicyError);
}

TEST_CASE("The undiscounted return equals minus the total JCT", "[rl][env]") {
  for (const char* yaml : {kHetero, kPlain}) {
    auto sc = scenario_from(yaml);
    EnvConfig cfg;
    cfg.reward_scale = 1.0;
    SchedulingEnv env(sc, cfg);
    Obs obs(env.shape());
    Rng rng(7, "test.actions");
    JctSum jct;
    env.add_observer(jct);
    env.reset(9);
    double ret = 0.0;
    while (!env.done()) {
      obs.read(env);
      ret += env.step(random_legal(obs.mask, rng)).reward;
    }
    REQUIRE(jct.total_s > 0);
    CHECK(ret == Approx(-jct.total_s).epsilon(1e-9));
    CHECK(env.episode_return() == Approx(ret).epsilon(1e-12));
    CHECK(env.total_jct_s() == Approx(jct.total_s).epsilon(1e-9));
  }
}

TEST_CASE("Same seed same trajectory and another seed differs", "[rl][env]") {
  auto sc = scenario_from(kHetero);
  auto trajectory = [&](std::uint64_t seed) {
    SchedulingEnv env(sc, EnvConfig{});
    Obs obs(env.shape());
    Rng rng(3, "test.actions");
    std::vector<float> trace;
    env.reset(seed);
    while (!env.done()) {
      obs.read(env);
      trace.insert(trace.end(), obs.cand.begin(), obs.cand.end());
      trace.insert(trace.end(), obs.global.begin(), obs.global.end());
      trace.push_back(static_cast<float>(env.step(random_legal(obs.mask, rng)).reward));
    }
    return trace;
  };
  const auto a = trajectory(21), b = trajectory(21), c = trajectory(22);
  CHECK(a.size() > 1000);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("VectorEnv autoresets in the same step with the next seed of its sequence", "[rl][vector]") {
  auto sc = scenario_from(kPlain);
  EnvConfig cfg;
  cfg.max_steps = 25;  // truncation ends episodes quickly
  cfg.max_candidates = 4;
  VectorEnv venv(sc, cfg, 2, 1);
  venv.reset(100);
  CHECK(venv.env(0).episode_seed() == 100);
  CHECK(venv.env(1).episode_seed() == 101);
  const EnvShape& s = venv.shape();
  const int wait = s.num_candidates;
  std::vector<std::int32_t> actions(2, wait);
  for (int t = 1; t <= 25; ++t) {
    for (int i = 0; i < 2; ++i) {  // start candidate 0 when legal, else wait
      const std::uint8_t* m = venv.masks() + i * s.num_actions();
      actions[static_cast<std::size_t>(i)] = m[0] ? 0 : wait;
    }
    venv.step(actions.data());
    if (t < 25) {
      CHECK(venv.truncated()[0] == 0);
      CHECK(venv.env(0).episode_steps() == static_cast<std::uint64_t>(t));
    }
  }
  // Step 25 truncated both; the arrays already hold the first observation of episode 2.
  CHECK(venv.truncated()[0] == 1);
  CHECK(venv.truncated()[1] == 1);
  CHECK(venv.terminated()[0] == 0);
  CHECK(venv.env(0).episode_steps() == 0);
  CHECK(venv.env(0).episode_seed() == 102);  // seed + i + N x episode
  CHECK(venv.env(1).episode_seed() == 103);
  SchedulingEnv fresh(sc, cfg);
  fresh.reset(102);
  Obs obs(fresh.shape());
  obs.read(fresh);
  CHECK(std::memcmp(obs.cand.data(), venv.candidates(), obs.cand.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(obs.mask.data(), venv.masks(), obs.mask.size()) == 0);
  const auto records = venv.take_finished_episodes();
  REQUIRE(records.size() == 2);
  CHECK(records[0].env == 0);
  CHECK(records[0].seed == 100);
  CHECK(records[0].steps == 25);
  CHECK(records[1].seed == 101);
  CHECK(venv.take_finished_episodes().empty());
}

TEST_CASE("VectorEnv keeps the last observation of an episode that ended (gymnasium's final_obs)", "[rl][vector]") {
  auto sc = scenario_from(kPlain);
  EnvConfig cfg;
  cfg.max_steps = 25;
  cfg.max_candidates = 4;
  VectorEnv venv(sc, cfg, 2, 1);
  SchedulingEnv single(sc, cfg);  // env 1's first episode, stepped alone
  venv.reset(100);
  single.reset(101);
  const EnvShape& s = venv.shape();
  Obs obs(s);
  std::vector<std::int32_t> actions(2, s.num_candidates);
  for (int t = 1; t <= 25; ++t) {
    obs.read(single);
    actions[1] = obs.mask[0] ? 0 : s.num_candidates;
    venv.step(actions.data());
    single.step(actions[1]);
  }
  REQUIRE(venv.truncated()[1] == 1);
  obs.read(single);  // the truncated episode's last state, which the autoreset replaced
  const std::size_t cand = obs.cand.size(), glob = obs.global.size(), mask = obs.mask.size();
  CHECK(std::memcmp(obs.cand.data(), venv.final_candidates() + cand, cand * sizeof(float)) == 0);
  CHECK(std::memcmp(obs.global.data(), venv.final_global() + glob, glob * sizeof(float)) == 0);
  CHECK(std::memcmp(obs.mask.data(), venv.final_masks() + mask, mask) == 0);
  CHECK(std::memcmp(obs.global.data(), venv.global() + glob, glob * sizeof(float)) != 0);  // the live row moved on
}

TEST_CASE("VectorEnv results do not depend on the thread count", "[rl][vector]") {
  auto sc = scenario_from(kHetero);
  EnvConfig cfg;
  cfg.max_candidates = 8;
  auto run = [&](int threads) {
    VectorEnv venv(sc, cfg, 5, threads);
    const EnvShape& s = venv.shape();
    const int n = venv.num_envs();
    Rng rng(5, "test.actions");
    venv.reset(40);
    std::vector<float> out;
    std::vector<std::int32_t> actions(static_cast<std::size_t>(n));
    for (int t = 0; t < 600; ++t) {
      for (int i = 0; i < n; ++i) {
        std::vector<std::uint8_t> m(venv.masks() + i * s.num_actions(), venv.masks() + (i + 1) * s.num_actions());
        actions[static_cast<std::size_t>(i)] = random_legal(m, rng);
      }
      venv.step(actions.data());
      out.insert(out.end(), venv.candidates(), venv.candidates() + n * s.num_candidates * s.candidate_features);
      out.insert(out.end(), venv.global(), venv.global() + n * s.global_features);
      out.insert(out.end(), venv.rewards(), venv.rewards() + n);
      for (int i = 0; i < n; ++i) out.push_back(venv.terminated()[i] + 2.0f * venv.truncated()[i] + 4.0f * venv.masks()[i * s.num_actions()]);
    }
    const auto records = venv.take_finished_episodes();
    for (const auto& r : records) out.push_back(static_cast<float>(r.mean_jct_s));
    return std::make_pair(out, records.size());
  };
  const auto [one, episodes_one] = run(1);
  const auto [three, episodes_three] = run(3);
  CHECK(episodes_one > 0);  // autoresets happened during the run
  CHECK(episodes_one == episodes_three);
  REQUIRE(one.size() == three.size());
  CHECK(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("VectorEnv results do not depend on the thread count on the built-in scenario", "[rl][vector]") {
  const PolicyRegistry registry = builtin_policies();
  auto sc = std::make_shared<const ScenarioConfig>(load_rl_scenario("", {"workload.synthetic.num_jobs=40"}, registry));
  const EnvConfig cfg = EnvConfig::from_scenario(*sc);
  auto run = [&](int threads) {
    VectorEnv venv(sc, cfg, 8, threads);
    const EnvShape& s = venv.shape();
    Rng rng(8, "test.actions");
    venv.reset(3);
    std::vector<float> out;
    std::vector<std::int32_t> actions(8);
    for (int t = 0; t < 400; ++t) {
      for (int i = 0; i < 8; ++i) {
        std::vector<std::uint8_t> m(venv.masks() + i * s.num_actions(), venv.masks() + (i + 1) * s.num_actions());
        actions[static_cast<std::size_t>(i)] = random_legal(m, rng);
      }
      venv.step(actions.data());
      out.insert(out.end(), venv.candidates(), venv.candidates() + 8 * s.num_candidates * s.candidate_features);
      out.insert(out.end(), venv.global(), venv.global() + 8 * s.global_features);
      out.insert(out.end(), venv.rewards(), venv.rewards() + 8);
      for (int i = 0; i < 8; ++i) out.push_back(venv.terminated()[i] + 2.0f * venv.truncated()[i]);
      out.insert(out.end(), venv.masks(), venv.masks() + 8 * s.num_actions());
    }
    return std::make_pair(out, venv.take_finished_episodes().size());
  };
  const auto [one, episodes] = run(1);
  CHECK(episodes >= 8);  // 40-job episodes: every environment reset at least once
  for (int threads : {2, 4, 8}) {
    const auto [other, other_episodes] = run(threads);
    INFO("threads " << threads);
    CHECK(other_episodes == episodes);
    REQUIRE(other.size() == one.size());
    CHECK(std::memcmp(other.data(), one.data(), one.size() * sizeof(float)) == 0);
  }
}

// As the environment does: start or preempt a random legal row, or (one time in four, or
// with none legal) let the simulation run on. Returns whether the run goes on.
static bool act_randomly(Simulator& sim, PendingQueue& queue, const std::vector<Candidate>& rows, const std::vector<int>& legal, Rng& rng, ActionBatch& batch) {
  if (!legal.empty() && rng.below(4) != 0) {
    const Candidate& c = rows[static_cast<std::size_t>(legal[rng.below(legal.size())])];
    batch.clear();
    if (c.preempt) {
      batch.preempt(c.job);
    } else if (c.migrate) {
      batch.move(c.job, c.devices);
    } else {
      batch.start(c.job, c.devices);
    }
    sim.apply(batch);
    if (!c.preempt && !c.migrate) queue.started(c.job);
    return true;
  }
  if (sim.num_pending() > 0 && sim.num_running() == 0 && !sim.has_future_events()) FAIL("jobs pending, none startable, nothing left to happen");
  return sim.advance();
}

// The builder keeps state between decision points (each job's physics answers per
// placement option) and answers jobs of one size from one read-only query of the
// placement index; a builder made fresh at every decision point has neither, so any
// stale answer would show as a difference.
TEST_CASE("Candidates built with the cached answers equal those of a fresh builder", "[rl][env][candidates]") {
  const PolicyRegistry registry = builtin_policies();
  // rl_default's migration rows and preemption rows as well: every row family.
  const ScenarioConfig sc = load_rl_scenario("", {"workload.synthetic.num_jobs=80", "env.preempt_rows=4"}, registry);
  const EnvConfig cfg = EnvConfig::from_scenario(sc);
  REQUIRE(cfg.preempt_rows > 0);
  REQUIRE(cfg.migrate_rows > 0);
  std::vector<std::string> warnings;
  SimulationSetup setup(sc, 5, warnings);
  PendingQueue queue(cfg.order, cfg.information);
  auto sim = setup.make_simulator(queue);
  const ClusterPhysics* physics = setup.physics();
  REQUIRE(physics != nullptr);
  CandidateBuilder cached(cfg, setup.cluster(), physics, setup.simulator_options().node_group, sc.accelerators);
  std::vector<Candidate> rows, fresh_rows;
  FeatureLogCache logs;
  Rng rng(2, "test.actions");
  ActionBatch batch;
  std::uint64_t decisions = 0, start_rows = 0, moves = 0;
  bool running = sim->advance();
  while (running) {
    const int n = cached.build(sim->view(), queue, rows);
    CandidateBuilder fresh(cfg, setup.cluster(), physics, setup.simulator_options().node_group, sc.accelerators);
    REQUIRE(fresh.build(sim->view(), queue, fresh_rows) == n);
    std::vector<int> legal;
    for (int i = 0; i < n; ++i) {
      const Candidate& a = rows[static_cast<std::size_t>(i)];
      const Candidate& b = fresh_rows[static_cast<std::size_t>(i)];
      INFO("decision " << decisions << " row " << i);
      REQUIRE(a.legal == b.legal);
      REQUIRE(a.preempt == b.preempt);
      REQUIRE(a.migrate == b.migrate);
      CHECK(a.gain == b.gain);
      REQUIRE(a.job == b.job);
      REQUIRE(a.rank == b.rank);
      REQUIRE(a.option == b.option);
      REQUIRE(a.devices == b.devices);
      CHECK(a.nodes == b.nodes);
      CHECK(a.racks == b.racks);
      CHECK(a.shares_node == b.shares_node);
      CHECK(a.rate == b.rate);  // bit for bit
      CHECK(a.best_rate == b.best_rate);
      CHECK(a.memory_use == b.memory_use);
      if (a.legal && !a.preempt) {  // a start or a move to free devices
        start_rows += a.migrate ? 0 : 1;
        moves += a.migrate ? 1 : 0;
        CHECK(a.rate == physics->uncontended_rate(sim->job(a.job).spec, a.devices));
        CHECK(physics->placement_problem(sim->job(a.job).spec, a.devices).empty());
        for (DeviceId d : a.devices) CHECK(sim->view().cluster_state().is_free(d));
      }
      if (a.legal) legal.push_back(i);
    }
    // Feature rows and global features written with logarithms kept across decision
    // points equal those written without (bit for bit).
    const int f = candidate_feature_count(cfg), g = global_feature_count(cfg), k = cfg.max_candidates;
    std::vector<float> kept_rows(static_cast<std::size_t>(k * f)), plain_rows(kept_rows.size()), kept_global(static_cast<std::size_t>(g)),
        plain_global(kept_global.size());
    std::vector<std::uint8_t> kept_mask(static_cast<std::size_t>(k)), plain_mask(kept_mask.size());
    write_candidate_rows(sim->view(), cfg.information, rows, n, k, kept_rows.data(), kept_mask.data(), f, &logs);
    write_candidate_rows(sim->view(), cfg.information, rows, n, k, plain_rows.data(), plain_mask.data(), f);
    write_global_features(sim->view(), cfg.information, queue, kept_global.data(), g, &logs);
    write_global_features(sim->view(), cfg.information, queue, plain_global.data(), g);
    CHECK(std::memcmp(kept_rows.data(), plain_rows.data(), kept_rows.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(kept_global.data(), plain_global.data(), kept_global.size() * sizeof(float)) == 0);
    CHECK(kept_mask == plain_mask);
    ++decisions;
    running = act_randomly(*sim, queue, rows, legal, rng, batch);
  }
  CHECK(decisions > 300);
  CHECK(start_rows > 500);
  CHECK(moves > 0);
  const CandidateStats& st = cached.stats();
  CHECK(st.builds == decisions);
  CHECK(st.start_rows == start_rows);
  CHECK(cached.index_claims() == 0);  // read-only queries: nothing claimed, nothing to undo
  // Jobs of one size share a query: fewer queries than (job, option) lookups.
  CHECK(st.placement_queries * 10 < st.placement_lookups * 7);
  // A waiting job's placement often stays put between decision points.
  CHECK(st.physics_reused * 2 > st.physics_evaluations);
  CHECK(st.physics_evaluations + st.physics_reused >= st.start_rows);
}

// physics.mixed_types: forbid: the kernel refuses a device set spanning types, so the
// agent's candidates must not offer one: a packed or first-fit set that spans types is
// a placement problem of the physics model and its row is left out (the fastest- and
// slowest-type rows stay within one type by construction).
TEST_CASE("Under mixed_types: forbid every start candidate lies within one device type", "[rl][env][candidates][placement]") {
  const PolicyRegistry registry = builtin_policies();
  // rl_default's 16 H100s, 16 A100s and 32 V100s; its jobs of up to 16 GPUs each fit one
  // type, so every job must still finish.
  const ScenarioConfig sc = load_rl_scenario("", {"workload.synthetic.num_jobs=120", "physics.mixed_types=forbid"}, registry);
  const EnvConfig cfg = EnvConfig::from_scenario(sc);
  std::vector<std::string> warnings;
  SimulationSetup setup(sc, 7, warnings);
  PendingQueue queue(cfg.order, cfg.information);
  auto sim = setup.make_simulator(queue);
  const ClusterPhysics* physics = setup.physics();
  REQUIRE(physics != nullptr);
  REQUIRE_FALSE(physics->allows_mixed_types());
  CandidateBuilder builder(cfg, setup.cluster(), physics, setup.simulator_options().node_group, sc.accelerators);
  std::vector<Candidate> rows;
  Rng rng(4, "test.actions");
  ActionBatch batch;
  std::uint64_t start_rows = 0, multi_device_rows = 0;
  bool running = sim->advance();
  while (running) {
    const int n = builder.build(sim->view(), queue, rows);
    std::vector<int> legal;
    for (int i = 0; i < n; ++i) {
      const Candidate& c = rows[static_cast<std::size_t>(i)];
      if (!c.legal) continue;
      legal.push_back(i);
      if (c.preempt) continue;  // start and migration rows: devices the job would run on
      ++start_rows;
      if (c.devices.size() > 1) ++multi_device_rows;
      for (DeviceId d : c.devices) CHECK(setup.cluster().device_type_of(d) == setup.cluster().device_type_of(c.devices.front()));
      CHECK(physics->placement_problem(sim->job(c.job).spec, c.devices).empty());
    }
    running = act_randomly(*sim, queue, rows, legal, rng, batch);  // a start spanning types would throw
  }
  CHECK(start_rows > 200);
  CHECK(multi_device_rows > 50);
  CHECK(sim->stats().jobs_completed == 120);
}

TEST_CASE("A hand-built case has the expected candidates and features", "[rl][env]") {
  test::TempDir dir;
  // Job a (2 GPUs) at t=0 and job b (1 GPU, estimate 7200 s) at t=0 on two 2-GPU nodes.
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s,estimate_s\n"
                                      "a,0,2,3600,\n"
                                      "b,0,1,1800,7200\n"
                                      "c,10,4,100,\n");
  auto sc = scenario_from("cluster:\n  nodes:\n    - {count: 2, type: V100, devices_per_node: 2}\nworkload: {trace: {path: " + trace +
                          "}}\ninformation: oracle\nenv: {max_candidates: 4, placements: [packed, first_fit], max_blocked_rows: 1}\n");
  const EnvConfig cfg = EnvConfig::from_scenario(*sc);
  REQUIRE(cfg.max_candidates == 4);
  REQUIRE(cfg.placements.size() == 2);
  SchedulingEnv env(sc, cfg);
  REQUIRE(env.shape().candidate_features == kCandidateFeatures);
  Obs obs(env.shape());
  env.reset(1);
  obs.read(env);
  // At t=0: a packed = node 0 {0,1} (best fit of an empty cluster: the first node),
  // first_fit = {0,1} too: deduplicated. b packed = {0}, first fit {0}: one row. c not arrived.
  CHECK(env.simulator().now().seconds() == 0.0);
  auto info0 = env.candidate(0), info1 = env.candidate(1), info2 = env.candidate(2);
  CHECK(info0.job_id == "a");
  CHECK(info0.devices == std::vector<DeviceId>{0, 1});
  CHECK(info0.option == PlacementOption::kPacked);
  CHECK(info1.job_id == "b");
  CHECK(info1.devices == std::vector<DeviceId>{0});
  CHECK(info2.job == kNoJob);
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 1, 0, 0, 1});
  auto col = [&](int row, const std::string& name) { return obs.cand_at(row, name); };
  CHECK(col(0, "gpus_frac") == Approx(0.5));
  CHECK(col(0, "log_est_work_h") == Approx(std::log1p(1.0)));       // no estimate: duration 1 h
  CHECK(col(1, "log_est_work_h") == Approx(std::log1p(2.0)));       // the estimate, 2 h
  CHECK(col(1, "log_est_gpu_h") == Approx(std::log1p(2.0)));
  CHECK(col(0, "log_est_gpu_h") == Approx(std::log1p(2.0)));        // 2 GPUs x 1 h
  CHECK(col(0, "speed_vs_best") == Approx(1.0));
  CHECK(col(0, "log2_nodes") == Approx(0.0));
  CHECK(col(0, "opt_packed") == 1.0f);
  CHECK(col(0, "opt_first_fit") == 0.0f);
  CHECK(col(1, "log_rank") == Approx(std::log1p(1.0) / std::log1p(4.0)));
  CHECK(col(0, "blocked") == 0.0f);
  auto g = [&](const std::string& name) { return obs.global_at(name); };
  CHECK(g("free_frac_type0") == 1.0f);
  CHECK(g("free_frac_type1") == 0.0f);
  CHECK(g("free_frac") == 1.0f);
  CHECK(g("log_queue_len") == Approx(std::log1p(2.0)));
  CHECK(g("queued_gpus_frac") == Approx(0.75));
  CHECK(g("log_queued_gpu_h") == Approx(std::log1p(2.0 + 2.0)));
  CHECK(g("time_of_day_cos") == Approx(1.0));
  CHECK(g("price_now") == 0.0f);

  // Start b on {0}: at the same instant, a packed goes to node 1 ({2,3}), a first fit
  // takes {1,2} across both nodes, next to b.
  StepResult r = env.step(1);
  CHECK(r.reward == 0.0);  // no time passed
  obs.read(env);
  CHECK(env.simulator().now().seconds() == 0.0);
  info0 = env.candidate(0);
  info1 = env.candidate(1);
  CHECK(info0.job_id == "a");
  CHECK(info0.devices == std::vector<DeviceId>{2, 3});
  CHECK(info1.job_id == "a");
  CHECK(info1.option == PlacementOption::kFirstFit);
  CHECK(info1.devices == std::vector<DeviceId>{1, 2});
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 1, 0, 0, 1});
  CHECK(col(0, "shares_node") == 0.0f);
  CHECK(col(1, "shares_node") == 1.0f);
  CHECK(col(0, "log2_nodes") == 0.0f);
  CHECK(col(1, "log2_nodes") == 1.0f);
  CHECK(col(1, "opt_first_fit") == 1.0f);
  CHECK(col(1, "log_rank") == 0.0f);  // a is first in the queue now
  CHECK(g("free_frac") == Approx(0.75));
  CHECK(g("log_running") == Approx(std::log1p(1.0)));
  CHECK(g("log_running_mean_remaining_h") == Approx(std::log1p(2.0)));  // b: its 2 h estimate, untouched

  // Wait: the next decision point is c's arrival at t=10; a is still pending, c (4 GPUs) is
  // blocked and shown as one masked row.
  r = env.step(4);
  CHECK(env.simulator().now().seconds() == 10.0);
  CHECK(r.reward == Approx(-2.0 * 10.0 / 3600.0));  // a and b in the system for 10 s, in hours
  obs.read(env);
  CHECK(env.candidate(0).job_id == "a");
  CHECK(env.candidate(2).job_id == "c");
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 1, 0, 0, 1});
  CHECK(col(2, "blocked") == 1.0f);
  CHECK(col(2, "opt_packed") == 0.0f);
  CHECK(col(2, "gpus_frac") == 1.0f);
  CHECK(col(2, "log_rank") == Approx(std::log1p(1.0) / std::log1p(4.0)));
  CHECK(col(0, "log_age_h") == Approx(std::log1p(10.0 / 3600.0)));
}

TEST_CASE("Preemption rows offer running jobs, longest remaining run first, and preempt through the kernel", "[rl][env][preempt]") {
  test::TempDir dir;
  // One 4-GPU node, no physics (free checkpoints): long (2 GPUs, 3 h) and mid (2 GPUs, 1 h,
  // estimate 2 h) start at t=0; small (1 GPU, 60 s) arrives at t=100 and cannot start.
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s,estimate_s\n"
                                      "long,0,2,10800,\n"
                                      "mid,0,2,3600,7200\n"
                                      "small,100,1,60,\n");
  auto sc = scenario_from("cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 4}\nworkload: {trace: {path: " + trace +
                          "}}\ninformation: oracle\nenv: {max_candidates: 4, placements: [first_fit], preempt_rows: 2, preempt_min_run_s: 50}\n");
  const EnvConfig cfg = EnvConfig::from_scenario(*sc);
  REQUIRE(cfg.preempt_rows == 2);
  EnvConfig too_many = cfg;
  too_many.max_candidates = 2;  // e.g. a smaller K given from Python
  CHECK_THROWS_WITH(SchedulingEnv(sc, too_many), Catch::Contains("env.preempt_rows must be in 0..1 (fewer than max_candidates = 2), got 2"));
  SchedulingEnv env(sc, cfg);
  Obs obs(env.shape());
  JctSum jct;
  env.add_observer(jct);
  env.reset(1);
  auto col = [&](int row, const std::string& name) { return obs.cand_at(row, name); };
  double ret = env.step(0).reward;  // start long on {0,1}
  ret += env.step(0).reward;        // start mid on {2,3}
  // Both just started and are not preemptible before preempt_min_run_s (50 s): no legal
  // row, so the environment runs on by itself to the next decision point, small's arrival.
  CHECK(env.simulator().now().seconds() == 100.0);
  obs.read(env);
  // small cannot start (masked row); then the preemption rows, the longest estimated
  // remaining run first: long (3 h - 100 s), mid (its 2 h estimate x 3500/3600 left).
  CHECK(env.candidate(0).job_id == "small");
  CHECK(env.candidate(1).job_id == "long");
  CHECK(env.candidate(1).devices == std::vector<DeviceId>{0, 1});
  CHECK(env.candidate(2).job_id == "mid");
  CHECK(obs.mask == std::vector<std::uint8_t>{0, 1, 1, 0, 1});
  CHECK(col(1, "preempt") == 1.0f);
  CHECK(col(0, "preempt") == 0.0f);
  CHECK(col(1, "opt_first_fit") == 0.0f);
  CHECK(col(1, "log_est_runtime_h") == Approx(std::log1p((10800.0 - 100.0) / 3600.0)));
  CHECK(col(2, "log_est_runtime_h") == Approx(std::log1p(2.0 * 3500.0 / 3600.0)));
  CHECK(col(1, "shares_node") == 1.0f);  // mid runs on the same node
  CHECK(col(1, "speed_vs_best") == Approx(1.0));
  CHECK(col(2, "log_rank") == Approx(std::log1p(1.0) / std::log1p(4.0)));
  // Preempt mid: free checkpoint, so it is back in the queue at once and small can start
  // on mid's devices; mid is offered again (start rows) with its progress kept.
  ret += env.step(2).reward;
  CHECK(env.simulator().now().seconds() == 100.0);
  CHECK(env.simulator().stats().preemptions == 1);
  obs.read(env);
  CHECK(env.candidate(0).job_id == "mid");
  CHECK(env.candidate(0).option == PlacementOption::kFirstFit);
  CHECK(col(0, "preempt") == 0.0f);
  CHECK(col(0, "log_est_work_h") == Approx(std::log1p(2.0 * (3600.0 - 100.0) / 3600.0)));  // estimate x fraction left
  CHECK(env.candidate(1).job_id == "small");
  CHECK(env.candidate(2).job_id == "long");  // preemption rows: only long is running
  CHECK(env.candidate(3).job == kNoJob);
  ret += env.step(1).reward;  // small on {2}
  obs.read(env);
  // mid (2 GPUs) no longer fits the one free device: a masked row; long can be preempted,
  // small (just started) not yet.
  CHECK(env.candidate(0).job_id == "mid");
  CHECK(env.candidate(1).job_id == "long");
  CHECK(env.candidate(2).job == kNoJob);
  CHECK(obs.mask == std::vector<std::uint8_t>{0, 1, 0, 0, 1});
  // Wait: small ends at t=160, then mid restarts on {2,3}; run to the end.
  ret += env.step(4).reward;
  CHECK(env.simulator().now().seconds() == 160.0);
  while (!env.done()) {
    obs.read(env);
    int a = 4;  // wait, unless a start row is legal
    for (int i = 0; i < 4; ++i) {
      if (obs.mask[static_cast<std::size_t>(i)] && col(i, "preempt") == 0.0f) a = i;
    }
    ret += env.step(a).reward;
  }
  CHECK(env.simulator().stats().preemptions == 1);
  // mid: 100 s before, 3500 s after its restart at 160 s: ends at 3660 s.
  CHECK(jct.total_s == Approx(10800.0 + 3660.0 + 60.0));
  CHECK(ret == Approx(-jct.total_s / 3600.0).epsilon(1e-12));
}

TEST_CASE("Random actions with preemption rows keep every invariant", "[rl][env][preempt]") {
  auto sc = scenario_from(kHetero);
  EnvConfig cfg;
  cfg.check_invariants = true;
  cfg.max_candidates = 8;
  cfg.preempt_rows = 3;
  SchedulingEnv env(sc, cfg);
  Obs obs(env.shape());
  Rng rng(5, "test.actions");
  JctSum jct;
  env.add_observer(jct);
  std::uint64_t preempt_steps = 0;
  const auto preempt_col = static_cast<std::size_t>(Obs::column(SchedulingEnv::candidate_feature_names(), "preempt"));
  env.reset(2);
  double ret = 0.0;
  while (!env.done()) {
    obs.read(env);
    int preempt_rows_seen = 0;
    for (int i = 0; i < cfg.max_candidates; ++i) {
      const SchedulingEnv::CandidateInfo info = env.candidate(i);
      if (obs.cand[static_cast<std::size_t>(i) * kCandidateFeatures + preempt_col] == 1.0f) {
        // A preemption row shows a running job on the devices it holds.
        const JobState& j = env.simulator().job(info.job);
        CHECK(j.status == JobStatus::kRunning);
        CHECK(info.devices.size() == j.devices.size());
        ++preempt_rows_seen;
      } else if (info.job != kNoJob) {
        CHECK(preempt_rows_seen == 0);  // start rows come first
      }
    }
    CHECK(preempt_rows_seen <= cfg.preempt_rows);
    const int a = random_legal(obs.mask, rng);
    if (a < cfg.max_candidates && obs.cand[static_cast<std::size_t>(a) * kCandidateFeatures + preempt_col] == 1.0f) ++preempt_steps;
    ret += env.step(a).reward;
  }
  CHECK(env.jobs_completed() == 60);
  CHECK(preempt_steps > 20);
  CHECK(env.simulator().stats().preemptions == preempt_steps);
  CHECK(ret == Approx(-jct.total_s / 3600.0).epsilon(1e-9));
}

TEST_CASE("Price and carbon global features read the scenario's signals", "[rl][env]") {
  auto sc = scenario_from(std::string(kPlain) + R"(
signals:
  origin_utc: 2023-03-01T00:00:00Z
  price: 80
  carbon: {diurnal: {mean: 400, amplitude: 100, peak_hour_utc: 0}}
)");
  SchedulingEnv env(sc, EnvConfig{});
  Obs obs(env.shape());
  env.reset(1);
  obs.read(env);
  const double now_s = env.simulator().now().seconds();
  REQUIRE(now_s < 1800.0);  // the first arrival: within hour 0 (UTC)
  auto g = [&](const std::string& name) { return static_cast<double>(obs.global_at(name)); };
  const double pi = std::acos(-1.0);
  auto carbon = [&](int h) { return 400.0 + 100.0 * std::cos(2 * pi * (h + 0.5) / 24.0); };
  CHECK(g("price_now") == Approx(80.0 / 100.0));
  CHECK(g("price_forecast") == Approx(80.0 / 100.0));
  CHECK(g("carbon_now") == Approx(carbon(0) / 500.0));
  // The 6 h window [now, now + 6 h): the rest of hour 0, hours 1-5, then the start of hour 6.
  double sum = carbon(0) * (3600.0 - now_s) + carbon(6) * now_s;
  for (int h = 1; h <= 5; ++h) sum += carbon(h) * 3600.0;
  CHECK(g("carbon_forecast") == Approx(sum / (6 * 3600.0) / 500.0).epsilon(1e-5));
}

TEST_CASE("The observation takes any number of device types: the last free-fraction slot pools the fourth and later", "[rl][env]") {
  // Before, a cluster of more than 4 types was rejected by the environment but not by the
  // rl: policy, whose observation then wrote past 4-element arrays (an out-of-bounds write).
  std::string nodes;
  for (const char* type : {"H100-SXM", "A100-40GB", "V100", "A100-80GB", "L4", "T4"}) nodes += std::string("    - {count: 1, type: ") + type + ", devices_per_node: 4}\n";
  auto sc = scenario_from("seed: 1\ncluster:\n  nodes:\n" + nodes + R"(workload:
  synthetic:
    num_jobs: 30
    arrival: {process: poisson, mean_interarrival_s: 600}
    duration_s: {dist: lognormal, median: 1800, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.5}
)");
  SchedulingEnv env(sc, EnvConfig{});
  Obs obs(env.shape());
  env.reset(1);
  obs.read(env);
  // At the first decision nothing runs: every slot is wholly free.
  for (const char* name : {"free_frac_type0", "free_frac_type1", "free_frac_type2", "free_frac_type3"}) CHECK(obs.global_at(name) == 1.0f);
  // Start the first candidate, then slot 3 counts the free devices of types 3, 4 and 5 together.
  REQUIRE(obs.mask[0] == 1);
  env.step(0);
  obs.read(env);
  const ClusterState& state = env.simulator().cluster_state();
  int free_pooled = 0, free_first = 0;
  for (int n = 0; n < state.spec().num_nodes(); ++n) {
    if (state.spec().node(n).type_index >= 3) free_pooled += state.free_on_node(n);
    if (state.spec().node(n).type_index == 0) free_first += state.free_on_node(n);
  }
  CHECK(obs.global_at("free_frac_type3") == Approx(free_pooled / 12.0));
  CHECK(obs.global_at("free_frac_type0") == Approx(free_first / 4.0));
  // The episode runs to the end with random legal actions (under the sanitizers too).
  Rng rng(7, "test.actions");
  int steps = 0;
  while (!env.done()) {
    obs.read(env);
    std::vector<int> legal;
    for (int i = 0; i < static_cast<int>(obs.mask.size()); ++i)
      if (obs.mask[static_cast<std::size_t>(i)]) legal.push_back(i);
    REQUIRE(!legal.empty());
    env.step(legal[rng.below(legal.size())]);
    ++steps;
  }
  CHECK(env.simulator().stats().jobs_completed == 30);
  CHECK(steps >= 30);
}

TEST_CASE("Waiting under price/carbon signals stops at the next signal change", "[rl][env]") {
  // Hourly carbon steps from t=0 (00:00 UTC). Whenever the agent waits with jobs pending,
  // the next decision point is the next event or the next hour boundary, whichever comes
  // first; Poisson arrivals and completions never fall on a boundary by themselves.
  auto sc = scenario_from(std::string(kPlain) + R"(
signals:
  origin_utc: 2023-03-01T00:00:00Z
  carbon: {diurnal: {mean: 400, amplitude: 100, peak_hour_utc: 0}}
)");
  SchedulingEnv env(sc, EnvConfig{});
  Obs obs(env.shape());
  Rng rng(3, "test.actions");
  env.reset(1);
  const int wait = env.shape().num_candidates;
  int waits = 0, at_boundary = 0;
  while (!env.done()) {
    obs.read(env);
    const double t0 = env.simulator().now().seconds();
    const bool pending = env.simulator().num_pending() > 0;
    if (obs.mask[static_cast<std::size_t>(wait)] && pending && waits < 50) {
      const double boundary = (std::floor(t0 / 3600.0) + 1.0) * 3600.0;
      env.step(wait);
      ++waits;
      if (env.done()) break;
      CHECK(env.simulator().now().seconds() <= boundary);
      at_boundary += env.simulator().now().seconds() == boundary ? 1 : 0;
    } else {
      env.step(random_legal(obs.mask, rng));
    }
  }
  CHECK(waits == 50);
  CHECK(at_boundary > 0);
  CHECK(env.jobs_completed() == 80);
}

TEST_CASE("The candidate order decides which jobs fill the rows", "[rl][env]") {
  test::TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s,estimate_s\n"
                                      "big,0,2,600,\n"
                                      "long,0,1,9000,\n"
                                      "short,0,1,100,50\n");
  const std::string base = "cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 4}\nworkload: {trace: {path: " + trace + "}}\ninformation: oracle\n";
  auto first_ids = [&](const std::string& order) {
    auto sc = scenario_from(base + "env: {max_candidates: 3, placements: [first_fit], order: " + order + "}\n");
    SchedulingEnv env(sc, EnvConfig::from_scenario(*sc));
    env.reset(1);
    return env.candidate(0).job_id + "," + env.candidate(1).job_id + "," + env.candidate(2).job_id;
  };
  CHECK(first_ids("arrival") == "big,long,short");
  CHECK(first_ids("shortest_estimate") == "short,big,long");  // 50 (estimate), 600, 9000
  CHECK(first_ids("fewest_gpus") == "long,short,big");        // 1, 1 (arrival breaks the tie), 2
  CHECK(first_ids("least_attained") == "big,long,short");     // none has run: arrival order
}

TEST_CASE("least_attained order and, without duration information, the LAS victim first", "[rl][env][preempt]") {
  test::TempDir dir;
  // One 2-GPU node, no physics (free checkpoints), information none. 'a' (1 GPU) runs from
  // t=0 and 'b' (1 GPU) from t=600; 'c' arrives at t=1500 and finds the node full.
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s\n"
                                      "a,0,1,90000\n"
                                      "b,600,1,90000\n"
                                      "c,1500,1,90000\n");
  auto sc = scenario_from("cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 2}\nworkload: {trace: {path: " + trace +
                          "}}\ninformation: none\nenv: {max_candidates: 4, placements: [first_fit], order: least_attained, preempt_rows: 2, preempt_min_run_s: 100}\n");
  SchedulingEnv env(sc, EnvConfig::from_scenario(*sc));
  Obs obs(env.shape());
  env.reset(1);
  env.step(0);  // a
  CHECK(env.simulator().now().seconds() == 600.0);
  env.step(0);  // b
  CHECK(env.simulator().now().seconds() == 600.0);
  CHECK(env.candidate(0).job_id == "a");  // a's preemption row (held 600 s >= 100 s)
  env.step(4);  // wait: until c arrives
  CHECK(env.simulator().now().seconds() == 1500.0);
  obs.read(env);
  // c is blocked; the preemption rows: a (1500 s attained) before b (900 s), although
  // every estimated remaining time is 0 (unknown) under none.
  CHECK(env.candidate(0).job_id == "c");
  CHECK(env.candidate(1).job_id == "a");
  CHECK(env.candidate(2).job_id == "b");
  CHECK(obs.cand_at(1, "log_attained_h") == Approx(std::log1p(1500.0 / 3600.0)));
  CHECK(obs.cand_at(2, "log_attained_h") == Approx(std::log1p(900.0 / 3600.0)));
  CHECK(obs.cand_at(2, "log_attained_gpu_h") == Approx(std::log1p(900.0 / 3600.0)));
  CHECK(obs.cand_at(1, "log_est_work_h") == 0.0f);  // no duration information
  env.step(1);  // preempt a: free without physics, back in the queue at once
  obs.read(env);
  // least_attained: c (never ran) before a (1500 GPU-s), although a arrived first.
  CHECK(env.candidate(0).job_id == "c");
  CHECK(env.candidate(1).job_id == "a");
  CHECK(obs.cand_at(1, "log_attained_h") == Approx(std::log1p(1500.0 / 3600.0)));  // kept across the preemption
}

TEST_CASE("env.wake_every_s: waiting with jobs pending wakes the run a quantum later", "[rl][env]") {
  test::TempDir dir;
  // One GPU; 'long' runs from t=0 (5000 s), 'w' arrives at t=10 and cannot start. The agent
  // always waits while it may; a preemption row makes it a choice.
  const std::string trace = dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\nlong,0,1,5000\nw,10,1,100\n");
  const std::string base = "cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 1}\nworkload: {trace: {path: " + trace + "}}\n";
  auto asked_at = [&](const std::string& env_map) {
    auto sc = scenario_from(base + "env: " + env_map + "\n");
    SchedulingEnv env(sc, EnvConfig::from_scenario(*sc));
    env.reset(1);
    env.step(0);  // long
    std::vector<double> at;
    while (!env.done()) {
      if (env.simulator().num_pending() > 0) at.push_back(env.simulator().now().seconds());  // asked while w waits
      Obs obs(env.shape());
      obs.read(env);
      // Start w when it can; otherwise wait (never preempt: w's own row, once it runs, is one).
      int a = env.shape().num_candidates;
      if (env.simulator().num_pending() > 0 && env.candidate(0).job_id == "w" && obs.mask[0]) a = 0;
      env.step(a);
    }
    return at;
  };
  // Without a quantum the agent sees w's arrival, then long's end.
  CHECK(asked_at("{max_candidates: 3, preempt_rows: 1, preempt_min_run_s: 0}") == std::vector<double>{10.0, 5000.0});
  // With one, each wait brings it back 900 s later.
  CHECK(asked_at("{max_candidates: 3, preempt_rows: 1, preempt_min_run_s: 0, wake_every_s: 900}") ==
        std::vector<double>{10.0, 910.0, 1810.0, 2710.0, 3610.0, 4510.0, 5000.0});
  // Also while no row is legal (long not preemptible before 2000 s): the run wakes every
  // quantum by itself, so the agent is asked at 2710 s, the first wake after 2000 s.
  CHECK(asked_at("{max_candidates: 3, preempt_rows: 1, preempt_min_run_s: 2000, wake_every_s: 900}") ==
        std::vector<double>{2710.0, 3610.0, 4510.0, 5000.0});
  CHECK(asked_at("{max_candidates: 3, preempt_rows: 1, preempt_min_run_s: 2000}") == std::vector<double>{5000.0});
}

TEST_CASE("Waiting is masked when nothing else can happen", "[rl][env]") {
  test::TempDir dir;
  const std::string trace = dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\nx,0,1,100\n");
  auto sc = scenario_from("cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 2}\nworkload: {trace: {path: " + trace + "}}\n");
  SchedulingEnv env(sc, EnvConfig{});
  Obs obs(env.shape());
  env.reset(1);
  obs.read(env);
  // One job, no running job, no later arrival: wait would leave it waiting forever.
  CHECK(obs.mask[static_cast<std::size_t>(env.shape().num_candidates)] == 0);
  try {
    env.step(env.shape().num_candidates);
    FAIL("wait was accepted");
  } catch (const InvalidAction& e) {
    CHECK(std::string(e.what()).find("wait (illegal while jobs are pending and nothing else can happen)") != std::string::npos);
  }
  const StepResult r = env.step(0);
  CHECK(r.terminated);
  CHECK(r.reward == Approx(-100.0 / 3600.0));

  // The other terms: slowdown (100 s in the system / 100 s of work = 1) and makespan (100 s).
  EnvConfig weighted;
  weighted.reward.jobs_in_system = 0.0;
  weighted.reward.slowdown = 2.0;
  weighted.reward.makespan = 3.0;
  weighted.reward_scale = 1.0;
  SchedulingEnv env2(sc, weighted);
  env2.reset(1);
  CHECK(env2.step(0).reward == Approx(-2.0 * 1.0 - 3.0 * 100.0));
}

// The one wait rule the environment and the rl policy share (rl/env/mdp.hpp).
TEST_CASE("wait_is_legal: wait is illegal only while jobs are pending and nothing else can happen", "[rl][env]") {
  CHECK_FALSE(wait_is_legal(false, 0, 1));  // pending, nothing running, no event queued
  CHECK(wait_is_legal(true, 0, 1));         // an arrival, completion or wake-up will come
  CHECK(wait_is_legal(false, 1, 1));        // a job started this instant: its end comes
  CHECK(wait_is_legal(false, 0, 0));        // nothing pending
  CHECK(wait_is_legal(true, 2, 0));
}

TEST_CASE("bench env steps the built-in RL scenario", "[rl][vector][bench]") {
  const PolicyRegistry registry = builtin_policies();
  // The observation of old (the bench times the environment, its episode lengths are
  // those it was written for).
  const ScenarioConfig sc = load_rl_scenario("", {"workload.synthetic.num_jobs=30", "information=oracle"}, registry);
  CHECK(sc.name == "rl-default");
  EnvBenchOptions options;
  options.steps = 200;
  options.threads = 2;
  const EnvBenchResult r = run_env_bench(sc, options);
  CHECK(r.num_envs == 8);
  CHECK(r.env_steps == 1600);
  CHECK(r.episodes >= 8);  // 30-job episodes take far fewer than 200 steps
  CHECK(r.mean_episode_steps >= 30);
  CHECK(r.mean_jct_s > 0);
  CHECK(r.env_steps_per_s > 0);
}

TEST_CASE("The env map of a scenario is parsed strictly", "[rl][env][config]") {
  const std::string base = "cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 2}\nworkload: {synthetic: {num_jobs: 5}}\ninformation: oracle\n";
  auto cfg = EnvConfig::from_scenario(*scenario_from(base + "env: {max_candidates: 8, order: shortest_estimate, reward: {slowdown: 0.5}}\n"));
  CHECK(cfg.max_candidates == 8);
  CHECK(cfg.order == CandidateOrder::kShortestEstimate);
  CHECK(cfg.reward.slowdown == 0.5);
  CHECK(cfg.reward.jobs_in_system == 1.0);
  CHECK_THROWS_WITH(EnvConfig::from_scenario(*scenario_from(base + "env: {max_candidate: 8}\n")),
                    Catch::Contains("unknown key 'max_candidate'") && Catch::Contains("max_candidates"));
  CHECK_THROWS_WITH(EnvConfig::from_scenario(*scenario_from(base + "env: {placements: [packed, packed]}\n")), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(EnvConfig::from_scenario(*scenario_from(base + "env: {order: random}\n")), Catch::Contains("env.order"));
  CHECK_THROWS_WITH(EnvConfig::from_scenario(*scenario_from(base + "env: {max_candidates: 4, preempt_rows: 4}\n")),
                    Catch::Contains("env.preempt_rows: must be in 0..3 (fewer than max_candidates, so that rows remain for starts), got 4"));
  CHECK_THROWS_WITH(EnvConfig::from_scenario(*scenario_from(base + "env: {preempt_min_run_s: -1}\n")), Catch::Contains("env.preempt_min_run_s"));
}

TEST_CASE("The default RL scenario loads and an episode runs", "[rl][env]") {
  const PolicyRegistry registry = builtin_policies();
  auto sc = std::make_shared<const ScenarioConfig>(load_scenario(SCHEDSIM_SOURCE_DIR "/experiments/configs/rl_default.yaml", {}, std::nullopt, registry));
  SchedulingEnv env(sc, EnvConfig::from_scenario(*sc));
  Obs obs(env.shape());
  Rng rng(1, "test.actions");
  env.reset(1);
  while (!env.done()) {
    obs.read(env);
    env.step(random_legal(obs.mask, rng));
  }
  CHECK(env.jobs_completed() == 200);
  // At least one start per job; a random agent also moves jobs (rl_default has migration
  // rows, no preemption rows): a few steps per job, not thousands.
  CHECK(env.simulator().stats().preemptions == 0);
  CHECK(env.simulator().stats().moves > 0);
  CHECK(env.episode_steps() >= 200 + env.simulator().stats().moves);
  CHECK(env.episode_steps() <= 4000);
}

// Issue 27: uniformly random episodes of market_two_clouds (seeds 5-14) ended with "the
// simulation ended with N jobs left in the system": an agent waited while a spot change
// was still queued, the spot process stopped at it (no job coming, none running) without
// a decision point, and the run ran out of events with jobs pending. The kernel now makes
// that last instant a decision point, where wait is illegal.
TEST_CASE("An agent that waits whenever it may still finishes every job of market_two_clouds", "[rl][env][market]") {
  const PolicyRegistry registry = builtin_policies();
  auto sc = std::make_shared<const ScenarioConfig>(load_scenario(SCHEDSIM_SOURCE_DIR "/experiments/configs/market_two_clouds.yaml", {}, std::nullopt, registry));
  SchedulingEnv env(sc, EnvConfig::from_scenario(*sc));
  Obs obs(env.shape());
  const int wait = env.shape().num_candidates;
  for (const std::uint64_t seed : {5, 6}) {
    env.reset(seed);
    int forced = 0;  // decisions where wait was masked (the agent had to start a job)
    while (!env.done()) {
      obs.read(env);
      if (obs.mask[static_cast<std::size_t>(wait)]) {
        env.step(wait);
      } else {
        ++forced;
        const auto first = std::find(obs.mask.begin(), obs.mask.end(), std::uint8_t{1});
        env.step(static_cast<int>(first - obs.mask.begin()));
      }
    }
    CHECK(env.simulator().num_pending() == 0);
    CHECK(env.simulator().num_running() == 0);
    CHECK(env.jobs_completed() == 200u);
    // It waits while anything can still happen, so every job starts at a decision where
    // wait is masked: before the fix the first such decision never came.
    CHECK(forced == 200);
  }
}

}  // namespace schedsim::rl

namespace schedsim::rl {

TEST_CASE("Cooling rows: set-points as actions with their features, only with a thermal model", "[rl][env][thermal]") {
  test::TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s\n"
                                      "a,0,1,600\n"
                                      "b,100,1,600\n");
  const std::string world = "cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 4}\nworkload: {trace: {path: " + trace + "}}\n";
  const std::string thermal = "energy: {thermal: {outside_c: 20, setpoint_c: 22, setpoint_range_c: [18, 35]}}\n";
  auto sc = scenario_from(world + thermal + "env: {max_candidates: 4, placements: [first_fit], cooling_setpoints: [22, 30]}\n");
  const EnvConfig cfg = EnvConfig::from_scenario(*sc);
  SchedulingEnv env(sc, cfg);
  CHECK(env.shape().candidate_features == kCandidateFeatures + 2);
  CHECK(env.shape().global_features == kGlobalFeatures + 3);
  const std::vector<std::string> cols = env.candidate_columns(), globals = env.global_columns();
  REQUIRE(cols.size() == static_cast<std::size_t>(kCandidateFeatures + 2));
  CHECK(cols[kCandidateFeatures] == "cooling");
  CHECK(globals[16] == "outside_temp");
  env.reset(1);
  Obs obs(env.shape());
  obs.read(env);
  const int f = env.shape().candidate_features;
  // Row 0 starts job a; rows 1 and 2 offer 22 °C (in force: masked) and 30 °C.
  CHECK(env.candidate(0).job_id == "a");
  CHECK(env.candidate(1).cooling);
  CHECK(env.candidate(2).setpoint_c == 30);
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 0, 1, 0, 1});
  CHECK(obs.cand[static_cast<std::size_t>(2 * f + kCandidateFeatures)] == 1.0f);
  CHECK(obs.cand[static_cast<std::size_t>(2 * f + kCandidateFeatures + 1)] == Approx(30.0 / 40));
  CHECK(obs.cand[static_cast<std::size_t>(0 * f + kCandidateFeatures)] == 0.0f);
  // 20 °C outside, 22 °C set-point, no economizer: lift 13 K, COP 0.5 x 295.15 / 13.
  CHECK(obs.global[16] == Approx(20.0 / 40));
  CHECK(obs.global[17] == Approx(22.0 / 40));
  CHECK(obs.global[18] == Approx(0.05 + 13 / (0.5 * 295.15)).epsilon(1e-6));
  env.step(2);  // 30 °C everywhere, at the same instant
  CHECK(env.simulator().view().thermal()->setpoint_c(0) == 30);
  CHECK(env.simulator().now().seconds() == 0);
  obs.read(env);
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 0, 0, 0, 1});  // one set-point change per instant
  CHECK(obs.global[17] == Approx(30.0 / 40));
  CHECK_THROWS_WITH(env.step(1), Catch::Contains("masked") && Catch::Contains("cooling set-point"));
  // The energy reward term: with only it, the return is minus the facility energy. At
  // 30 °C the 20 °C outside air cools for free (fans only): PUE 1.05 throughout. Jobs a
  // (0-600 s) and b (100-700 s) on four V100s (idle 40 W, busy 300 W).
  EnvConfig priced = cfg;
  priced.reward.jobs_in_system = 0;
  priced.reward.energy_kwh = 1;
  SchedulingEnv green(sc, priced);
  green.reset(1);
  double ret = green.step(2).reward;  // 30 °C
  ret += green.step(0).reward;        // start a; nothing else to choose until b arrives
  CHECK(green.simulator().now().seconds() == 100);
  ret += green.step(0).reward;  // start b
  while (!green.done()) ret += green.step(4).reward;
  CHECK(ret == Approx(-(4 * 40.0 * 700 + 260.0 * 1200) * 1.05 / 3.6e6).epsilon(1e-12));
  CHECK(ret == Approx(green.episode_return()).epsilon(1e-12));
  EnvConfig no_meter = priced;
  no_meter.cooling_setpoints_c.clear();
  CHECK_THROWS_WITH(SchedulingEnv(scenario_from(world), no_meter), Catch::Contains("env.reward.energy_kwh needs an `energy:` map"));
  // Off by default: the shapes of a scenario without the family.
  SchedulingEnv plain(scenario_from(world + thermal), EnvConfig{});
  CHECK(plain.shape().candidate_features == kCandidateFeatures);
  CHECK(plain.shape().global_features == kGlobalFeatures);
  // Errors: no thermal model; a set-point outside the range.
  CHECK_THROWS_WITH(SchedulingEnv(scenario_from(world), cfg), Catch::Contains("env.cooling_setpoints needs a thermal model"));
  EnvConfig hot = cfg;
  hot.cooling_setpoints_c = {22, 40};
  CHECK_THROWS_WITH(SchedulingEnv(sc, hot), Catch::Contains("40.000000 °C is outside energy.thermal's setpoint_range_c [18.000000, 35.000000]"));
}

TEST_CASE("env: a scenario with inference services is refused, not trained on without them", "[rl][env][world]") {
  const std::string services =
      "inference:\n  services:\n    - {name: chat, rate: {diurnal: {mean_rps: 5}}, capacity_rps: {V100: 10}, slo_p99_s: 1, max_replicas: 2}\n";
  CHECK_THROWS_MATCHES(SchedulingEnv(scenario_from(std::string(kPlain) + services), EnvConfig{}), InputError,
                       Catch::Message("test scenario: inference: the RL environment does not run inference services (their autoscaler is a policy "
                                      "decorator, which the environment's stepping has no place for); train without `inference:` and evaluate the "
                                      "agent on it with `schedsim run` or `compare` (policy rl:PATH), where the services run"));
}


TEST_CASE("env.reward.preemption_s charges each chosen preemption in the return: the closed form", "[rl][env][preempt][reward]") {
  // The scenario of the preemption-rows case above, with a preemption cost of 1800 s of
  // JCT: the same decisions (mid preempted once at t=100) give the same JCTs and a return
  // of -(sum of JCTs + 1 x 1800 s) / 3600. Without the key the return is -(sum of JCTs).
  test::TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s,estimate_s\n"
                                      "long,0,2,10800,\n"
                                      "mid,0,2,3600,7200\n"
                                      "small,100,1,60,\n");
  auto episode = [&](const std::string& reward) {
    auto sc = scenario_from("cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 4}\nworkload: {trace: {path: " + trace +
                            "}}\ninformation: oracle\nenv: {max_candidates: 4, placements: [first_fit], preempt_rows: 2, preempt_min_run_s: 50" + reward + "}\n");
    const EnvConfig cfg = EnvConfig::from_scenario(*sc);
    SchedulingEnv env(sc, cfg);
    Obs obs(env.shape());
    JctSum jct;
    env.add_observer(jct);
    env.reset(1);
    double ret = env.step(0).reward;  // long
    ret += env.step(0).reward;        // mid
    REQUIRE(env.candidate(2).job_id == "mid");
    ret += env.step(2).reward;  // preempt mid at t=100
    ret += env.step(1).reward;  // small
    while (!env.done()) {
      obs.read(env);
      int a = 4;
      for (int i = 0; i < 4; ++i) {
        if (obs.mask[static_cast<std::size_t>(i)] && obs.cand_at(i, "preempt") == 0.0f) a = i;
      }
      ret += env.step(a).reward;
    }
    CHECK(env.simulator().stats().preemptions == 1);
    CHECK(jct.total_s == Approx(10800.0 + 3660.0 + 60.0));
    return std::make_pair(ret, jct.total_s);
  };
  const auto [free_ret, free_jct_s] = episode("");
  CHECK(free_ret == Approx(-free_jct_s / 3600.0).epsilon(1e-12));
  const auto [cost_ret, cost_jct_s] = episode(", reward: {preemption_s: 1800}");
  CHECK(cost_jct_s == free_jct_s);
  CHECK(cost_ret == Approx(-(cost_jct_s + 1800.0) / 3600.0).epsilon(1e-12));
  CHECK(EnvConfig::parse(ConfigNode::load_string("{}", "e.yaml")).reward.preemption_s == 0.0);
  CHECK_THROWS_WITH(EnvConfig::parse(ConfigNode::load_string("{reward: {preemption_s: -1}}", "e.yaml")), Catch::Contains("reward.preemption_s"));
}

TEST_CASE("Migration rows move a running job to faster free devices through the kernel", "[rl][env][migrate]") {
  test::TempDir dir;
  // One H100 and one V100 (physics on). 'b' takes the H100 at t=0; 'a' arrives at t=10 and
  // can only start on the V100. When 'b' ends, the H100 is free and 'a' (which has held its
  // V100 longer than preempt_min_run_s 100) is offered a move there.
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,submit_time_s,num_gpus,duration_s,model\n"
                                      "b,0,1,1000,ResNet-50\n"
                                      "a,10,1,36000,ResNet-50\n");
  auto sc = scenario_from(
      "cluster:\n  nodes:\n    - {count: 1, type: H100-SXM, devices_per_node: 1}\n    - {count: 1, type: V100, devices_per_node: 1}\n"
      "workload: {trace: {path: " + trace + "}}\nphysics: {reference_device: V100}\n"
      "env: {max_candidates: 4, placements: [packed], migrate_rows: 1, preempt_min_run_s: 100}\n");
  const EnvConfig cfg = EnvConfig::from_scenario(*sc);
  REQUIRE(cfg.migrate_rows == 1);
  CHECK(cfg.migrate_min_gain == 0.25);
  EnvConfig too_many = cfg;
  too_many.max_candidates = 1;
  CHECK_THROWS_WITH(SchedulingEnv(sc, too_many), Catch::Contains("env.migrate_rows must be in 0..0 (preempt_rows + migrate_rows fewer than max_candidates = 1), got 1"));
  SchedulingEnv env(sc, cfg);
  REQUIRE(env.shape().candidate_features == kCandidateFeatures);
  Obs obs(env.shape());
  auto col = [&](int row, const std::string& name) { return obs.cand_at(row, name); };
  env.reset(1);
  const DeviceId h100 = 0, v100 = 1;  // node order
  REQUIRE(env.candidate(0).job_id == "b");
  REQUIRE(env.candidate(0).devices == std::vector<DeviceId>{h100});
  env.step(0);  // b on the H100
  CHECK(env.simulator().now().seconds() == 10.0);
  obs.read(env);
  REQUIRE(env.candidate(0).job_id == "a");
  REQUIRE(env.candidate(0).devices == std::vector<DeviceId>{v100});
  CHECK(col(0, "migrate") == 0.0f);
  env.step(0);  // a on the V100; nothing else to do until b ends
  const double b_end_s = env.simulator().now().seconds();
  CHECK(b_end_s > 110.0);
  obs.read(env);
  // The migration row: a, to the H100, with its gain over the V100.
  const auto* physics_model = dynamic_cast<const ClusterPhysics*>(env.simulator().view().physics());
  REQUIRE(physics_model != nullptr);
  const ClusterPhysics& physics = *physics_model;
  const JobSlot a_slot = env.candidate(0).job;
  const JobView a = env.simulator().view().job(a_slot);
  const double on_v100 = SchedulerView::uncontended_rate(physics, a, Span<DeviceId>(&v100, 1));
  const double on_h100 = SchedulerView::uncontended_rate(physics, a, Span<DeviceId>(&h100, 1));
  REQUIRE(on_h100 > 1.25 * on_v100);
  CHECK(env.candidate(0).job_id == "a");
  CHECK(env.candidate(0).devices == std::vector<DeviceId>{h100});
  CHECK(obs.mask == std::vector<std::uint8_t>{1, 0, 0, 0, 1});
  CHECK(col(0, "migrate") == 1.0f);
  CHECK(col(0, "preempt") == 0.0f);
  CHECK(col(0, "opt_packed") == 0.0f);  // not a start
  CHECK(col(0, "log_migrate_gain") == Approx(std::log(on_h100 / on_v100)));
  CHECK(col(0, "speed_vs_best") == Approx(1.0));  // the H100 is a's best type
  CHECK(col(0, "log_attained_h") == Approx(std::log1p((b_end_s - 10.0) * on_v100 / 3600.0)).epsilon(1e-5));
  env.step(0);
  CHECK(env.simulator().stats().moves == 1);
  CHECK(env.simulator().job(a_slot).devices == std::vector<DeviceId>{h100});
  // Finishes on the H100: no further row (nothing faster is free), the episode ends.
  while (!env.done()) {
    obs.read(env);
    for (int i = 0; i < 4; ++i) CHECK(col(i, "migrate") == 0.0f);
    env.step(4);
  }
  CHECK(env.simulator().stats().moves == 1);
}

TEST_CASE("Random actions with migration and preemption rows keep every invariant", "[rl][env][migrate]") {
  auto sc = scenario_from(kHetero);
  EnvConfig cfg;
  cfg.check_invariants = true;
  cfg.max_candidates = 10;
  cfg.preempt_rows = 2;
  cfg.migrate_rows = 3;
  cfg.migrate_min_gain = 0.1;
  SchedulingEnv env(sc, cfg);
  Obs obs(env.shape());
  Rng rng(9, "test.actions");
  JctSum jct;
  env.add_observer(jct);
  const auto migrate_col = static_cast<std::size_t>(Obs::column(SchedulingEnv::candidate_feature_names(), "migrate"));
  std::uint64_t migrate_steps = 0;
  env.reset(4);
  double ret = 0.0;
  while (!env.done()) {
    obs.read(env);
    int migrate_rows_seen = 0;
    for (int i = 0; i < cfg.max_candidates; ++i) {
      if (obs.cand[static_cast<std::size_t>(i) * kCandidateFeatures + migrate_col] != 1.0f) continue;
      ++migrate_rows_seen;
      const SchedulingEnv::CandidateInfo info = env.candidate(i);
      const JobState& j = env.simulator().job(info.job);
      CHECK(j.status == JobStatus::kRunning);
      CHECK(info.devices.size() == j.devices.size());
      for (DeviceId d : info.devices) CHECK(env.simulator().view().cluster_state().is_free(d));  // moves to free devices only
    }
    CHECK(migrate_rows_seen <= cfg.migrate_rows);
    const int a = random_legal(obs.mask, rng);
    if (a < cfg.max_candidates && obs.cand[static_cast<std::size_t>(a) * kCandidateFeatures + migrate_col] == 1.0f) ++migrate_steps;
    ret += env.step(a).reward;
  }
  CHECK(env.jobs_completed() == 60);
  CHECK(migrate_steps > 5);
  CHECK(env.simulator().stats().moves == migrate_steps);
  CHECK(ret == Approx(-jct.total_s / 3600.0).epsilon(1e-9));
}

}  // namespace schedsim::rl
