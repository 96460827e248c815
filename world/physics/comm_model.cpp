#include "world/physics/comm_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "base/error.hpp"

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
  members_.resize(capacity_Bps_.size());
  link_dirty_.resize(capacity_Bps_.size(), 0);
  demand_sum_Bps_.resize(capacity_Bps_.size(), 0.0);
  unbounded_.resize(capacity_Bps_.size(), 0);
  was_contended_.resize(capacity_Bps_.size(), 0);
}

void MaxMinFairShare::set_capacity_Bps(int link, double capacity_Bps) {
  if (link < 0 || link >= num_links()) throw InvariantError("MaxMinFairShare: no link " + std::to_string(link) + " (" + std::to_string(num_links()) + " links)");
  if (!(std::isfinite(capacity_Bps) && capacity_Bps >= 0)) {
    throw InvariantError("MaxMinFairShare: link " + std::to_string(link) + " capacity must be finite and >= 0, got " + number(capacity_Bps));
  }
  capacity_Bps_[static_cast<std::size_t>(link)] = capacity_Bps;
  mark_link(link);
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
  // Caps summed per link to tell whether the link can ever bind: whole numbers (rounded
  // up) below 2^52, so the sums stay exact in any order; larger caps count as unbounded.
  flow.demand_Bps = cap_Bps < 0x1p52 ? std::ceil(cap_Bps) : -1.0;
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
  attach(id);
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
  detach(id);
  try {
    set_flow(flow, links, cap_Bps);
  } catch (...) {
    flow = std::move(saved);
    attach(id);
    throw;
  }
  attach(id);
  stale_ = true;
}

void MaxMinFairShare::remove_flow(FlowId id) {
  if (!has_flow(id)) throw InvariantError("MaxMinFairShare: removal of unknown flow " + std::to_string(id));
  detach(id);
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.active = false;
  flow.links.clear();
  free_ids_.push_back(id);
  std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
  --num_active_;
  stale_ = true;
}

void MaxMinFairShare::clear() {
  for (std::size_t id = 0; id < flows_.size(); ++id) {
    if (flows_[id].active) detach(static_cast<int>(id));
    flows_[id].active = false;
    flows_[id].links.clear();
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
    if (m == skip_link || !link_seen_[static_cast<std::size_t>(m)]) continue;  // not a constraint in this solve
    const auto mi = static_cast<std::size_t>(m);
    remaining_Bps_[mi] -= rate_Bps;
    --unfrozen_[mi];  // the link's heap entry is now too low; solve() re-checks it
  }
}

void MaxMinFairShare::mark_link(int link) {
  auto& m = link_dirty_[static_cast<std::size_t>(link)];
  if (!m) {
    m = 1;
    dirty_links_.push_back(link);
  }
}

void MaxMinFairShare::attach(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.pos.clear();
  for (int l : f.links) {
    const auto lz = static_cast<std::size_t>(l);
    f.pos.push_back(static_cast<int>(members_[lz].size()));
    members_[lz].push_back(id);
    if (f.demand_Bps < 0) {
      ++unbounded_[lz];
    } else {
      demand_sum_Bps_[lz] += f.demand_Bps;
    }
    mark_link(l);
  }
  dirty_flows_.push_back(id);
}

void MaxMinFairShare::detach(FlowId id) {
  const Flow& f = flows_[static_cast<std::size_t>(id)];
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const int l = f.links[i];
    const auto lz = static_cast<std::size_t>(l);
    // Swap-remove (a link's member order does not matter: solve() sorts what it visits).
    auto& m = members_[lz];
    const int at = f.pos[i];
    const int last = m.back();
    m[static_cast<std::size_t>(at)] = last;
    m.pop_back();
    if (last != id) {
      Flow& moved = flows_[static_cast<std::size_t>(last)];
      const auto k = static_cast<std::size_t>(std::lower_bound(moved.links.begin(), moved.links.end(), l) - moved.links.begin());
      moved.pos[k] = at;
    }
    if (f.demand_Bps < 0) {
      --unbounded_[lz];
    } else {
      demand_sum_Bps_[lz] -= f.demand_Bps;
    }
    mark_link(l);
  }
}

bool MaxMinFairShare::contended(int link) const {
  const auto lz = static_cast<std::size_t>(link);
  return unbounded_[lz] > 0 || demand_sum_Bps_[lz] > capacity_Bps_[lz];
}

