#include "rl/env/scheduling_env.hpp"

#include <cmath>
#include <cstring>

#include "scenario/simulation_setup.hpp"
#include "rl/env/candidates.hpp"
#include "rl/env/features.hpp"
#include "rl/env/mdp.hpp"
#include "world/energy/energy.hpp"
#include "sim/invariant_checker.hpp"
#include "base/signals.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim::rl {

EnvConfig EnvConfig::from_scenario(const ScenarioConfig& scenario) {
  EnvConfig c = scenario.env ? *scenario.env : EnvConfig{};  // parsed with the scenario (scenario/sections/env_section.cpp)
  c.information = scenario.information.with_seed(scenario.seed);
  c.check_information("the RL environment");
  return c;
}

// Beside from_scenario: it checks the scenario's information model, which is no env: key.
void EnvConfig::check_information(const std::string& who) const {
  if (order == CandidateOrder::kShortestEstimate) information.require_durations_at(who, "env.order: shortest_estimate");
}

Tick signal_wake(const SchedulerView& view) {
  const GridSignals* signals = view.signals();
  if (!signals || view.num_pending() == 0) return Tick::max();
  return signals->next_change(view.now());
}

void check_cooling(const ScenarioConfig& scenario, const EnvConfig& config) {
  std::vector<CoolingRange> ranges;
  if (scenario.energy && scenario.energy->thermal) ranges.push_back({"energy.thermal", scenario.energy->thermal->min_setpoint_c, scenario.energy->thermal->max_setpoint_c});
  if (scenario.datacenters) {
    for (const DatacenterConfig& dc : scenario.datacenters->sites) {
      if (dc.thermal) ranges.push_back({"datacenter '" + dc.name + "'", dc.thermal->min_setpoint_c, dc.thermal->max_setpoint_c});
    }
  }
  check_cooling_setpoints(config.cooling_setpoints_c, ranges, scenario.source);
}

namespace {

// Sums the slowdowns of the jobs that end, for the slowdown reward term. The reward is
// the environment's, not the agent's observation: it may use the true duration (known once
// the job has ended), whatever the information level.
class SlowdownMeter : public Observer {
 public:
  void on_job_end(const JobState& j) override {
    sum += (j.end - j.spec.submit).seconds() / j.spec.duration_s;
    ++jobs;
  }
  double sum = 0.0;
  std::uint64_t jobs = 0;
};

}  // namespace

struct SchedulingEnv::Impl {
  std::shared_ptr<const ScenarioConfig> scenario;
  EnvConfig config;
  EnvShape shape;
  PendingQueue queue;
  SlowdownMeter meter;
  InvariantChecker checker;
  std::vector<Observer*> observers;  // the caller's, attached to every episode
  std::vector<std::string> warnings;
  // Declared in dependency order: the simulator refers to the setup, the MDP's candidate
  // builder to both.
  std::unique_ptr<SimulationSetup> setup;
  MdpStep mdp;
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<EnergyMeter> energy;  // only with an energy reward weight
  mutable FeatureLogCache feature_logs;  // saves work only: write_observation's output is the same without it
  ActionBatch batch;
  std::uint64_t seed = 0;
  std::uint64_t steps = 0;
  double episode_return = 0.0;
  double carry = 0.0;  // reward accrued while reset() ran to the first choice
  bool terminated = false;
  bool truncated = false;

  Impl(std::shared_ptr<const ScenarioConfig> s, EnvConfig c)
      : scenario(std::move(s)), config(std::move(c)), queue(config.order, config.information), mdp(config) {}

  void finish() {
    mdp.clear();
    terminated = true;
    if (sim->num_pending() > 0 || sim->num_running() > 0) {
      throw InvariantError("the simulation ended with " + std::to_string(sim->num_pending() + sim->num_running()) + " jobs left in the system");
    }
  }

