// Inference services: a request-rate time series, replicas with a per-device-type
// capacity, the M/M/c latency model (sim/queueing_latency.hpp) with a p99 SLO, and the
// replica counts two autoscalers ask for. The policy that holds replicas, scales them and
// lends idle devices to elastic training is `inference` (policies/inference_autoscale.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/signals.hpp"
#include "sim/tick.hpp"

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

struct ServiceSpec {
  std::string name;
  std::string datacenter;  // "" = the whole cluster (or the first datacenter)
  RequestRate rate;
  int gpus_per_replica = 1;
  std::map<std::string, double> capacity_rps_by_type;  // requests/s one replica serves, by device type
  double slo_p99_s = 0.5;
  int min_replicas = 1;
  int max_replicas = 1;
};

// Smallest replica count c in [1, max_replicas] whose M/M/c p99 response time at
// `lambda` meets `slo_p99_s` (mu = one replica's service rate), or max_replicas when none does.
int replicas_for_slo(double lambda, double mu, double slo_p99_s, int max_replicas);
// ceil(lambda / (mu x target_utilization)), at least 1.
int replicas_for_utilization(double lambda, double mu, double target_utilization);
// Whether `replicas` meet the SLO at `lambda` (false when unstable or none).
bool meets_slo(double lambda, double mu, int replicas, double slo_p99_s);

}  // namespace schedsim
