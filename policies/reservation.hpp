// PAI-style dynamic reservation for large gangs (docs/policies.md#pai-reservation).
// Alibaba's PAI cluster study (Weng et al., "MLaaS in the Wild", NSDI'22) reports that
// large gang jobs and jobs with picky requirements queue longest when small jobs keep
// taking the devices as they free up; the remedy modelled here reserves capacity ahead
// for such jobs and lends the reserved capacity only to jobs that give it back in time.
//
// At every decision the queue is walked in arrival order (work-conserving: a job that
// does not fit is passed over). A queued job that asks for at least reserve_min_gpus
// devices, or has waited at least reserve_after_s, gets a reservation when it cannot
// start now (at most max_reservations per decision, earliest arrivals first): the
// devices that free up earliest by the running jobs' estimated ends (the scenario's
// information model), inside one rack when one rack can hold the job, in the rack that
// frees up first. A later job may use a reserved device only when its estimated end is
// no later than the reservation's start; others go to unreserved devices. Reservations
// are recomputed at each decision, so they follow the estimates as jobs end early or late.
#pragma once

#include <vector>

#include "policies/registry.hpp"

namespace schedsim {

// Appends to `out` `n` devices out of `candidates` (distinct devices, any order), as
// compactly as they allow: one node when one holds n (the one with the fewest candidates
// that still holds n, then the lowest node); else one rack of `node_group` (node -> rack;
// null = one rack) when one holds n (the one with the fewest candidates that holds n),
// taking its nodes with the most candidates first; else nodes with the most candidates
// first over the whole set. Ties by lower node. Appended ascending. False (appending
// nothing) when there are fewer than n candidates.
bool compact_pick(const ClusterSpec& spec, const std::vector<int>* node_group, const std::vector<DeviceId>& candidates, int n, std::vector<DeviceId>& out);

struct ReservationOptions {
  int reserve_min_gpus = 16;        // jobs at least this wide get a reservation
  double reserve_after_s = 3600.0;  // and so do jobs that have waited this long
  int max_reservations = 2;         // reservations held at once
  int depth = 200;                  // queued jobs one decision examines at most
};

PolicyInfo pai_reservation_policy_info();

}  // namespace schedsim
