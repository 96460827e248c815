#include "world/geography/datacenters.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/rng.hpp"

namespace schedsim {

Geography::Geography(const ClusterSpec& cluster, std::vector<Datacenter> sites, std::vector<std::vector<WanLink>> wan, GeographyOptions options)
    : sites_(std::move(sites)), wan_(std::move(wan)), options_(std::move(options)) {
  if (sites_.empty()) throw InvariantError("Geography: no datacenter");
  if (wan_.size() != sites_.size()) throw InvariantError("Geography: the WAN matrix must be sites x sites");
  device_site_.assign(static_cast<std::size_t>(cluster.num_devices()), -1);
  int next_node = 0;
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    Datacenter& dc = sites_[s];
    if (wan_[s].size() != sites_.size()) throw InvariantError("Geography: the WAN matrix must be sites x sites");
    if (dc.first_node != next_node || dc.num_nodes < 1 || dc.first_node + dc.num_nodes > cluster.num_nodes()) {
      throw InvariantError("Geography: datacenter '" + dc.name + "' does not cover the next contiguous node range");
    }
    next_node += dc.num_nodes;
    dc.first_device = cluster.node(dc.first_node).first_device;
    const NodeSpec& last = cluster.node(dc.first_node + dc.num_nodes - 1);
    dc.num_devices = last.first_device + last.num_devices - dc.first_device;
    for (DeviceId d = dc.first_device; d < dc.first_device + dc.num_devices; ++d) device_site_[static_cast<std::size_t>(d)] = static_cast<int>(s);
  }
  if (next_node != cluster.num_nodes()) throw InvariantError("Geography: the datacenters do not cover every node of the cluster");
  std::vector<double> w = options_.home_weights;
  if (w.empty()) w.assign(sites_.size(), 1.0);
  if (w.size() != sites_.size()) throw InvariantError("Geography: one home weight per datacenter expected");
  double sum = 0.0;
  for (double x : w) {
    if (!(x >= 0.0)) throw InvariantError("Geography: negative home weight");
    sum += x;
    cumulative_weight_.push_back(sum);
  }
  if (!(sum > 0.0)) throw InvariantError("Geography: the home weights sum to 0");
}

int Geography::find(const std::string& name) const {
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    if (sites_[s].name == name) return static_cast<int>(s);
  }
  return -1;
}

double Geography::transfer_s(int from, int to, double bytes) const {
  if (from == to) return 0.0;
  const WanLink& l = link(from, to);
  return l.latency_s + bytes * 8.0 / l.bandwidth_bit_s;
}

double Geography::relocation_s(int from, int to) const {
  if (from < 0 || from == to) return 0.0;
  return transfer_s(from, to, options_.checkpoint_gb * 1e9) + options_.restart_s;
}

int Geography::site_by_name(const JobSpec& job, const std::string& name) const {
  const int s = find(name);
  if (s >= 0) return s;
  std::string known;
  for (const auto& dc : sites_) known += (known.empty() ? "" : ", ") + dc.name;
  throw InputError("job '" + job.id + "'" + (job.source_line > 0 ? " (line " + std::to_string(job.source_line) + ")" : std::string()),
                   "region '" + name + "' is not a datacenter of the scenario (" + known + ")");
}

int Geography::home_site(const JobSpec& job) const {
  if (!job.home_region.empty()) return site_by_name(job, job.home_region);
  if (sites_.size() == 1) return 0;
  const double u = Rng(options_.seed, "home:" + job.id).uniform() * cumulative_weight_.back();
  const auto it = std::upper_bound(cumulative_weight_.begin(), cumulative_weight_.end(), u);
  return std::min(static_cast<int>(it - cumulative_weight_.begin()), num_sites() - 1);
}

std::vector<int> Geography::placement_order(const JobSpec& job) const {
  std::vector<int> out;
  const int home = home_site(job);
  if (allowed(job, home)) out.push_back(home);
  for (int s = 0; s < num_sites(); ++s)
    if (s != home && allowed(job, s)) out.push_back(s);
  return out;
}

bool Geography::allowed(const JobSpec& job, int s) const {
  if (!job.allowed_regions.empty()) {
    for (const std::string& r : job.allowed_regions) {
      if (site_by_name(job, r) == s) return true;
    }
    return false;
  }
  return !options_.allowed_home_only || home_site(job) == s;
}

std::string Geography::placement_problem(const JobSpec& job, Span<DeviceId> devices) const {
  if (devices.size() == 0) return "";
  const int s = site_of_device(devices[0]);
  for (DeviceId d : devices) {
    if (site_of_device(d) != s) {
      return "devices " + std::to_string(devices[0]) + " and " + std::to_string(d) + " are in different datacenters ('" + sites_[static_cast<std::size_t>(s)].name +
             "', '" + sites_[static_cast<std::size_t>(site_of_device(d))].name + "'); a job runs inside one datacenter";
    }
  }
  if (!allowed(job, s)) return "the job may not run in datacenter '" + sites_[static_cast<std::size_t>(s)].name + "'";
  return "";
}

}  // namespace schedsim