  // Builds the candidates at the current decision point; while none is legal, lets the
  // simulator run on (a "wait" the agent is not asked for).
  void run_until_choice() {
    while (true) {
      // (rl/env/mdp.hpp: wait is illegal while the episode would end with jobs unfinished.)
      if (mdp.build(sim->view(), queue, sim->has_future_events())) return;
      if (!mdp.wait_legal()) {
        const JobState& j = sim->job(std::get<2>(*queue.jobs().begin()));
        throw PolicyError("RL environment at t=" + format_seconds(sim->now()) + " s: " + std::to_string(sim->num_pending()) +
                          " jobs are pending, none of the first " + std::to_string(config.max_scan) +
                          " can start on any placement option and nothing else will happen (first: job '" + j.spec.id + "' asking for " +
                          std::to_string(j.spec.num_gpus) + " GPUs); check the job's memory against the device types");
      }
      const Tick wake = mdp.quantum_wake(sim->view());
      if (wake != Tick::max()) {
        batch.clear();
        batch.wake_at(wake);
        sim->apply(batch);
      }
      if (!sim->advance()) {
        finish();
        return;
      }
    }
  }

  // Facility energy metered so far (0 without the energy term).
  double energy_kwh() const { return energy ? energy->totals().facility.energy_kwh : 0.0; }

  // The time-integral terms accrue inside advance(); the step's reward is their change.
  double reward_since(double integral_before_s, Tick time_before, double slowdown_before, double energy_before_kwh) const {
    const RewardWeights& w = config.reward;
    const double jobs_s = sim->job_seconds_in_system() - integral_before_s;
    const double dt_s = (sim->now() - time_before).seconds();
    return -(w.jobs_in_system * jobs_s + w.makespan * dt_s) * config.reward_scale - w.slowdown * (meter.sum - slowdown_before) -
           w.energy_kwh * (energy_kwh() - energy_before_kwh);
  }
};

SchedulingEnv::SchedulingEnv(std::shared_ptr<const ScenarioConfig> scenario, EnvConfig config)
    : impl_(std::make_unique<Impl>(std::move(scenario), std::move(config))) {
  Impl& m = *impl_;
  if (!m.scenario) throw InputError("RL environment", "no scenario given");
  // The environment steps the kernel itself, with no slot for the services' autoscaler:
  // refused rather than training in a world without the services the scenario declares.
  if (m.scenario->inference) {
    throw InputError(m.scenario->source, "inference: the RL environment does not run inference services (their autoscaler is a policy decorator, which the "
                                         "environment's stepping has no place for); train without `inference:` and evaluate the agent on it with "
                                         "`schedsim run` or `compare` (policy rl:PATH), where the services run");
  }
  if (m.config.max_candidates < 1) throw InputError(m.scenario->source, "env.max_candidates must be at least 1");
  if (m.config.placements.empty()) throw InputError(m.scenario->source, "env.placements must name at least one placement option");
  if (m.config.preempt_rows < 0 || m.config.preempt_rows >= m.config.max_candidates) {
    throw InputError(m.scenario->source, "env.preempt_rows must be in 0.." + std::to_string(m.config.max_candidates - 1) +
                                             " (fewer than max_candidates = " + std::to_string(m.config.max_candidates) + "), got " +
                                             std::to_string(m.config.preempt_rows));
  }
  if (m.config.migrate_rows < 0 || m.config.preempt_rows + m.config.migrate_rows >= m.config.max_candidates) {
    throw InputError(m.scenario->source, "env.migrate_rows must be in 0.." + std::to_string(m.config.max_candidates - 1 - m.config.preempt_rows) +
                                             " (preempt_rows + migrate_rows fewer than max_candidates = " + std::to_string(m.config.max_candidates) +
                                             "), got " + std::to_string(m.config.migrate_rows));
  }
  if (m.config.reward.energy_kwh > 0 && !m.scenario->energy) {
    throw InputError(m.scenario->source, "env.reward.energy_kwh needs an `energy:` map (the meter whose facility energy it charges)");
  }
  if (!m.config.cooling_setpoints_c.empty()) {
    if (m.config.preempt_rows + m.config.migrate_rows + static_cast<int>(m.config.cooling_setpoints_c.size()) >= m.config.max_candidates) {
      throw InputError(m.scenario->source, "env.preempt_rows + env.migrate_rows + the number of env.cooling_setpoints must be below max_candidates (" +
                                               std::to_string(m.config.max_candidates) + "), so that rows remain for starts");
    }
    check_cooling(*m.scenario, m.config);
  }
  m.shape.num_candidates = m.config.max_candidates;
  m.shape.candidate_features = candidate_feature_count(m.config);
  m.shape.global_features = global_feature_count(m.config);
}

