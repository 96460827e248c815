// Several datacenters: the geography of a run. The simulator's cluster is the
// concatenation of the datacenters' clusters (site 0's nodes first), so a datacenter is a
// contiguous range of nodes and devices; each has its own PUE, UTC offset and price /
// carbon signals. WAN links join every pair of sites. A job runs inside one datacenter at
// a time (the kernel rejects a placement that spans two, or one outside the job's allowed
// regions), and moving it to another datacenter costs the transfer of its checkpoint over
// the WAN link plus a restart:
//
//     relocation_s = latency_s + checkpoint_bytes x 8 / bandwidth_bit_s + restart_s
//
// A job's home region and allowed regions come from its JobSpec (home_region,
// allowed_regions); a job without a home gets one drawn from the configured weights by a
// hash of (seed, job id), so the assignment does not depend on the policy or on timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/job.hpp"
#include "sim/job_view.hpp"
#include "base/signals.hpp"
#include "base/span.hpp"

namespace schedsim {

struct WanLink {
  double bandwidth_bit_s = 10e9;  // bits per second
  double latency_s = 0.05;
};

struct Datacenter {
  std::string name;
  double pue = 1.0;
  double utc_offset_h = 0.0;        // local time = UTC + offset (for local-time load curves)
  const GridSignals* signals = nullptr;  // may be null (no price / carbon for this site)
  int first_node = 0, num_nodes = 0;
  DeviceId first_device = 0;
  int num_devices = 0;
};

struct GeographyOptions {
  double checkpoint_gb = 10.0;   // bytes moved per relocation, in GB (1e9 bytes)
  double restart_s = 60.0;       // process start and state load in the new site
  std::vector<double> home_weights;  // by site; empty = equal
  bool allowed_home_only = false;    // jobs without allowed_regions may run only at home
  std::uint64_t seed = 0;            // for home draws
};

class Geography {
 public:
  // `sites` in cluster order (node ranges contiguous and covering the cluster); `wan` is
  // sites x sites (the diagonal is unused). Throws InvariantError on inconsistent ranges.
  Geography(const ClusterSpec& cluster, std::vector<Datacenter> sites, std::vector<std::vector<WanLink>> wan, GeographyOptions options);

  int num_sites() const { return static_cast<int>(sites_.size()); }
  const Datacenter& site(int s) const { return sites_[static_cast<std::size_t>(s)]; }
  int site_of_device(DeviceId d) const { return device_site_[static_cast<std::size_t>(d)]; }
  int find(const std::string& name) const;  // -1 when unknown
  const WanLink& link(int from, int to) const { return wan_[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)]; }
  const GeographyOptions& options() const { return options_; }

  // Seconds to send `bytes` from one site to another: latency + bits / bandwidth; 0 within a site.
  double transfer_s(int from, int to, double bytes) const;
  // Checkpoint transfer plus restart when the job moves between sites; 0 when from == to
  // or from < 0 (the job never ran).
  double relocation_s(int from, int to) const;

  // The job's home site and whether it may run in site `s`. Throw InputError naming the
  // job when it names a region that is not a datacenter of the scenario.
  int home_site(const JobSpec& job) const;
  bool allowed(const JobSpec& job, int s) const;
  // The datacenters a placement tries for `job`: its home first (when allowed), then the
  // others it may run in, in order.
  std::vector<int> placement_order(const JobSpec& job) const;
  // Why `job` may not run on `devices` (spans datacenters, or a region it is not allowed
  // in), or "".
  std::string placement_problem(const JobSpec& job, Span<DeviceId> devices) const;
  // The same for policies, which see a job only through its JobView.
  int home_site(const JobView& job) const { return home_site(job.request()); }
  bool allowed(const JobView& job, int s) const { return allowed(job.request(), s); }
  std::vector<int> placement_order(const JobView& job) const { return placement_order(job.request()); }
  std::string placement_problem(const JobView& job, Span<DeviceId> devices) const { return placement_problem(job.request(), devices); }

 private:
  int site_by_name(const JobSpec& job, const std::string& name) const;
  std::vector<Datacenter> sites_;
  std::vector<std::vector<WanLink>> wan_;
  GeographyOptions options_;
  std::vector<int> device_site_;
  std::vector<double> cumulative_weight_;
};

}  // namespace schedsim
