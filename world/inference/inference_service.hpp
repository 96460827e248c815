// Inference services: a request-rate time series, replicas with a per-device-type
// capacity, the M/M/c latency model (sim/queueing_latency.hpp) with a p99 SLO, and the
// replica counts two autoscalers ask for. The policy that holds replicas, scales them and
// lends idle devices to elastic training is `inference` (policies/inference_autoscale.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/signals.hpp"
#include "base/tick.hpp"

namespace schedsim {

// A multiplicative event on the request rate over simulated [start_s, end_s): a burst
// (factor > 1) or a sudden drop (factor < 1).
struct RateEvent {
  double start_s = 0.0, end_s = 0.0;
  double factor = 1.0;
};

// Requests per second as a step function of simulated time: a base series (a diurnal
// curve in local time, or a loaded CSV in UTC) times the events that cover the instant.
class RequestRate {
 public:
  // mean + amplitude x cos(2 pi (local hour - peak_hour_local) / 24), local = UTC +
  // utc_offset_h, in steps of step_s (each step holds the value at its middle).
  static RequestRate diurnal(double mean_rps, double amplitude_rps, double peak_hour_local, double utc_offset_h, double step_s,
                             std::int64_t origin_utc_us);
  static RequestRate series(std::shared_ptr<const StepSeries> base, std::int64_t origin_utc_us);
  void add_event(const RateEvent& e) { events_.push_back(e); }
  const std::vector<RateEvent>& events() const { return events_; }

  double at(Tick t) const;          // with events
  double base_at(Tick t) const;     // without events (what a forecast of the curve knows)
  // The first instant after t at which the rate may change (Tick::max() for none).
  Tick next_change(Tick t) const;
  // The largest base rate over [a, b] (events excluded: bursts are not forecast).
  double max_base(Tick a, Tick b) const;

 private:
  std::shared_ptr<const StepSeries> base_;
  std::int64_t origin_utc_us_ = 0;
  std::vector<RateEvent> events_;
};

// Latency percentiles of a request-level service's finished requests, seconds.
struct RequestLatency {
  double mean_s = 0.0, p50_s = 0.0, p90_s = 0.0, p99_s = 0.0, max_s = 0.0;
};

// What a request-level service did over the metered span (results.json ->
// inference[i].requests). Requests that arrived in the span but had not finished at its
// end count as misses in slo_attainment and are left out of the latencies.
struct RequestLevelTotals {
  std::int64_t arrived = 0;          // requests submitted (arrived within the span)
  std::int64_t finished = 0;
  RequestLatency ttft, tpot, e2e;    // over finished requests
  double slo_attainment = 0.0;       // share of arrived requests finished within both the TTFT and TPOT SLOs
  double goodput_rps = 0.0;          // those requests per second of the span
  double output_tokens_per_s = 0.0;  // finished requests' output tokens per second of the span
  std::int64_t preemptions = 0;      // KV-cache evictions
  std::int64_t replica_changes = 0;  // set_replicas calls that changed the count
  double busy_replica_s = 0.0;       // replica-seconds in batch iterations
  double active_replica_s = 0.0;     // replica-seconds up (loading the model included)
  double energy_j = 0.0;             // devices of up replicas: busy at TDP-based power, idle at idle power
};

// One run's serving of a request-level service. The service meter (sim/service_meter.hpp)
// drives it with the kernel's clock: it never adds events to the kernel. Implemented over
// serving::ServingEngine in experiments/request_service.hpp (sim does not link serving/).
class RequestServer {
 public:
  virtual ~RequestServer() = default;
  // Submits the stream's requests that arrive up to t_s and serves up to t_s (non-decreasing).
  virtual void advance_to(double t_s) = 0;
  // From t_s on, `replicas` serve; added ones take requests after the model load.
  virtual void set_replicas(double t_s, int replicas) = 0;
  virtual int replicas() const = 0;
  // The totals over [start, t_s], t_s the last advance_to().
  virtual RequestLevelTotals totals(double span_s) const = 0;
  // One row per finished request (requests.csv): header and rows, 17 significant digits.
  virtual void write_requests_csv(std::ostream& out) const = 0;
};

// A request-level service's deployment and request stream: starts its server for a run.
class RequestLevelModel {
 public:
  virtual ~RequestLevelModel() = default;
  // A server whose stream starts at the first request arriving at or after start_s, with
  // `replicas` up from start_s (they were loaded before the metered span began).
  virtual std::unique_ptr<RequestServer> start(double start_s, int replicas) const = 0;
  // Catalogue name of the device type its replicas run on (deployment.device).
  virtual const std::string& device_type() const = 0;
};

struct ServiceSpec {
  std::string name;
  std::string datacenter;  // "" = the whole cluster (or the first datacenter)
  RequestRate rate;
  int gpus_per_replica = 1;
  std::map<std::string, double> capacity_rps_by_type;  // requests/s one replica serves, by device type
  double slo_p99_s = 0.5;
  int min_replicas = 1;
  int max_replicas = 1;
  // Request-level service (deployment + request stream + TTFT/TPOT SLO): the meter runs
  // its server and `rate` is its stream's arrivals binned per step (what the autoscalers
  // read); slo_p99_s is not used. Null: a replica-level service (M/M/c, slo_p99_s).
  std::shared_ptr<const RequestLevelModel> request_level;
  bool is_request_level() const { return request_level != nullptr; }
};

// Smallest replica count c in [1, max_replicas] whose M/M/c p99 response time at
// `lambda` meets `slo_p99_s` (mu = one replica's service rate), or max_replicas when none does.
int replicas_for_slo(double lambda, double mu, double slo_p99_s, int max_replicas);
// ceil(lambda / (mu x target_utilization)), at least 1.
int replicas_for_utilization(double lambda, double mu, double target_utilization);
// Whether `replicas` meet the SLO at `lambda` (false when unstable or none).
bool meets_slo(double lambda, double mu, int replicas, double slo_p99_s);

}  // namespace schedsim
