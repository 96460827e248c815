// Round-based re-allocation, as Gavel's simulator realizes a non-LP policy (Gavel,
// scheduler/scheduler.py at c4fa400, and its fifo_perf allocation, policies/fifo.py):
// time runs in rounds of round_s (a round also ends when no job is left running); at a
// round boundary, when a job arrived or finished since the last allocation and at least
// reallocate_every_s passed since it (or there was none yet), the allocation (job ->
// device type) is recomputed from scratch over every job in the system, and applied:
// running jobs left out are preempted, running jobs given another type are moved
// (ActionKind::kMove: the kernel charges checkpoint save + restore), queued jobs given a
// type start. Between recomputations the allocation stands: devices freed by finished jobs
// stay idle and new arrivals wait, as in Gavel; a job that has a type but is not running
// (a move that had to go through a preemption) starts as soon as its type has room.
//
// The allocation is a pluggable function (RoundAllocation); `fastest_type_fifo` is
// Gavel's fifo_perf: jobs in arrival order, each on the type where its estimated rate is
// highest among the types with enough unallocated devices (ties: the first type by name,
// case-insensitive, as Gavel sorts 'k80' < 'p100' < 'v100'), a job with rate 0 on that
// type skipped; the first job for which no type has room ends the pass (FIFO). A job
// larger than every type's devices is never allocated (and does not end the pass).
// The mechanism sits beside the policy interface rather than wrapping any registered
// policy: a wrapped policy decides on the simulator's live view and cannot be asked for
// the allocation it would make on an empty cluster.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

// `rounds`: the same mechanism around any registered policy that only starts jobs (the
// `base`, default fifo). At a re-allocation the base, built afresh, decides on a view in
// which every job in the system is queued, in arrival order, on the cluster without the
// running jobs (their progress folded in); the jobs it starts are the new allocation.
// Running jobs it gives the same devices (keep: devices) or as many devices of each type
// (keep: type, the default) keep running untouched; running jobs it gives others move
// (ActionKind::kMove, with the configured checkpoint cost) to its devices, or (keep:
// type) when those are not free, to as many free devices of each type, lowest ids
// first; running jobs it leaves out are preempted; queued jobs it starts start when
// their devices are free. Between re-allocations the base is not asked: the allocation
// stands. Stopping jobs and fractional running jobs keep their devices and are not
// re-decided. A base that acts on running jobs itself (gavel, gandiva, elastic-goodput,
// inference, thermal-aware, rl, rounds) is refused by name when configured, and any
// other action than a start at a re-allocation stops the run with a PolicyError.
PolicyInfo rounds_policy_info();
// `round_fifo`: the mechanism above with the fastest_type_fifo allocation.
PolicyInfo round_fifo_policy_info();
// Preset `gavel-fifo-perf`: round_fifo with Gavel's defaults (round_s 360,
// reallocate_every_s 1920: time_per_iteration and minimum_time_between_allocation_resets).
PolicyInfo gavel_fifo_perf_policy_info();

}  // namespace schedsim