// Water-filling restricted to the flows and links connected to what changed since the
// last solve. Only contended links (some flow unbounded, or the flows' caps adding up to
// more than the capacity) can ever freeze a flow below its cap: a link whose flows all
// fit is full at most when every one of them has reached its cap. So the water-filling
// runs over contended links only, components are joined through contended links only,
// and a flow that crosses none gets its cap. Max-min rates of disjoint components do not
// depend on each other, so the others keep their rates and the result equals a full
// solve.
void MaxMinFairShare::solve() {
  const std::size_t num_links_z = capacity_Bps_.size();
  const std::size_t num_flows_z = flows_.size();
  remaining_Bps_.resize(num_links_z, 0.0);
  unfrozen_.resize(num_links_z, 0);
  frozen_.resize(num_flows_z, 1);
  flow_seen_.resize(num_flows_z, 0);
  link_seen_.resize(num_links_z, 0);
  solved_flows_.clear();
  comp_links_.clear();
  auto add_flow_seed = [&](int f) {
    const auto fz = static_cast<std::size_t>(f);
    if (!flow_seen_[fz]) {
      flow_seen_[fz] = 1;
      solved_flows_.push_back(f);
    }
  };
  auto add_link = [&](int l) {
    const auto lz = static_cast<std::size_t>(l);
    if (link_seen_[lz]) return;
    link_seen_[lz] = 1;
    comp_links_.push_back(l);
    for (int f : members_[lz]) add_flow_seed(f);
  };
  for (int f : dirty_flows_) {
    const auto fz = static_cast<std::size_t>(f);
    if (fz < num_flows_z && flows_[fz].active) add_flow_seed(f);
  }
  // A changed link matters to the flows that remain on it only if it could bind them
  // before or can now; an uncontended link's flows were, and stay, at their caps.
  for (int l : dirty_links_) {
    const auto lz = static_cast<std::size_t>(l);
    const bool now = contended(l);
    if (now) {
      add_link(l);
    } else if (was_contended_[lz]) {
      for (int f : members_[lz]) add_flow_seed(f);
    }
    was_contended_[lz] = now;
    link_dirty_[lz] = 0;
  }
  // Breadth-first over flow -> contended link -> flow adjacency.
  for (std::size_t fi = 0; fi < solved_flows_.size(); ++fi) {
    for (int l : flows_[static_cast<std::size_t>(solved_flows_[fi])].links) {
      if (!link_seen_[static_cast<std::size_t>(l)] && contended(l)) add_link(l);
    }
  }
  std::sort(solved_flows_.begin(), solved_flows_.end());
  heap_.clear();
  for (int l : comp_links_) {
    const auto lz = static_cast<std::size_t>(l);
    remaining_Bps_[lz] = capacity_Bps_[lz];
    unfrozen_[lz] = static_cast<int>(members_[lz].size());
    if (unfrozen_[lz] > 0) heap_.push_back(Level{remaining_Bps_[lz] / unfrozen_[lz], 0, l});
  }
  for (int id : solved_flows_) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    frozen_[static_cast<std::size_t>(id)] = 0;
    if (f.cap_Bps < kUnlimited) {
      heap_.push_back(Level{f.cap_Bps, 1, id});
    } else if (f.links.empty()) {
      frozen_[static_cast<std::size_t>(id)] = 1;  // nothing limits it
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
      // Members in id order, as a full solve would visit them.
      member_scratch_.assign(members_[l].begin(), members_[l].end());
      std::sort(member_scratch_.begin(), member_scratch_.end());
      for (int f : member_scratch_) {
        if (!frozen_[static_cast<std::size_t>(f)]) freeze(f, level_Bps, top.index);
      }
      unfrozen_[l] = 0;
    } else {
      if (frozen_[static_cast<std::size_t>(top.index)]) continue;
      level_Bps = std::max(level_Bps, top.level_Bps);
      freeze(top.index, level_Bps, -1);
    }
  }

  for (int l : comp_links_) link_seen_[static_cast<std::size_t>(l)] = 0;
  for (int f : solved_flows_) flow_seen_[static_cast<std::size_t>(f)] = 0;
  dirty_links_.clear();
  dirty_flows_.clear();
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
  double load = 0.0;
  for (int f : members_[static_cast<std::size_t>(link)]) load += flows_[static_cast<std::size_t>(f)].rate_Bps;
  return load;
}