SchedulingEnv::~SchedulingEnv() = default;

const EnvShape& SchedulingEnv::shape() const { return impl_->shape; }
std::vector<std::string> SchedulingEnv::candidate_feature_names() { return rl::candidate_feature_names(); }
std::vector<std::string> SchedulingEnv::global_feature_names() { return rl::global_feature_names(); }
std::vector<std::string> SchedulingEnv::candidate_columns() const { return rl::candidate_feature_names(!impl_->config.cooling_setpoints_c.empty()); }
std::vector<std::string> SchedulingEnv::global_columns() const { return rl::global_feature_names(!impl_->config.cooling_setpoints_c.empty()); }

void SchedulingEnv::reset(std::uint64_t seed) {
  Impl& m = *impl_;
  m.energy.reset();
  m.sim.reset();
  m.mdp.reset(nullptr);
  m.setup.reset();
  m.queue.clear();
  m.warnings.clear();
  m.meter = SlowdownMeter{};
  m.checker = InvariantChecker{};
  m.setup = std::make_unique<SimulationSetup>(*m.scenario, seed, m.warnings);
  m.mdp.reset(std::make_unique<CandidateBuilder>(m.config, m.setup->cluster(), m.setup->physics(), m.setup->simulator_options().node_group,
                                                  m.scenario->accelerators));
  m.sim = m.setup->make_simulator(m.queue);
  if (m.config.check_invariants) m.sim->add_observer(m.checker);
  m.sim->add_observer(m.meter);
  if (m.config.reward.energy_kwh > 0) {
    m.energy = m.setup->make_energy_meter(*m.sim);
    m.sim->add_observer(*m.energy);
  }
  for (Observer* o : m.observers) m.sim->add_observer(*o);
  m.seed = seed;
  m.steps = 0;
  m.episode_return = 0.0;
  m.terminated = false;
  m.truncated = false;
  if (!m.sim->advance()) {
    m.finish();
  } else {
    m.run_until_choice();
  }
  // Jobs may be in the system before the first choice (when none could start at once):
  // their share of the reward goes to the first step, so the return still sums to
  // -total JCT. The makespan term counts from the first choice.
  m.carry = -m.config.reward.jobs_in_system * m.sim->job_seconds_in_system() * m.config.reward_scale - m.config.reward.slowdown * m.meter.sum -
            m.config.reward.energy_kwh * m.energy_kwh();
}

StepResult SchedulingEnv::step(int action) {
  Impl& m = *impl_;
  if (!m.sim) throw InvalidAction("SchedulingEnv::step called before reset()");
  if (m.terminated || m.truncated) throw InvalidAction("SchedulingEnv::step called after the episode ended; call reset()");
  const int k = m.config.max_candidates;
  if (action < 0 || action > k) {
    throw InvalidAction("action " + std::to_string(action) + " is out of range: 0.." + std::to_string(k - 1) + " start a candidate, " +
                        std::to_string(k) + " waits (mask " + m.mdp.mask_string() + ")");
  }
  if (!m.mdp.legal(action)) {
    const std::string what = action == k ? "wait (illegal while jobs are pending and nothing else can happen)"
                             : action < m.mdp.rows() && m.mdp.candidates()[static_cast<std::size_t>(action)].cooling
                                 ? "candidate " + std::to_string(action) + " (a cooling set-point already in force or already changed at this instant)"
                             : action < m.mdp.rows() ? "candidate " + std::to_string(action) + " (its job cannot start now)"
                                               : "candidate " + std::to_string(action) + " (a padding row)";
    throw InvalidAction("action " + std::to_string(action) + " is masked: " + what + "; mask over actions 0.." + std::to_string(k) +
                        ", the last one wait: " + m.mdp.mask_string());
  }
  const double integral_before = m.sim->job_seconds_in_system();
  const Tick time_before = m.sim->now();
  const double slowdown_before = m.meter.sum;
  const double energy_before = m.energy_kwh();
  m.batch.clear();
  m.mdp.decode(action, m.sim->view(), m.batch);
  const bool preempts = action < k && m.mdp.candidates()[static_cast<std::size_t>(action)].preempt;
  if (action < k) {
    m.sim->apply(m.batch);
    m.mdp.commit(action, m.sim->now(), m.queue);
    m.run_until_choice();
  } else {
    if (m.batch.wake_time() != Tick::max()) m.sim->apply(m.batch);  // a signal change to wake at
    if (!m.sim->advance()) {
      m.finish();
    } else {
      m.run_until_choice();
    }
  }
  StepResult r;
  r.reward = m.reward_since(integral_before, time_before, slowdown_before, energy_before) + m.carry;
  if (preempts) r.reward -= m.config.reward.preemption_s * m.config.reward_scale;  // env.reward.preemption_s
  m.carry = 0.0;
  ++m.steps;
  m.episode_return += r.reward;
  r.terminated = m.terminated;
  if (!r.terminated && m.config.max_steps > 0 && m.steps >= static_cast<std::uint64_t>(m.config.max_steps)) m.truncated = true;
  r.truncated = m.truncated;
  return r;
}

