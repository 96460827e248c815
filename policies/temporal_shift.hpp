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

#include "policies/registry.hpp"
#include "sim/signals.hpp"

namespace schedsim {

PolicyInfo carbon_aware_policy_info();
PolicyInfo price_aware_policy_info();

// For tests: the start instant (simulated time) the policy would pick for a job queued
// at `now` with run-time estimate `estimate_s` and latest start `latest`, given
// `signals` (min_saving as in the options).
Tick best_start(const GridSignals& signals, SignalKind kind, Tick now, Tick latest, double estimate_s, double horizon_s, double min_saving);

}  // namespace schedsim