std::string max_min_fair_problem(const std::vector<double>& link_capacity_Bps, const std::vector<MaxMinFlowRate>& flows,
                                 const std::vector<double>& link_load_Bps) {
  // Within 1 B/s: the solver rounds caps up to whole bytes/s.
  const auto close_to = [](double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1.0; };
  const std::size_t links = link_capacity_Bps.size();
  std::vector<double> load(links, 0.0), top(links, 0.0);
  for (const MaxMinFlowRate& f : flows) {
    for (int l : f.links) {
      const auto lz = static_cast<std::size_t>(l);
      load[lz] += f.rate_Bps;
      top[lz] = std::max(top[lz], f.rate_Bps);
    }
  }
  for (std::size_t l = 0; l < links; ++l) {
    if (!close_to(load[l], link_load_Bps[l])) {
      return "link " + std::to_string(l) + " load " + number(link_load_Bps[l]) + " B/s != the sum of its flows' rates " + number(load[l]);
    }
    if (load[l] > link_capacity_Bps[l] && !close_to(load[l], link_capacity_Bps[l])) {
      return "link " + std::to_string(l) + " carries " + number(load[l]) + " B/s, over its capacity " + number(link_capacity_Bps[l]);
    }
  }
  for (std::size_t id = 0; id < flows.size(); ++id) {
    const MaxMinFlowRate& f = flows[id];
    if (std::isinf(f.rate_Bps) && f.links.empty()) continue;
    if (!(f.rate_Bps >= 0) || std::isinf(f.rate_Bps)) return "flow " + std::to_string(id) + " has rate " + number(f.rate_Bps) + " B/s";
    if (f.rate_Bps > f.cap_Bps && !close_to(f.rate_Bps, f.cap_Bps)) {  // (never for an unlimited cap)
      return "flow " + std::to_string(id) + " gets " + number(f.rate_Bps) + " B/s, over its cap " + number(f.cap_Bps);
    }
    if (std::isfinite(f.cap_Bps) && close_to(f.rate_Bps, f.cap_Bps)) continue;
    bool bottleneck = false;
    for (int l : f.links) {
      const auto lz = static_cast<std::size_t>(l);
      bottleneck = bottleneck || (close_to(load[lz], link_capacity_Bps[lz]) && close_to(f.rate_Bps, top[lz]));
    }
    if (!bottleneck) {
      return "flow " + std::to_string(id) + " gets " + number(f.rate_Bps) +
             " B/s, below its cap, and crosses no full link on which it is among the largest (not max-min fair)";
    }
  }
  return "";
}

std::string MaxMinFairShare::solution_problem() const {
  if (stale_) return "";
  std::vector<MaxMinFlowRate> flows;
  std::vector<int> ids;
  for (std::size_t id = 0; id < flows_.size(); ++id) {
    const Flow& f = flows_[id];
    if (!f.active) continue;
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      const auto l = static_cast<std::size_t>(f.links[i]);
      const auto at = static_cast<std::size_t>(f.pos[i]);
      if (at >= members_[l].size() || members_[l][at] != static_cast<int>(id)) {
        return "flow " + std::to_string(id) + " crosses link " + std::to_string(l) + " but the link does not list it";
      }
    }
    flows.push_back({f.links, f.cap_Bps, f.rate_Bps});
    ids.push_back(static_cast<int>(id));
  }
  std::vector<double> loads(capacity_Bps_.size());
  for (std::size_t l = 0; l < capacity_Bps_.size(); ++l) {
    for (int m : members_[l]) {
      if (!flows_[static_cast<std::size_t>(m)].active) return "link " + std::to_string(l) + " lists the removed flow " + std::to_string(m);
    }
    loads[l] = link_load_Bps(static_cast<int>(l));
  }
  std::string problem = max_min_fair_problem(capacity_Bps_, flows, loads);
  // Name flows by their ids rather than their positions among the active ones.
  if (problem.rfind("flow ", 0) == 0) {
    const auto end = problem.find(' ', 5);
    problem = "flow " + std::to_string(ids[static_cast<std::size_t>(std::stoi(problem.substr(5, end - 5)))]) + problem.substr(end);
  }
  return problem;
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