void SchedulingEnv::write_observation(float* candidates, float* global, std::uint8_t* mask) const {
  const Impl& m = *impl_;
  const int k = m.config.max_candidates;
  std::memset(candidates, 0, sizeof(float) * static_cast<std::size_t>(k) * static_cast<std::size_t>(m.shape.candidate_features));
  std::memset(global, 0, sizeof(float) * static_cast<std::size_t>(m.shape.global_features));
  std::memset(mask, 0, static_cast<std::size_t>(k) + 1);
  mask[k] = 1;
  if (!m.sim || m.terminated) return;
  m.mdp.write_observation(m.sim->view(), m.queue, candidates, global, mask, &m.feature_logs);
}

void SchedulingEnv::add_observer(Observer& observer) { impl_->observers.push_back(&observer); }

bool SchedulingEnv::done() const { return impl_->terminated || impl_->truncated; }

const Simulator& SchedulingEnv::simulator() const {
  if (!impl_->sim) throw InvalidAction("SchedulingEnv::simulator called before reset()");
  return *impl_->sim;
}

std::uint64_t SchedulingEnv::episode_steps() const { return impl_->steps; }
std::uint64_t SchedulingEnv::episode_seed() const { return impl_->seed; }
double SchedulingEnv::episode_return() const { return impl_->episode_return; }
double SchedulingEnv::total_jct_s() const { return impl_->sim ? impl_->sim->job_seconds_in_system() : 0.0; }
std::uint64_t SchedulingEnv::jobs_completed() const { return impl_->sim ? impl_->sim->stats().jobs_completed : 0; }
const EnvConfig& SchedulingEnv::config() const { return impl_->config; }

const CandidateStats& SchedulingEnv::candidate_stats() const {
  if (!impl_->mdp.has_builder()) throw InvalidAction("SchedulingEnv::candidate_stats called before reset()");
  return impl_->mdp.builder().stats();
}

std::uint64_t SchedulingEnv::placement_claims() const { return impl_->mdp.has_builder() ? impl_->mdp.builder().index_claims() : 0; }

SchedulingEnv::CandidateInfo SchedulingEnv::candidate(int i) const {
  const Impl& m = *impl_;
  if (i < 0 || i >= m.config.max_candidates) {
    throw InvalidAction("candidate " + std::to_string(i) + " is out of range 0.." + std::to_string(m.config.max_candidates - 1));
  }
  CandidateInfo info;
  if (!m.sim || m.terminated || i >= m.mdp.rows()) return info;
  const Candidate& c = m.mdp.candidates()[static_cast<std::size_t>(i)];
  info.legal = c.legal;
  info.job = c.job;
  info.cooling = c.cooling;
  info.setpoint_c = c.setpoint_c;
  if (c.cooling) return info;
  info.job_id = m.sim->job(c.job).spec.id;
  info.option = c.option;
  info.devices = c.devices;
  return info;
}

}  // namespace schedsim::rl
