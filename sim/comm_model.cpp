#include "sim/comm_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "sim/error.hpp"

namespace schedsim {
namespace {

std::string number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace

double ring_allreduce_time_s(int num_devices, double bytes, double bandwidth_Bps, double latency_s) {
  if (num_devices < 1) throw InvariantError("ring_allreduce_time_s: num_devices must be >= 1, got " + std::to_string(num_devices));
  if (!(std::isfinite(bytes) && bytes >= 0)) throw InvariantError("ring_allreduce_time_s: bytes must be finite and >= 0, got " + number(bytes));
  if (!(std::isfinite(latency_s) && latency_s >= 0)) {
    throw InvariantError("ring_allreduce_time_s: latency_s must be finite and >= 0, got " + number(latency_s));
  }
  if (num_devices == 1) return 0.0;
  if (!(bandwidth_Bps > 0)) throw InvariantError("ring_allreduce_time_s: bandwidth_Bps must be > 0, got " + number(bandwidth_Bps));
  const double n = num_devices;
  const double steps = 2.0 * (n - 1.0);
  return steps / n * bytes / bandwidth_Bps + steps * latency_s;
}

double iteration_time_s(double compute_s, double comm_s, double overlap) {
  if (!(overlap >= 0 && overlap <= 1)) throw InvariantError("iteration_time_s: overlap must be in [0, 1], got " + number(overlap));
  if (!(compute_s >= 0)) throw InvariantError("iteration_time_s: compute_s must be >= 0, got " + number(compute_s));
  if (!(comm_s >= 0)) throw InvariantError("iteration_time_s: comm_s must be >= 0, got " + number(comm_s));
  return compute_s + std::max(0.0, comm_s - overlap * compute_s);
}

MaxMinFairShare::MaxMinFairShare(std::vector<double> link_capacity_Bps) : capacity_Bps_(std::move(link_capacity_Bps)) {
  for (std::size_t l = 0; l < capacity_Bps_.size(); ++l) {
    const double c = capacity_Bps_[l];
    if (!(std::isfinite(c) && c >= 0)) throw InvariantError("MaxMinFairShare: link " + std::to_string(l) + " capacity must be finite and >= 0, got " + number(c));
  }
}

void MaxMinFairShare::set_capacity_Bps(int link, double capacity_Bps) {
  if (link < 0 || link >= num_links()) throw InvariantError("MaxMinFairShare: no link " + std::to_string(link) + " (" + std::to_string(num_links()) + " links)");
  if (!(std::isfinite(capacity_Bps) && capacity_Bps >= 0)) {
    throw InvariantError("MaxMinFairShare: link " + std::to_string(link) + " capacity must be finite and >= 0, got " + number(capacity_Bps));
  }
  capacity_Bps_[static_cast<std::size_t>(link)] = capacity_Bps;
  stale_ = true;
}

void MaxMinFairShare::set_flow(Flow& flow, Span<int> links, double cap_Bps) {
  if (!(cap_Bps > 0)) throw InvariantError("MaxMinFairShare: a flow's cap must be > 0 (or unlimited), got " + number(cap_Bps));
  for (int l : links) {
    if (l < 0 || l >= num_links()) throw InvariantError("MaxMinFairShare: a flow crosses link " + std::to_string(l) + ", but there are " + std::to_string(num_links()) + " links");
  }
  flow.links.assign(links.begin(), links.end());
  std::sort(flow.links.begin(), flow.links.end());
  const auto dup = std::adjacent_find(flow.links.begin(), flow.links.end());
  if (dup != flow.links.end()) {
    const int l = *dup;
    flow.links.clear();
    throw InvariantError("MaxMinFairShare: a flow lists link " + std::to_string(l) + " twice");
  }
  flow.cap_Bps = cap_Bps;
  flow.rate_Bps = 0;
}

MaxMinFairShare::FlowId MaxMinFairShare::add_flow(Span<int> links, double cap_Bps) {
  Flow scratch;
  FlowId id;
  if (free_ids_.empty()) {
    set_flow(scratch, links, cap_Bps);  // validate before growing
    id = static_cast<FlowId>(flows_.size());
    flows_.push_back(std::move(scratch));
  } else {
    id = free_ids_.front();
    set_flow(flows_[static_cast<std::size_t>(id)], links, cap_Bps);
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
    free_ids_.pop_back();
  }
  flows_[static_cast<std::size_t>(id)].active = true;
  ++num_active_;
  stale_ = true;
  return id;
}

bool MaxMinFairShare::has_flow(FlowId id) const {
  return id >= 0 && static_cast<std::size_t>(id) < flows_.size() && flows_[static_cast<std::size_t>(id)].active;
}

void MaxMinFairShare::update_flow(FlowId id, Span<int> links, double cap_Bps) {
  if (!has_flow(id)) throw InvariantError("MaxMinFairShare: update of unknown flow " + std::to_string(id));
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  Flow saved = flow;
  try {
    set_flow(flow, links, cap_Bps);
  } catch (...) {
    flow = std::move(saved);
    throw;
  }
  stale_ = true;
}

void MaxMinFairShare::remove_flow(FlowId id) {
  if (!has_flow(id)) throw InvariantError("MaxMinFairShare: removal of unknown flow " + std::to_string(id));
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.active = false;
  flow.links.clear();
  free_ids_.push_back(id);
  std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
  --num_active_;
  stale_ = true;
}

void MaxMinFairShare::clear() {
  for (Flow& f : flows_) {
    f.active = false;
    f.links.clear();
  }
  free_ids_.clear();
  for (int id = static_cast<int>(flows_.size()) - 1; id >= 0; --id) free_ids_.push_back(id);
  std::make_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
  num_active_ = 0;
  stale_ = true;
}

void MaxMinFairShare::push(const Level& level) {
  heap_.push_back(level);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void MaxMinFairShare::freeze(int flow_id, double rate_Bps, int skip_link) {
  Flow& flow = flows_[static_cast<std::size_t>(flow_id)];
  frozen_[static_cast<std::size_t>(flow_id)] = 1;
  flow.rate_Bps = rate_Bps;
  for (int m : flow.links) {
    if (m == skip_link) continue;
    const auto mi = static_cast<std::size_t>(m);
    remaining_Bps_[mi] -= rate_Bps;
    --unfrozen_[mi];  // the link's heap entry is now too low; solve() re-checks it
  }
}

void MaxMinFairShare::solve() {
  const std::size_t num_links_z = capacity_Bps_.size();
  const std::size_t num_flows_z = flows_.size();
  // Link -> flows (CSR), flows in id order.
  link_start_.assign(num_links_z + 1, 0);
  for (const Flow& f : flows_) {
    if (!f.active) continue;
    for (int l : f.links) ++link_start_[static_cast<std::size_t>(l) + 1];
  }
  for (std::size_t l = 0; l < num_links_z; ++l) link_start_[l + 1] += link_start_[l];
  link_flows_.resize(static_cast<std::size_t>(link_start_[num_links_z]));
  unfrozen_.assign(link_start_.begin(), link_start_.end() - 1);  // a fill cursor first
  for (std::size_t id = 0; id < num_flows_z; ++id) {
    const Flow& f = flows_[id];
    if (!f.active) continue;
    for (int l : f.links) link_flows_[static_cast<std::size_t>(unfrozen_[static_cast<std::size_t>(l)]++)] = static_cast<int>(id);
  }
  for (std::size_t l = 0; l < num_links_z; ++l) unfrozen_[l] = link_start_[l + 1] - link_start_[l];
  remaining_Bps_.assign(capacity_Bps_.begin(), capacity_Bps_.end());
  frozen_.assign(num_flows_z, 1);
  heap_.clear();

  for (std::size_t l = 0; l < num_links_z; ++l) {
    if (unfrozen_[l] > 0) heap_.push_back(Level{remaining_Bps_[l] / unfrozen_[l], 0, static_cast<int>(l)});
  }
  for (std::size_t id = 0; id < num_flows_z; ++id) {
    Flow& f = flows_[id];
    if (!f.active) continue;
    frozen_[id] = 0;
    if (f.cap_Bps < kUnlimited) {
      heap_.push_back(Level{f.cap_Bps, 1, static_cast<int>(id)});
    } else if (f.links.empty()) {
      frozen_[id] = 1;  // nothing limits it
      f.rate_Bps = kUnlimited;
    }
  }

  std::make_heap(heap_.begin(), heap_.end(), Later{});

  double level_Bps = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Level top = heap_.back();
    heap_.pop_back();
    if (top.kind == 0) {
      const auto l = static_cast<std::size_t>(top.index);
      if (unfrozen_[l] == 0) continue;
      // The link's level now; never below the current level (max() absorbs rounding).
      const double now_Bps = std::max(level_Bps, remaining_Bps_[l] / unfrozen_[l]);
      if (now_Bps > top.level_Bps) {
        push(Level{now_Bps, 0, top.index});
        continue;
      }
      level_Bps = std::max(level_Bps, top.level_Bps);
      for (int i = link_start_[l]; i < link_start_[l + 1]; ++i) {
        const int f = link_flows_[static_cast<std::size_t>(i)];
        if (!frozen_[static_cast<std::size_t>(f)]) freeze(f, level_Bps, top.index);
      }
      unfrozen_[l] = 0;
    } else {
      if (frozen_[static_cast<std::size_t>(top.index)]) continue;
      level_Bps = std::max(level_Bps, top.level_Bps);
      freeze(top.index, level_Bps, -1);
    }
  }

  load_Bps_.assign(num_links_z, 0.0);
  for (const Flow& f : flows_) {
    if (!f.active) continue;
    for (int l : f.links) load_Bps_[static_cast<std::size_t>(l)] += f.rate_Bps;
  }
  stale_ = false;
}

void MaxMinFairShare::check_fresh() const {
  if (stale_) throw InvariantError("MaxMinFairShare: rates are stale; call solve() after adding, updating or removing flows or changing a capacity");
}

double MaxMinFairShare::rate_Bps(FlowId id) const {
  if (!has_flow(id)) throw InvariantError("MaxMinFairShare: no flow " + std::to_string(id));
  check_fresh();
  return flows_[static_cast<std::size_t>(id)].rate_Bps;
}

double MaxMinFairShare::link_load_Bps(int link) const {
  if (link < 0 || link >= num_links()) throw InvariantError("MaxMinFairShare: no link " + std::to_string(link) + " (" + std::to_string(num_links()) + " links)");
  check_fresh();
  return load_Bps_[static_cast<std::size_t>(link)];
}

std::vector<double> max_min_fair_rates(const std::vector<double>& link_capacity_Bps, const std::vector<std::vector<int>>& flows) {
  MaxMinFairShare share(link_capacity_Bps);
  for (const auto& f : flows) share.add_flow(f);
  share.solve();
  std::vector<double> rates;
  rates.reserve(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) rates.push_back(share.rate_Bps(static_cast<int>(i)));
  return rates;
}

}  // namespace schedsim
