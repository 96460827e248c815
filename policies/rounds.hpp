// Round-based re-allocation around any policy that only starts jobs, as Gavel's simulator
// realizes a non-LP policy (Gavel, scheduler/scheduler.py at c4fa400): time runs in rounds
// of round_s (a round also ends when no job is left running); at a round boundary, when a
// job arrived or finished since the last allocation and at least reallocate_every_s
// passed since it (or there was none yet), the allocation is recomputed from scratch over
// every job in the system, and applied. Between recomputations the allocation stands:
// devices freed by finished jobs stay idle and new arrivals wait, as in Gavel.
//
// The allocation is the base policy's decision on a hypothetical view: every job in the
// system queued, in arrival order, on the cluster without the running jobs (their
// progress up to now folded in). The base is built afresh for each re-allocation (it
// remembers nothing between them, and is never asked in between). The jobs it starts are
// the allocation:
//  - running jobs it gives as many devices of each type (in each datacenter) as they
//    hold (keep: type, the default), or exactly their devices (keep: devices), keep
//    running untouched;
//  - running jobs it gives other devices move (ActionKind::kMove: the kernel charges
//    checkpoint save + restore), in its order, repeatedly while one can; to its devices
//    when they are free, else (keep: type) to as many free devices of each type, lowest
//    ids first. Moves that wait on each other (a cycle) are broken by preempting; such a
//    job starts on its allocation when there is room;
//  - running jobs it leaves out are preempted;
//  - queued jobs it starts start, in its order, as soon as their devices are free.
// Stopping jobs and fractional running jobs keep their devices and are not re-decided.
// A base that acts on running jobs itself (gavel, gavel-las, gandiva, elastic-goodput,
// inference, thermal-aware, rl, and the round policies) is refused by name when
// configured; any action other than a start at a re-allocation stops the run with a
// PolicyError naming the base.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "policies/registry.hpp"

namespace schedsim {

// The mechanism around a base made by `make_base` (called once per re-allocation), for
// embedders and tests; `base_name` names it in messages. keep_devices: keep: devices.
std::unique_ptr<Policy> make_rounds_policy(const std::string& name, double round_s, double reallocate_every_s, bool keep_devices,
                                           const std::string& base_name, std::function<std::unique_ptr<Policy>()> make_base);

// `rounds`: the mechanism around a registered `base` (default fifo).
PolicyInfo rounds_policy_info();
// `round_fifo`: the mechanism around Gavel's fifo_perf allocation (policies/fifo.py): jobs
// in arrival order, each on the type where its estimated rate is highest among the types
// with room (ties: the first type by name, case-insensitive, as Gavel sorts 'k80' <
// 'p100' < 'v100'); a job whose best such type gives rate 0 is passed over; the first job
// for which no type has room ends the pass; a job larger than every type's devices never
// gets one. {name: rounds, base: {name: fifo, placement: fastest_type}} is the same
// except at those passes-over (fifo stops there).
PolicyInfo round_fifo_policy_info();
// Preset `gavel-fifo-perf`: round_fifo with Gavel's defaults (round_s 360,
// reallocate_every_s 1920: time_per_iteration and minimum_time_between_allocation_resets).
PolicyInfo gavel_fifo_perf_policy_info();

}  // namespace schedsim
