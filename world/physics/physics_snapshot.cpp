// Snapshot support of the cluster physics and its network model (sim/snapshot_archive.hpp):
// every field that outlives an instant, and the checks that a restored state is one this
// scenario could reach.
#include <algorithm>
#include <cmath>
#include <string>

#include "world/physics/cluster_physics.hpp"
#include "world/physics/comm_model.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

void MaxMinFairShare::snapshot(SnapshotArchive& ar) {
  const std::size_t links = capacity_Bps_.size();  // the topology's
  ar(capacity_Bps_);
  ar.io_each(flows_, [&](Flow& f) { ar(f.links, f.pos, f.cap_Bps, f.demand_Bps, f.rate_Bps, f.active); });
  ar(free_ids_, num_active_, stale_, link_start_, link_flows_, unfrozen_, remaining_Bps_, frozen_);
  ar.io_each(heap_, [&](Level& l) { ar(l.level_Bps, l.kind, l.index); });
  ar(members_, dirty_links_, dirty_flows_, link_dirty_, link_seen_, flow_seen_, demand_sum_Bps_, unbounded_, was_contended_, comp_links_,
     solved_flows_);
  if (!ar.loading()) return;
  // Links and flows index each other's tables unchecked: every index in range, and each
  // active flow listed by its links at the position it records.
  const std::size_t flows = flows_.size();
  const auto link_ok = [&](int l) { return l >= 0 && static_cast<std::size_t>(l) < links; };
  const auto flow_ok = [&](int f) { return f >= 0 && static_cast<std::size_t>(f) < flows; };
  ar.check(capacity_Bps_.size() == links && members_.size() == links && link_dirty_.size() == links && demand_sum_Bps_.size() == links &&
               unbounded_.size() == links && was_contended_.size() == links,
           "the network model's link tables are sized for another topology");
  int active = 0;
  for (std::size_t id = 0; id < flows; ++id) {
    const Flow& f = flows_[id];
    if (!f.active) continue;  // a removed flow's tables are stale until its id is reused
    ar.check(f.pos.size() == f.links.size(), "network flow " + std::to_string(id) + " has positions for other links");
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      ar.check(link_ok(f.links[i]) && (i == 0 || f.links[i - 1] < f.links[i]), "network flow " + std::to_string(id) + " crosses link " + std::to_string(f.links[i]) + ", out of range or out of order");
      const auto& m = members_[static_cast<std::size_t>(f.links[i])];
      ar.check(f.pos[i] >= 0 && static_cast<std::size_t>(f.pos[i]) < m.size() && m[static_cast<std::size_t>(f.pos[i])] == static_cast<int>(id),
               "network flow " + std::to_string(id) + " is not listed by its link " + std::to_string(f.links[i]));
    }
    ++active;
  }
  ar.check(active == num_active_, "the network model counts " + std::to_string(num_active_) + " flows but holds " + std::to_string(active));
  for (const auto& m : members_) {
    for (const int f : m) ar.check(flow_ok(f) && flows_[static_cast<std::size_t>(f)].active, "a network link lists flow " + std::to_string(f) + ", which is not active");
  }
  for (const int f : free_ids_) ar.check(flow_ok(f) && !flows_[static_cast<std::size_t>(f)].active, "the network model's free flow id " + std::to_string(f) + " is out of range or in use");
  for (const int l : dirty_links_) ar.check(link_ok(l), "the network model's changed link " + std::to_string(l) + " is out of range");
  for (const int l : comp_links_) ar.check(link_ok(l), "the network model's link " + std::to_string(l) + " is out of range");
  for (const int f : dirty_flows_) ar.check(flow_ok(f), "the network model's changed flow " + std::to_string(f) + " is out of range");
  for (const int f : solved_flows_) ar.check(flow_ok(f), "the network model's solved flow " + std::to_string(f) + " is out of range");
}

void ClusterPhysics::snapshot(SnapshotArchive& ar) {
  ar.section("cluster physics");
  ar(fair_share_);
  ar.io_each(placed_, [&](Placed& p) {
    ar(p.arrival_seq, p.placed, p.devices, p.flow, p.t_ref_s, p.compute_s, p.fixed_bw_Bps, p.latency_s, p.wire_bytes, p.alone_s, p.demand_Bps,
       p.share_Bps, p.utilization);
    // The profile by name: pointers into the catalogue are not saved.
    std::string profile = p.profile ? p.profile->name : "";
    ar(profile);
    if (ar.loading()) p.profile = profile.empty() ? nullptr : profiles_.find(profile);
    // Only runs with a plan model carry plans: other snapshots keep their bytes.
    if (plan_model_) ar(p.planned);
  });
  ar(node_jobs_, mark_, flow_slot_);
  if (plan_model_) ar(job_plans_);
  if (!ar.loading()) return;
  const int n = cluster_.num_devices();
  ar.check(node_jobs_.size() == static_cast<std::size_t>(cluster_.num_nodes()), "the physics model's node lists are sized for another cluster");
  for (std::size_t slot = 0; slot < placed_.size(); ++slot) {
    const Placed& p = placed_[slot];
    for (const DeviceId d : p.devices) ar.check(d >= 0 && d < n, "the physics model places job slot " + std::to_string(slot) + " on device " + std::to_string(d) + ", which does not exist");
    ar.check(p.flow == -1 || fair_share_.has_flow(p.flow), "the physics model's job slot " + std::to_string(slot) + " has network flow " + std::to_string(p.flow) + ", which is not active");
    ar.check(p.flow == -1 || (static_cast<std::size_t>(p.flow) < flow_slot_.size() && flow_slot_[static_cast<std::size_t>(p.flow)] == static_cast<JobSlot>(slot)),
             "the physics model's flow of job slot " + std::to_string(slot) + " does not point back at it");
  }
  for (const auto& jobs : node_jobs_) {
    for (const JobSlot s : jobs) ar.check(s >= 0 && static_cast<std::size_t>(s) < placed_.size(), "the physics model lists job slot " + std::to_string(s) + " on a node, which it has no record of");
  }
  for (const JobSlot s : flow_slot_) ar.check(s == kNoJob || (s >= 0 && static_cast<std::size_t>(s) < placed_.size()), "the physics model's flow owner " + std::to_string(s) + " is out of range");
}

}  // namespace schedsim
