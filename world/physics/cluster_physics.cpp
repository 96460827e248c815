#include "world/physics/cluster_physics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "world/physics/catalogue_names.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "world/physics/speed_model.hpp"

namespace schedsim {

namespace {

// The most devices of `devices` on one node.
int max_devices_on_a_node(const ClusterSpec& cluster, Span<DeviceId> devices) {
  int best = 0, run = 0, node = -1;
  std::vector<int> nodes;
  nodes.reserve(devices.size());
  for (DeviceId d : devices) nodes.push_back(cluster.node_of(d));
  std::sort(nodes.begin(), nodes.end());
  for (int n : nodes) {
    run = n == node ? run + 1 : 1;
    node = n;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace

PhysicsConfig PhysicsConfig::parse(const ConfigNode& node) {
  node.expect_map({"reference_device", "overlap", "interference_factor", "mixed_types", "checkpoint", "elastic_serial_fraction", "throughputs"});
  PhysicsConfig c;
  if (auto r = node.maybe_child("reference_device")) c.reference_device = r->as_string();
  if (auto o = node.maybe_child("overlap")) {
    c.overlap = o->as_nonnegative_double();
    if (c.overlap > 1) o->fail("must be between 0 and 1, got " + std::to_string(c.overlap));
  }
  if (auto f = node.maybe_child("interference_factor")) {
    c.interference_factor = f->as_positive_double();
    if (c.interference_factor > 1) f->fail("is a rate multiplier in (0, 1], got " + std::to_string(c.interference_factor));
  }
  if (auto m = node.maybe_child("mixed_types")) c.allow_mixed_types = m->as_choice({"slowest", "forbid"}) == "slowest";
  if (auto ck = node.maybe_child("checkpoint")) {
    ck->expect_map({"bytes_per_param", "default_size_gb", "storage_bandwidth_gbps", "restart_overhead_s"});
    if (auto v = ck->maybe_child("bytes_per_param")) c.checkpoint_bytes_per_param = v->as_positive_double();
    if (auto v = ck->maybe_child("default_size_gb")) c.default_checkpoint_gb = v->as_nonnegative_double();
    if (auto v = ck->maybe_child("storage_bandwidth_gbps")) c.storage_bandwidth_gbps = v->as_positive_double();
    if (auto v = ck->maybe_child("restart_overhead_s")) c.restart_overhead_s = v->as_nonnegative_double();
  }
  if (auto s = node.maybe_child("elastic_serial_fraction")) {
    c.elastic_serial_fraction = s->as_nonnegative_double();
    if (c.elastic_serial_fraction > 1) s->fail("must be between 0 and 1");
  }
  if (auto t = node.maybe_child("throughputs")) {
    c.throughputs = t->as_string();
    c.throughputs_resolved = t->as_path();
  }
  return c;
}

YAML::Node PhysicsConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["reference_device"] = reference_device;
  n["overlap"] = overlap;
  n["interference_factor"] = interference_factor;
  n["mixed_types"] = allow_mixed_types ? "slowest" : "forbid";
  YAML::Node ck(YAML::NodeType::Map);
  ck["bytes_per_param"] = checkpoint_bytes_per_param;
  ck["default_size_gb"] = default_checkpoint_gb;
  ck["storage_bandwidth_gbps"] = storage_bandwidth_gbps;
  ck["restart_overhead_s"] = restart_overhead_s;
  n["checkpoint"] = ck;
  n["elastic_serial_fraction"] = elastic_serial_fraction;
  if (!throughputs.empty()) n["throughputs"] = throughputs;
  return n;
}

ClusterPhysics::ClusterPhysics(const ClusterSpec& cluster, const TopologySpec& topology, const AcceleratorCatalogue& accelerators,
                               const WorkloadProfileCatalogue& profiles, PhysicsConfig config, const ThroughputMatrix* matrix)
    : cluster_(cluster),
      topology_(topology),
      accelerators_(accelerators),
      profiles_(profiles),
      config_(std::move(config)),
      matrix_(matrix),
      fair_share_([&] {
        std::vector<double> caps;
        for (const Link& l : topology.links()) caps.push_back(l.capacity_Bps);
        return MaxMinFairShare(caps);
      }()),
      node_jobs_(static_cast<std::size_t>(cluster.num_nodes())) {
  for (const auto& type : cluster.device_types()) {
    type_specs_.push_back(&accelerators.get(type));
    std::string match;
    if (matrix_) {
      for (const auto& m : matrix_->device_types()) {
        if (normalize_catalogue_name(m) == normalize_catalogue_name(type) || accelerators.find(m) == type_specs_.back()) match = m;
      }
    }
    matrix_types_.push_back(match);
    matrix_type_ids_.push_back(matrix_ && !match.empty() ? matrix_->device_type_id(match) : -1);
  }
  // Looked up once (fails early on a typo): catalogue lookups normalize names, too slow per rate query.
  if (!config_.reference_device.empty()) reference_spec_ = &accelerators.get(config_.reference_device);
  for (const NodeGroup& g : cluster_.groups()) group_specs_.push_back(accelerators.find(g.type));
}

const WorkloadProfile* ClusterPhysics::profile_of(const JobSpec& job) const {
  if (job.model.empty()) return nullptr;
  if (job.model == last_model_) return last_profile_;
  // Catalogue lookups normalize names; a run has few distinct model strings, so cache.
  auto it = profile_cache_.find(job.model);
  if (it == profile_cache_.end()) it = profile_cache_.emplace(job.model, profiles_.find(job.model)).first;
  last_model_ = job.model;
  last_profile_ = it->second;
  return it->second;
}

double ClusterPhysics::compute_time_s(const WorkloadProfile& profile, const AcceleratorSpec& device, int num_devices) const {
  const ComputeKey key{&profile, &device, num_devices};
  auto it = compute_cache_.find(key);
  if (it == compute_cache_.end()) it = compute_cache_.emplace(key, iteration_compute_time(profile, device, num_devices).time_s).first;
  return it->second;
}

const AcceleratorSpec& ClusterPhysics::reference_type(const JobSpec& job) const {
  if (reference_spec_) return *reference_spec_;
  if (!job.gpu_type.empty()) {
    if (const AcceleratorSpec* s = accelerators_.find(job.gpu_type)) return *s;
  }
  return *type_specs_[0];
}

bool ClusterPhysics::is_matrix_job(const JobSpec& job) const {
  return matrix_ && !job.model.empty() && matrix_job_id(job) >= 0 && !profile_of(job);
}

int ClusterPhysics::matrix_job_id(const JobSpec& job) const {
  // Looked up once per run of queries about the same model (as profile_of).
  if (job.model != last_matrix_model_) {
    last_matrix_model_ = job.model;
    last_matrix_job_ = matrix_->job_type_id(job.model);
  }
  return last_matrix_job_;
}

std::optional<double> ClusterPhysics::measured_steps_per_s(const JobSpec& job, int type_index, int num_devices, bool consolidated) const {
  if (!matrix_) return std::nullopt;
  const int type = matrix_type_ids_[static_cast<std::size_t>(type_index)];
  if (type < 0) return std::nullopt;
  // By interned ids (a rate query per placement change).
  const int job_id = matrix_job_id(job);
  if (!consolidated) {
    // Gavel measured spread-out placements for few (job, type, size) cases; where it did
    // not, the consolidated measurement stands in (documented in docs/physics.md).
    const auto spread = matrix_->isolated_steps_per_s(job_id, type, num_devices, ThroughputMatrix::Placement::kUnconsolidated);
    if (spread) return spread;
  }
  return matrix_->isolated_steps_per_s(job_id, type, num_devices, ThroughputMatrix::Placement::kConsolidated);
}

// Measured rate: the slowest member type's throughput (as placed) over the reference
// type's consolidated throughput at the requested size. 0 when a measurement is missing.
double ClusterPhysics::matrix_rate(const JobSpec& job, const std::vector<DeviceId>& devices) const {
  const int n = static_cast<int>(devices.size());
  const int first_node = cluster_.node_of(devices[0]);
  bool consolidated = true;
  for (DeviceId d : devices) consolidated = consolidated && cluster_.node_of(d) == first_node;
  double slowest = MaxMinFairShare::kUnlimited;
  for (DeviceId d : devices) {
    const auto v = measured_steps_per_s(job, cluster_.node(cluster_.node_of(d)).type_index, n, consolidated);
    if (!v || !(*v > 0)) return 0.0;
    slowest = std::min(slowest, *v);
  }
  const AcceleratorSpec& ref = reference_type(job);
  for (std::size_t t = 0; t < type_specs_.size(); ++t) {
    if (type_specs_[t] != &ref) continue;
    const auto r = measured_steps_per_s(job, static_cast<int>(t), job.num_gpus, true);
    if (r && *r > 0) return slowest / *r;
  }
  // The reference type is not in the cluster: look it up in the matrix by name.
  for (const auto& m : matrix_->device_types()) {
    if (accelerators_.find(m) != &ref) continue;
    const auto r = matrix_->isolated_steps_per_s(job.model, m, job.num_gpus);
    if (r && *r > 0) return slowest / *r;
  }
  return 0.0;
}

std::string ClusterPhysics::placement_problem(const JobSpec& job, Span<DeviceId> devices) const {
  if (devices.empty()) return "";
  if (is_matrix_job(job) && matrix_rate(job, std::vector<DeviceId>(devices.begin(), devices.end())) <= 0.0) {
    // A recorded 0 (the job type does not run there, e.g. out of memory) is not a gap in the matrix.
    const int n = static_cast<int>(devices.size());
    const int first_node = cluster_.node_of(devices[0]);
    bool consolidated = true;
    for (DeviceId d : devices) consolidated = consolidated && cluster_.node_of(d) == first_node;
    for (DeviceId d : devices) {
      const auto v = measured_steps_per_s(job, cluster_.node(cluster_.node_of(d)).type_index, n, consolidated);
      if (v && !(*v > 0)) {
        return "the throughput matrix records 0 steps/s for '" + job.model + "' on " + std::to_string(n) + " " + cluster_.device_type_of(d) +
               " devices (it cannot run there)";
      }
    }
    return "the throughput matrix has no measurement of '" + job.model + "' on " + std::to_string(devices.size()) + " " +
           cluster_.device_type_of(devices[0]) + " devices placed this way (or on the reference type)";
  }
  const int first_type = cluster_.node(cluster_.node_of(devices[0])).type_index;
  if (planned(job)) {
    for (DeviceId d : devices) {
      const int t = cluster_.node(cluster_.node_of(d)).type_index;
      if (t != first_type && !config_.allow_mixed_types) {
        return "the placement mixes device types " + cluster_.device_types()[static_cast<std::size_t>(first_type)] + " and " +
               cluster_.device_types()[static_cast<std::size_t>(t)] + ", which physics.mixed_types: forbid does not allow";
      }
    }
    return planned_on(job, devices).problem;
  }
  const WorkloadProfile* profile = profile_of(job);
  for (DeviceId d : devices) {
    const int t = cluster_.node(cluster_.node_of(d)).type_index;
    if (t != first_type && !config_.allow_mixed_types) {
      return "the placement mixes device types " + cluster_.device_types()[static_cast<std::size_t>(first_type)] + " and " +
             cluster_.device_types()[static_cast<std::size_t>(t)] + ", which physics.mixed_types: forbid does not allow";
    }
    if (profile && !fits_device_memory(*profile, *type_specs_[static_cast<std::size_t>(t)])) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "needs %.1f GB per device (profile %s) but device %d (%s) has %.1f GB", profile->memory_per_device_bytes / 1e9,
                    profile->name.c_str(), d, cluster_.device_types()[static_cast<std::size_t>(t)].c_str(),
                    type_specs_[static_cast<std::size_t>(t)]->memory_bytes / 1e9);
      return buf;
    }
  }
  return "";
}

double ClusterPhysics::iteration_time_s(const JobSpec& job, Span<DeviceId> devices, double shared_bandwidth_Bps) const {
  if (planned(job)) {
    const PlannedIteration it = planned_on(job, devices);
    if (!it.problem.empty()) throw InvariantError("iteration time asked for job '" + job.id + "' on devices where it cannot run: " + it.problem);
    return contended_iteration_s(it.iteration_s, it.dp_network_bytes_per_device * max_devices_on_a_node(cluster_, devices), shared_bandwidth_Bps);
  }
  const WorkloadProfile* profile = profile_of(job);
  if (!profile) throw InvariantError("iteration time asked for job '" + job.id + "', which has no workload profile");
  const int n = static_cast<int>(devices.size());
  // Mixed device types run at the slowest member's pace (synchronous data parallelism).
  double compute_s = 0.0;
  int seen_types = 0;  // bit set of type indices already evaluated (first 64 types)
  for (DeviceId d : devices) {
    const int t = cluster_.node(cluster_.node_of(d)).type_index;
    if (t < 64 && (seen_types >> t) & 1) continue;
    if (t < 64) seen_types |= 1 << t;
    compute_s = std::max(compute_s, compute_time_s(*profile, *type_specs_[static_cast<std::size_t>(t)], n));
  }
  CommPath& path = path_scratch_;
  topology_.comm_path(devices, path);
  // Uncontended, the slowest shared link still caps the ring.
  double bandwidth = path.private_bandwidth_Bps;
  for (int link : path.shared_links) bandwidth = std::min(bandwidth, topology_.link(link).capacity_Bps);
  const double bytes = gradient_allreduce_bytes(*profile);
  const double comm_s = ring_allreduce_time_s(n, bytes, bandwidth, path.latency_s);
  const double alone_s = schedsim::iteration_time_s(compute_s, comm_s, config_.overlap);
  return contended_iteration_s(alone_s, n > 1 ? 2.0 * (n - 1) / n * bytes : 0.0, shared_bandwidth_Bps);
}

double ClusterPhysics::reference_iteration_time_s(const JobSpec& job, int num_devices) const {
  if (planned(job)) {
    if (num_devices == job.num_gpus) return planned_reference_s(job);
    JobSpec resized = job;  // the reference placement of another device count
    resized.num_gpus = num_devices;
    return planned_reference_s(resized);
  }
  const WorkloadProfile* profile = profile_of(job);
  if (!profile) throw InvariantError("reference iteration time asked for job '" + job.id + "', which has no workload profile");
  const AcceleratorSpec& ref = reference_type(job);
  // A function of (profile, reference type, devices) and the fixed configuration: the RL
  // environment asks it for every placement it rates.
  const ComputeKey key{profile, &ref, num_devices};
  auto it = reference_cache_.find(key);
  if (it == reference_cache_.end()) it = reference_cache_.emplace(key, reference_iteration_uncached_s(profile, ref, num_devices)).first;
  return it->second;
}

double ClusterPhysics::reference_iteration_uncached_s(const WorkloadProfile* profile, const AcceleratorSpec& ref, int num_devices) const {
  const double compute_s = compute_time_s(*profile, ref, num_devices);
  if (num_devices <= 1) return compute_s;
  // Consolidated: inside one NVLink domain when the domain is large enough, else over
  // uncontended node NICs.
  int devices_per_node = 8;
  for (std::size_t i = 0; i < group_specs_.size(); ++i) {
    if (group_specs_[i] == &ref) {
      devices_per_node = cluster_.groups()[i].devices_per_node;
      break;
    }
  }
  const TopologyConfig& tc = topology_.config();
  double bandwidth = ref.intra_node_link_bytes_per_s;
  double latency = tc.nvlink_latency_us * 1e-6;
  if (num_devices > devices_per_node * tc.nodes_per_nvlink_domain) {
    const int nics = tc.nics_per_node.value_or(devices_per_node);
    bandwidth = std::min(bandwidth, nics * tc.nic_bandwidth_gbps * 1e9 / 8);
    latency = tc.network_latency_us * 1e-6;
  }
  const double comm_s = ring_allreduce_time_s(num_devices, gradient_allreduce_bytes(*profile), bandwidth, latency);
  return schedsim::iteration_time_s(compute_s, comm_s, config_.overlap);
}

// A job whose average all-reduce traffic (wire_bytes per iteration) gets only `share_Bps`
// on its shared links cannot iterate faster than wire_bytes / share_Bps; with its demand
// met (share >= wire_bytes / alone_s) it runs as if alone.
double ClusterPhysics::contended_iteration_s(double alone_s, double wire_bytes, double share_Bps) {
  if (!(share_Bps < MaxMinFairShare::kUnlimited) || wire_bytes <= 0) return alone_s;
  if (share_Bps >= wire_bytes / alone_s) return alone_s;
  return wire_bytes / share_Bps;
}

bool ClusterPhysics::shares_node(JobSlot slot, const std::vector<DeviceId>& devices) const {
  for (DeviceId d : devices) {
    for (JobSlot other : node_jobs_[static_cast<std::size_t>(cluster_.node_of(d))]) {
      if (other != slot) return true;
    }
  }
  return false;
}

void ClusterPhysics::cache_placement(const JobSpec& job, Placed& p) {
  if (p.planned) {
    // The plan's time alone; its DP traffic leaving the NVLink domains crosses the shared
    // links, a node's worth of devices through each (the ring enters and leaves each node,
    // rack and pod once per device's ring).
    const PlannedIteration it = planned_on(job, p.devices);
    if (!it.problem.empty()) throw InvariantError("job '" + job.id + "' was placed where its plan cannot run: " + it.problem);
    topology_.comm_path(p.devices, path_);
    p.compute_s = it.compute_s;
    p.fixed_bw_Bps = path_.private_bandwidth_Bps;
    p.latency_s = path_.latency_s;
    p.wire_bytes = it.dp_network_bytes_per_device * max_devices_on_a_node(cluster_, p.devices);
    p.alone_s = it.iteration_s;
    p.demand_Bps = p.alone_s > 0 ? p.wire_bytes / p.alone_s : 0.0;
    job_plans_[job.id] = it.plan;
    return;
  }
  const WorkloadProfile* profile = p.profile;
  if (!profile) return;
  const int n = static_cast<int>(p.devices.size());
  p.compute_s = 0.0;
  int last_type = -1;
  for (DeviceId d : p.devices) {
    const int t = cluster_.node(cluster_.node_of(d)).type_index;
    if (t == last_type) continue;
    last_type = t;
    p.compute_s = std::max(p.compute_s, compute_time_s(*profile, *type_specs_[static_cast<std::size_t>(t)], n));
  }
  topology_.comm_path(p.devices, path_);
  p.fixed_bw_Bps = path_.private_bandwidth_Bps;
  for (int link : path_.shared_links) p.fixed_bw_Bps = std::min(p.fixed_bw_Bps, topology_.link(link).capacity_Bps);
  p.latency_s = path_.latency_s;
  const double bytes = gradient_allreduce_bytes(*profile);
  p.wire_bytes = n > 1 ? 2.0 * (n - 1) / n * bytes : 0.0;
  p.alone_s = schedsim::iteration_time_s(p.compute_s, ring_allreduce_time_s(n, bytes, p.fixed_bw_Bps, p.latency_s), config_.overlap);
  p.demand_Bps = p.alone_s > 0 ? p.wire_bytes / p.alone_s : 0.0;
}

double ClusterPhysics::job_rate(const JobState& j, Placed& p) const {
  double rate = 1.0;
  if (p.profile || p.planned) {
    // Same arithmetic as iteration_time_s(), from the cached parts of the placement.
    const double t_iter = contended_iteration_s(p.alone_s, p.wire_bytes, p.flow >= 0 ? p.share_Bps : MaxMinFairShare::kUnlimited);
    rate = p.t_ref_s / t_iter;
    p.utilization = t_iter > 0.0 ? std::min(1.0, p.compute_s / t_iter) : 1.0;
  } else if (is_matrix_job(j.spec)) {
    rate = matrix_rate(j.spec, p.devices);
  } else if (j.spec.is_elastic()) {
    const double s = config_.elastic_serial_fraction;
    auto speedup = [s](double n) { return 1.0 / (s + (1.0 - s) / n); };
    rate = speedup(static_cast<double>(p.devices.size())) / speedup(j.spec.num_gpus);
  }
  return rate;
}

void ClusterPhysics::update_rates(const Simulator& sim, const std::vector<JobSlot>& changed, std::vector<std::pair<JobSlot, double>>& rates) {
  affected_.clear();
  bool flows_changed = false;
  auto touch_nodes = [&](JobSlot self, const std::vector<DeviceId>& devices) {
    if (config_.interference_factor >= 1.0) return;
    for (DeviceId d : devices) {
      for (JobSlot other : node_jobs_[static_cast<std::size_t>(cluster_.node_of(d))]) {
        if (other != self) affected_.push_back(other);
      }
    }
  };
  for (JobSlot slot : changed) {
    if (static_cast<std::size_t>(slot) >= placed_.size()) placed_.resize(static_cast<std::size_t>(slot) + 1);
    Placed& p = placed_[static_cast<std::size_t>(slot)];
    // Jobs per node only serve interference; without it they are not kept.
    const bool track_nodes = config_.interference_factor < 1.0;
    if (p.placed) {  // forget the old placement
      if (track_nodes) {
        for (DeviceId d : p.devices) {
          auto& list = node_jobs_[static_cast<std::size_t>(cluster_.node_of(d))];
          list.erase(std::remove(list.begin(), list.end(), slot), list.end());
        }
        touch_nodes(slot, p.devices);
      }
      if (p.flow >= 0) {
        fair_share_.remove_flow(p.flow);
        flow_slot_[static_cast<std::size_t>(p.flow)] = kNoJob;
        p.flow = -1;
        flows_changed = true;
      }
      p.placed = false;
    }
    if (!sim.is_live(slot)) continue;
    const JobState& j = sim.job(slot);
    if (j.devices.empty()) continue;
    if (p.arrival_seq != j.arrival_seq || p.t_ref_s == 0.0) {  // a new job in this slot
      p.arrival_seq = j.arrival_seq;
      p.planned = planned(j.spec);
      p.profile = p.planned ? nullptr : profile_of(j.spec);  // looked up once per job: a string hash
      p.t_ref_s = p.profile || p.planned ? reference_iteration_time_s(j.spec, j.spec.num_gpus) : 0.0;
    }
    p.devices = j.devices;
    p.placed = true;
    std::sort(p.devices.begin(), p.devices.end());
    p.devices.erase(std::unique(p.devices.begin(), p.devices.end()), p.devices.end());
    if (track_nodes) {
      for (DeviceId d : p.devices) {
        auto& list = node_jobs_[static_cast<std::size_t>(cluster_.node_of(d))];
        if (std::find(list.begin(), list.end(), slot) == list.end()) list.push_back(slot);
      }
      touch_nodes(slot, p.devices);
    }
    if (p.profile || p.planned) {
      cache_placement(j.spec, p);  // leaves the comm path in path_
      if (!path_.shared_links.empty() && p.demand_Bps > 0) {
        p.flow = fair_share_.add_flow(path_.shared_links, p.demand_Bps);
        p.share_Bps = -1.0;  // not applied yet
        flow_slot_.resize(std::max(flow_slot_.size(), static_cast<std::size_t>(p.flow) + 1), kNoJob);
        flow_slot_[static_cast<std::size_t>(p.flow)] = slot;
        flows_changed = true;
      }
    }
    affected_.push_back(slot);
  }
  if (flows_changed) {
    fair_share_.solve();
    // Only jobs whose share moved need a new rate.
    for (int f : fair_share_.last_solved_flows()) {
      const JobSlot s = flow_slot_[static_cast<std::size_t>(f)];
      if (s == kNoJob) continue;
      Placed& p = placed_[static_cast<std::size_t>(s)];
      const double share = fair_share_.rate_Bps(static_cast<int>(f));
      if (share != p.share_Bps) {
        p.share_Bps = share;
        affected_.push_back(s);
      }
    }
  }
  if (mark_.size() < placed_.size()) mark_.resize(placed_.size(), 0);
  for (JobSlot slot : affected_) {
    auto& m = mark_[static_cast<std::size_t>(slot)];
    if (m) continue;
    m = 1;
    Placed& p = placed_[static_cast<std::size_t>(slot)];
    if (!p.placed) continue;
    double rate = job_rate(sim.job(slot), p);
    if (config_.interference_factor < 1.0 && shares_node(slot, p.devices)) rate *= config_.interference_factor;
    rates.emplace_back(slot, rate);
  }
  for (JobSlot slot : affected_) mark_[static_cast<std::size_t>(slot)] = 0;
}

double ClusterPhysics::estimated_rate(const JobSpec& job, int type_index, int num_devices) const {
  const AcceleratorSpec& type = *type_specs_[static_cast<std::size_t>(type_index)];
  if (planned(job)) {
    // 0 where no plan fits (or the type has too few devices): policies then never offer it.
    int of_type = 0;
    for (int n = 0; n < cluster_.num_nodes(); ++n)
      if (cluster_.node(n).type_index == type_index) of_type += cluster_.node(n).num_devices;
    if (num_devices < 1 || of_type < num_devices) return 0.0;
    const PlannedIteration it = plan_model_->plan(job, type, num_devices, devices_per_node_of_type(type_index));
    if (!it.problem.empty()) return 0.0;
    return planned_reference_s(job) / it.iteration_s;
  }
  const WorkloadProfile* profile = profile_of(job);
  if (is_matrix_job(job)) {
    const auto v = measured_steps_per_s(job, type_index, num_devices, true);
    if (!v || !(*v > 0)) return 0.0;
    std::vector<DeviceId> probe;
    for (int n = 0; n < cluster_.num_nodes() && probe.empty(); ++n) {
      if (cluster_.node(n).type_index == type_index) probe.push_back(cluster_.node(n).first_device);
    }
    if (probe.empty()) return 0.0;
    probe.resize(static_cast<std::size_t>(num_devices), probe[0]);  // same node: consolidated
    return matrix_rate(job, probe);
  }
  if (!profile) {
    if (!job.is_elastic()) return 1.0;
    // Profile-less elastic jobs scale by Amdahl's law, as job_rate() runs them.
    const double s = config_.elastic_serial_fraction;
    auto speedup = [s](double n) { return 1.0 / (s + (1.0 - s) / n); };
    return speedup(num_devices) / speedup(job.num_gpus);
  }
  if (!fits_device_memory(*profile, type)) return 0.0;
  // The first num_devices devices of that type, in id order: consolidated when the
  // type's nodes allow it.
  std::vector<DeviceId> devices;
  for (int n = 0; n < cluster_.num_nodes() && static_cast<int>(devices.size()) < num_devices; ++n) {
    const NodeSpec& node = cluster_.node(n);
    if (node.type_index != type_index) continue;
    for (int k = 0; k < node.num_devices && static_cast<int>(devices.size()) < num_devices; ++k) devices.push_back(node.first_device + k);
  }
  if (static_cast<int>(devices.size()) < num_devices) return 0.0;
  return reference_iteration_time_s(job, job.num_gpus) / iteration_time_s(job, devices, MaxMinFairShare::kUnlimited);
}

double ClusterPhysics::uncontended_rate(const JobSpec& job, Span<DeviceId> devices) const {
  if (devices.empty() || !placement_problem(job, devices).empty()) return 0.0;
  if (planned(job) || profile_of(job)) {
    return reference_iteration_time_s(job, job.num_gpus) / iteration_time_s(job, devices, MaxMinFairShare::kUnlimited);
  }
  if (is_matrix_job(job)) return matrix_rate(job, std::vector<DeviceId>(devices.begin(), devices.end()));
  if (!job.is_elastic()) return 1.0;
  const double s = config_.elastic_serial_fraction;
  auto speedup = [s](double n) { return 1.0 / (s + (1.0 - s) / n); };
  return speedup(static_cast<double>(devices.size())) / speedup(job.num_gpus);
}

double ClusterPhysics::checkpoint_save_s(const JobSpec& job, int /*num_devices*/) const {
  if (planned(job)) return plan_model_->params(job) * config_.checkpoint_bytes_per_param / (config_.storage_bandwidth_gbps * 1e9);
  const WorkloadProfile* profile = profile_of(job);
  const double bytes = profile ? profile->params * config_.checkpoint_bytes_per_param : config_.default_checkpoint_gb * 1e9;
  return bytes / (config_.storage_bandwidth_gbps * 1e9);
}

double ClusterPhysics::compute_utilization(JobSlot slot) const {
  if (slot < 0 || static_cast<std::size_t>(slot) >= placed_.size() || !placed_[static_cast<std::size_t>(slot)].placed) return 1.0;
  return placed_[static_cast<std::size_t>(slot)].utilization;
}

double ClusterPhysics::checkpoint_restore_s(const JobSpec& job, int num_devices) const {
  return checkpoint_save_s(job, num_devices) + config_.restart_overhead_s;
}

int ClusterPhysics::devices_per_node_of_type(int type_index) const {
  for (int n = 0; n < cluster_.num_nodes(); ++n)
    if (cluster_.node(n).type_index == type_index) return cluster_.node(n).num_devices;
  return 8;
}

int ClusterPhysics::devices_per_node_of(const AcceleratorSpec& type) const {
  for (std::size_t i = 0; i < group_specs_.size(); ++i)
    if (group_specs_[i] == &type) return cluster_.groups()[i].devices_per_node;
  return 8;
}

PlannedIteration ClusterPhysics::planned_on(const JobSpec& job, Span<DeviceId> devices) const {
  // Synchronous training runs at the slowest type's pace; any type that cannot hold the
  // plan refuses the whole set.
  PlannedIteration worst;
  int seen_types = 0;  // bit set of type indices already evaluated (first 64 types)
  bool first = true;
  for (DeviceId d : devices) {
    const int t = cluster_.node(cluster_.node_of(d)).type_index;
    if (t < 64 && (seen_types >> t) & 1) continue;
    if (t < 64) seen_types |= 1 << t;
    PlannedIteration it = plan_model_->plan(job, *type_specs_[static_cast<std::size_t>(t)], static_cast<int>(devices.size()), devices_per_node_of_type(t));
    if (!it.problem.empty()) return it;
    if (first || it.iteration_s > worst.iteration_s) worst = std::move(it);
    first = false;
  }
  return worst;
}

// The plan on the job's device count of the reference type, consolidated and alone;
// when no plan fits the reference type's memory, the fastest plan as if it did.
double ClusterPhysics::planned_reference_s(const JobSpec& job) const {
  const int num_devices = job.num_gpus;
  const AcceleratorSpec& ref = reference_type(job);
  const int per_node = devices_per_node_of(ref);
  PlannedIteration it = plan_model_->plan(job, ref, num_devices, per_node);
  if (!it.problem.empty()) it = plan_model_->plan(job, ref, num_devices, per_node, true);
  if (!it.problem.empty()) {
    throw InputError("job '" + job.id + "' (" + job.model + ", " + std::to_string(num_devices) + " GPUs)",
                     "no reference iteration time on " + ref.name + ": " + it.problem);
  }
  return it.iteration_s;
}

std::string ClusterPhysics::plan_of(const std::string& job_id) const {
  auto it = job_plans_.find(job_id);
  return it == job_plans_.end() ? "" : it->second;
}

std::string ClusterPhysics::invariant_problem() const {
  const std::string p = fair_share_.solution_problem();
  return p.empty() ? p : "network: " + p;
}

}  // namespace schedsim
