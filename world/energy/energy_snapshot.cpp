// Snapshot support of the energy meter (sim/snapshot_archive.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "world/energy/energy.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

void EnergyMeter::snapshot(SnapshotArchive& ar) {
  ar.section("energy meter");
  ar.io_each(sites_, [&](Site& s) {
    ar(s.idle_w, s.total_power_w, s.jobs_power_w, s.jobs_power.raw(), s.jobs_idle.raw(), s.price_int, s.carbon_int, s.total.joules, s.total.cost,
       s.total.co2, s.jobs.joules, s.jobs.cost, s.jobs.co2);
    ar(s.weight, s.pue_now, s.cooling_now, s.it_joules, s.cooling_joules);  // the thermal model's PUE and sums
  });
  ar.io_each(slots_, [&](SlotInfo& i) {
    ar(i.seq, i.pos, i.stamp, i.joined_stamp, i.placed_since_us, i.site, i.idle_w, i.dynamic_w, i.joules, i.cost_wsusd, i.co2_wsg, i.last_join);
  });
  ar(entries_.slot, entries_.site, entries_.power_w, entries_.site_power_w, entries_.idle_w, entries_.joules, entries_.cost_wsusd, entries_.co2_wsg,
     entries_.since_us);
  ar(calls_, power_evaluations_, job_integrations_, last_, last_job_.energy_kwh, last_job_.cost_usd, last_job_.co2_kg);
  if (!ar.loading()) return;
  // The entries and the slots point at each other; sites index sites_.
  const std::size_t n = entries_.size(), sites = sites_.size();
  ar.check(entries_.site.size() == n && entries_.power_w.size() == n && entries_.site_power_w.size() == n && entries_.idle_w.size() == n &&
               entries_.joules.size() == n && entries_.cost_wsusd.size() == n && entries_.co2_wsg.size() == n && entries_.since_us.size() == n,
           "the energy meter's entry tables differ in length");
  for (std::size_t i = 0; i < n; ++i) {
    const JobSlot slot = entries_.slot[i];
    ar.check(slot >= 0 && static_cast<std::size_t>(slot) < slots_.size() && slots_[static_cast<std::size_t>(slot)].pos == static_cast<std::int32_t>(i),
             "the energy meter's entry " + std::to_string(i) + " names job slot " + std::to_string(slot) + ", which does not point back at it");
    ar.check_job_slot(slot, "the energy meter's entry " + std::to_string(i));
    ar.check(entries_.site[i] >= 0 && static_cast<std::size_t>(entries_.site[i]) < sites && entries_.since_us[i] <= last_.us(),
             "the energy meter's entry " + std::to_string(i) + " is at site " + std::to_string(entries_.site[i]) + " or integrated beyond its clock");
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const SlotInfo& info = slots_[s];
    ar.check(info.pos >= -1 && (info.pos < 0 || (static_cast<std::size_t>(info.pos) < n && entries_.slot[static_cast<std::size_t>(info.pos)] == static_cast<JobSlot>(s))) &&
                 info.site >= 0 && static_cast<std::size_t>(info.site) < sites,
             "the energy meter's job slot " + std::to_string(s) + " points at entry " + std::to_string(info.pos) + " or site " + std::to_string(info.site) +
                 ", which do not belong to it");
  }
  ar.check(sites > 0 && last_ >= Tick(), "the energy meter has no site or a negative clock");
}

}  // namespace schedsim
