// The world's SLO meter of the scenario's inference services (`inference:`,
// sim/inference_service.hpp): it runs under every policy, whoever scales the services
// (the autoscaler is a policy decorator, policies/inference_autoscale.hpp). It integrates,
// per service, the replicas actually in service and the SLO (the p99 response time of
// M/M/c at the request rate and those replicas, sim/queueing_latency.hpp) over the
// workload's span: from the first job's arrival to the last job's end (when nothing is
// left to arrive). Replicas in service are whole replicas (gpus_per_replica devices) of
// the devices the kernel says the service holds (Simulator::service_devices, what
// ActionBatch::hold set), capped by what the autoscaler declares active when it says
// (ServiceReplicaSource: the rest of its pool is an idle reserve). A service nobody
// holds devices for has no replica: its SLO is violated whenever requests arrive.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "world/inference/inference_service.hpp"
#include "sim/observer.hpp"
#include "sim/output_fields.hpp"
#include "base/tick.hpp"

namespace schedsim {

class Geography;

// One service's metrics (results.json -> inference). The meter fills name, the SLO and
// replica fields; the autoscaler that lends pool devices (policies/inference_autoscale.hpp)
// the borrowing fields (0 without lending).
struct ServiceMetrics {
  std::string name;
  double slo_violation_s = 0.0;
  double replica_s = 0.0;          // replicas in service x time
  double borrowed_device_s = 0.0;  // pool devices lent to training x time
  std::uint64_t lends = 0;         // jobs grown onto lent devices
  std::uint64_t reclaims = 0;      // jobs shrunk to give devices back
  int peak_replicas = 0;
  // A request-level service's request totals (its slo_violation_s is not metered: the
  // SLO is per request, in requests->slo_attainment).
  std::optional<RequestLevelTotals> requests;
};

// results.json's "inference" numbers as field tables (sim/output_fields.hpp), in file
// order. A service: its numbers after its "name" (then "requests" when request-level).
// A service's "requests": the counts, then "ttft", "tpot", "e2e" (each one latency
// table), then the rest.
const std::vector<ValueField<ServiceMetrics>>& service_fields();
const std::vector<ValueField<RequestLevelTotals>>& request_count_fields();
const std::vector<ValueField<RequestLatency>>& request_latency_fields();
const std::vector<ValueField<RequestLevelTotals>>& request_rate_fields();

// Where a service's replicas run: its datacenter's devices [first, first + num) and one
// replica's service rate mu there (capacity_rps of the datacenter's first device type).
struct ServiceSite {
  DeviceId first = 0;
  int num = 0;
  double mu = 0.0;
};
// Throws InputError naming `inference.services[i]...` when the service's datacenter is
// unknown or capacity_rps lacks the device type its replicas run on.
ServiceSite service_site(const ServiceSpec& spec, std::size_t index, const ClusterSpec& cluster, const Geography* geo);

// Implemented by an autoscaler whose held pool is larger than its active replicas.
class ServiceReplicaSource {
 public:
  virtual ~ServiceReplicaSource() = default;
  // Replicas of service `k` active now (-1: every held device serves).
  virtual int replicas_in_service(int k) const = 0;
};

class ServiceMeter : public Observer {
 public:
  ServiceMeter(std::shared_ptr<const std::vector<ServiceSpec>> services, const ClusterSpec& cluster, const Geography* geo);
  // The autoscaler that declares active replicas (may be null: all held devices serve).
  void read_replicas_from(const ServiceReplicaSource* source) { source_ = source; }
  void on_job_arrival(const JobState& job) override;
  void after_event(const Simulator& sim) override;
  // By service, in the order of `inference.services`.
  std::vector<ServiceMetrics> metrics() const;
  // A request-level service's server (null for replica-level ones, or before the span began).
  const RequestServer* request_server(std::size_t k) const { return k < services_.size() ? services_[k].server.get() : nullptr; }
  void snapshot(SnapshotArchive& ar) override;

 private:
  struct Totals {
    double slo_violation_s = 0.0, replica_s = 0.0;
    int peak_replicas = 0;
  };
  struct Service {
    const ServiceSpec* spec = nullptr;
    double mu = 0.0;
    Tick last;            // metered up to here
    double rate = 0.0;    // on [last, next change)
    int in_service = 0;   // since the last event
    Totals totals;
    std::map<std::pair<double, int>, bool> slo_met;  // meets_slo() by (rate, replicas): few distinct pairs
    std::unique_ptr<RequestServer> server;  // request-level services, from the span's start
  };
  void add(Service& s, Tick from, Tick to);
  int in_service(const Simulator& sim, int k, const ServiceSpec& spec) const;

  std::shared_ptr<const std::vector<ServiceSpec>> specs_;
  const ServiceReplicaSource* source_ = nullptr;
  std::vector<Service> services_;
  bool arrived_ = false;   // a job arrived: the workload's span has begun
  bool started_ = false;
  std::uint64_t decisions_seen_ = 0;
  // The system was empty since idle_since_ (nothing pending or running): unless a job
  // arrives later, the span ended there and idle_totals_ are the result.
  bool idle_ = false;
  Tick idle_since_;
  std::vector<Totals> idle_totals_;
  double span_start_s_ = 0.0;  // request-level services: the span served, [start, served_to]
  double served_to_s_ = 0.0;
};

}  // namespace schedsim
