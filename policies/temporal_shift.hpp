// carbon-aware and price-aware: temporal shifting in front of any other policy (the
// `base`, default fifo; e.g. {name: compose, order: sjf}). When a job first enters the
// queue, the policy reads the signal's forecast and picks the start instant within the
// job's slack that minimises the mean signal over the job's estimated run [t, t + est]:
// now, or a later step boundary of the signal. The job is held back until then and only
// then handed to the base policy, which orders and places it as usual (so the time it
// then waits for devices adds to the shift). Jobs back in the queue after a preemption
// go straight to the base.
//
// Slack (how late a job may start, from its submission): a job with a deadline, when
// use_deadlines is on, may start as late as deadline - estimate; any other job of a
// deferrable group gets slack_s + slack_factor x estimate. The estimate is the job's
// runtime estimate, or its duration when it has none.
#pragma once

#include <functional>

#include "policies/registry.hpp"
#include "sim/policy.hpp"
#include "base/signals.hpp"

namespace schedsim {

PolicyInfo carbon_aware_policy_info();
PolicyInfo price_aware_policy_info();

// The best start in {now} U {signal steps <= latest} for a run of `estimate_s` seconds:
// the start, the forecast mean signal over [start, start + estimate] and the same mean
// for starting now (ties: the earliest start). With `feasible`, only starts it accepts
// count (found = false when none does).
struct ShiftWindow {
  Tick start;
  double mean = 0.0;
  double now_mean = 0.0;
  bool found = true;
};
ShiftWindow best_window(const GridSignals& signals, SignalKind kind, Tick now, Tick latest, double estimate_s, double horizon_s,
                        const std::function<bool(Tick)>& feasible = nullptr);

// The signals that apply to `job`: its home datacenter's with several datacenters, else
// the run's (may be null).
const GridSignals* job_signals(const SchedulerView& view, const JobView& job);

// For tests: the start instant (simulated time) the policy would pick for a job queued
// at `now` with run-time estimate `estimate_s` and latest start `latest`, given
// `signals` (min_saving as in the options).
Tick best_start(const GridSignals& signals, SignalKind kind, Tick now, Tick latest, double estimate_s, double horizon_s, double min_saving);

}  // namespace schedsim
