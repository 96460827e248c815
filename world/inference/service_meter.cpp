#include "world/inference/service_meter.hpp"

#include <algorithm>

#include "world/geography/datacenters.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

ServiceSite service_site(const ServiceSpec& spec, std::size_t index, const ClusterSpec& cluster, const Geography* geo) {
  const std::string where = "inference.services[" + std::to_string(index) + "]";
  ServiceSite site;
  if (geo) {
    const int s = spec.datacenter.empty() ? 0 : geo->find(spec.datacenter);
    if (s < 0) throw InputError(where + ".datacenter", "service '" + spec.name + "' names datacenter '" + spec.datacenter + "', which the scenario does not have");
    site.first = geo->site(s).first_device;
    site.num = geo->site(s).num_devices;
  } else {
    if (!spec.datacenter.empty()) throw InputError(where + ".datacenter", "service '" + spec.name + "' names a datacenter but the scenario has no `datacenters:`");
    site.num = cluster.num_devices();
  }
  const std::string& type = cluster.device_type_of(site.first);
  if (spec.request_level && spec.capacity_rps_by_type.count(type) == 0) {
    throw InputError(where + ".deployment.device", "service '" + spec.name + "' deploys on " + spec.request_level->device_type() +
                                                       " but its replicas run on device type '" + type + "' (the first device type of its datacenter)");
  }
  const auto it = spec.capacity_rps_by_type.find(type);
  if (it == spec.capacity_rps_by_type.end()) {
    std::string listed;
    for (const auto& [t, v] : spec.capacity_rps_by_type) listed += (listed.empty() ? "" : ", ") + t;
    throw InputError(where + ".capacity_rps", "service '" + spec.name + "' has no capacity for device type '" + type +
                                                  "', where its replicas run (the first device type of its datacenter); it lists " + listed);
  }
  site.mu = it->second;
  return site;
}

ServiceMeter::ServiceMeter(std::shared_ptr<const std::vector<ServiceSpec>> services, const ClusterSpec& cluster, const Geography* geo)
    : specs_(std::move(services)) {
  for (std::size_t i = 0; specs_ && i < specs_->size(); ++i) {
    Service s;
    s.spec = &(*specs_)[i];
    s.mu = service_site(*s.spec, i, cluster, geo).mu;
    services_.push_back(std::move(s));
  }
}

void ServiceMeter::on_job_arrival(const JobState& /*job*/) {
  arrived_ = true;
  idle_ = false;  // the span goes on past the empty stretch
}

int ServiceMeter::in_service(const Simulator& sim, int k, const ServiceSpec& spec) const {
  const int whole = static_cast<int>(sim.service_devices(k).size()) / spec.gpus_per_replica;
  const int declared = source_ ? source_->replicas_in_service(k) : -1;
  return declared < 0 ? whole : std::min(declared, whole);
}

void ServiceMeter::add(Service& s, Tick from, Tick to) {
  const double dt = (to - from).seconds();
  s.totals.replica_s += s.in_service * dt;
  if (s.spec->request_level) return;  // its SLO is per request (the server's totals)
  const auto [it, inserted] = s.slo_met.try_emplace({s.rate, s.in_service}, false);
  if (inserted) it->second = meets_slo(s.rate, s.mu, s.in_service, s.spec->slo_p99_s);
  if (!it->second) s.totals.slo_violation_s += dt;
}

void ServiceMeter::after_event(const Simulator& sim) {
  const Tick now = sim.now();
  // The state changes at decision points (holds) and at rate steps; the integral is cut
  // there only (a cut elsewhere would change nothing but the rounding of the sums).
  const bool decided = sim.stats().decision_points != decisions_seen_;
  decisions_seen_ = sim.stats().decision_points;
  if (!arrived_) return;
  if (!started_) span_start_s_ = now.seconds();
  // While the system is empty the span may have ended (idle_since_): a server is not run
  // past it unless a job arrives (then it catches up, with the replicas it had).
  const bool past_span = idle_ && now > idle_since_;
  for (std::size_t k = 0; k < services_.size(); ++k) {
    Service& s = services_[k];
    if (s.server && !past_span) s.server->advance_to(now.seconds());
    if (!past_span) served_to_s_ = now.seconds();
    if (!started_) {
      s.last = now;
      s.rate = s.spec->rate.at(now);
    } else {
      for (Tick c = s.spec->rate.next_change(s.last); c <= now; c = s.spec->rate.next_change(c)) {
        add(s, s.last, c);
        s.last = c;
        s.rate = s.spec->rate.at(c);
      }
      if (decided && now > s.last) {
        add(s, s.last, now);
        s.last = now;
      }
    }
    s.in_service = in_service(sim, static_cast<int>(k), *s.spec);
    s.totals.peak_replicas = std::max(s.totals.peak_replicas, s.in_service);
    if (s.spec->request_level) {
      // Replicas in service at the span's first instant were loaded before it: a server
      // started again then serves them from the start, without a model load.
      if (!s.server || (now.seconds() == span_start_s_ && s.server->replicas() != s.in_service)) {
        s.server = s.spec->request_level->start(now.seconds(), s.in_service);
      } else if (!past_span && s.server->replicas() != s.in_service) {
        s.server->set_replicas(now.seconds(), s.in_service);
      }
    }
  }
  started_ = true;
  if (sim.num_pending() + sim.num_running() == 0) {
    if (!idle_) {
      idle_ = true;
      idle_since_ = now;
    }
    if (now == idle_since_) {  // the last state of that instant
      idle_totals_.clear();
      for (const Service& s : services_) idle_totals_.push_back(s.totals);
    }
  } else {
    idle_ = false;
  }
}

std::vector<ServiceMetrics> ServiceMeter::metrics() const {
  std::vector<ServiceMetrics> out;
  for (std::size_t k = 0; k < services_.size(); ++k) {
    const Totals& t = idle_ && k < idle_totals_.size() ? idle_totals_[k] : services_[k].totals;
    ServiceMetrics m;
    m.name = services_[k].spec->name;
    m.slo_violation_s = t.slo_violation_s;
    m.replica_s = t.replica_s;
    m.peak_replicas = t.peak_replicas;
    if (const RequestServer* server = services_[k].server.get()) {
      m.requests = server->totals(std::max(0.0, served_to_s_ - span_start_s_));
    } else if (services_[k].spec->request_level) {
      m.requests = RequestLevelTotals{};  // the span never began
    }
    out.push_back(std::move(m));
  }
  return out;
}

void ServiceMeter::snapshot(SnapshotArchive& ar) {
  for (const Service& s : services_) {
    // Its engine's queues, batches and KV caches are not saved (docs/energy.md#inference-services).
    if (s.spec->request_level) throw SnapshotUnsupported("request-level inference service '" + s.spec->name + "' (its serving engine's state)");
  }
  ar.section("service meter");
  std::uint64_t n = services_.size();
  ar(n);
  ar.check(n == services_.size(), "the inference services differ from this configuration's");
  auto totals = [&](Totals& t) { ar(t.slo_violation_s, t.replica_s, t.peak_replicas); };
  for (Service& s : services_) {
    ar(s.last, s.rate, s.in_service);
    totals(s.totals);
  }
  ar(arrived_, started_, decisions_seen_, idle_, idle_since_);
  std::uint64_t idle_n = idle_totals_.size();
  ar(idle_n);
  ar.check(idle_n <= services_.size(), "more idle totals than services");
  if (ar.loading()) idle_totals_.resize(idle_n);
  for (Totals& t : idle_totals_) totals(t);
}

namespace {
template <typename Integer>
std::optional<double> count_value(Integer n) {
  return std::optional<double>(static_cast<double>(n));
}
}  // namespace

const std::vector<ValueField<ServiceMetrics>>& service_fields() {
  using F = ValueField<ServiceMetrics>;
  using M = ServiceMetrics;
  static const std::vector<F> fields = {
      // A request-level service's SLO is per request (its `requests` totals): null here.
      {"slo_violation_minutes", "min", F::Kind::kReal,
       [](const M& m) { return m.requests ? std::nullopt : std::optional<double>(m.slo_violation_s / 60.0); }, nullptr},
      {"replica_hours", "h", F::Kind::kReal, [](const M& m) { return std::optional<double>(m.replica_s / 3600.0); }, nullptr},
      {"borrowed_gpu_hours", "h", F::Kind::kReal, [](const M& m) { return std::optional<double>(m.borrowed_device_s / 3600.0); }, nullptr},
      {"lends", "", F::Kind::kCount, [](const M& m) { return count_value(m.lends); }, nullptr},
      {"reclaims", "", F::Kind::kCount, [](const M& m) { return count_value(m.reclaims); }, nullptr},
      {"peak_replicas", "", F::Kind::kCount, [](const M& m) { return count_value(m.peak_replicas); }, nullptr},
  };
  return fields;
}

const std::vector<ValueField<RequestLevelTotals>>& request_count_fields() {
  using F = ValueField<RequestLevelTotals>;
  using T = RequestLevelTotals;
  static const std::vector<F> fields = {
      {"arrived", "", F::Kind::kCount, [](const T& t) { return count_value(t.arrived); }, nullptr},
      {"finished", "", F::Kind::kCount, [](const T& t) { return count_value(t.finished); }, nullptr},
  };
  return fields;
}

const std::vector<ValueField<RequestLatency>>& request_latency_fields() {
  using F = ValueField<RequestLatency>;
  using L = RequestLatency;
  static const std::vector<F> fields = {
      {"mean_s", "s", F::Kind::kReal, [](const L& l) { return std::optional<double>(l.mean_s); }, nullptr},
      {"p50_s", "s", F::Kind::kReal, [](const L& l) { return std::optional<double>(l.p50_s); }, nullptr},
      {"p90_s", "s", F::Kind::kReal, [](const L& l) { return std::optional<double>(l.p90_s); }, nullptr},
      {"p99_s", "s", F::Kind::kReal, [](const L& l) { return std::optional<double>(l.p99_s); }, nullptr},
      {"max_s", "s", F::Kind::kReal, [](const L& l) { return std::optional<double>(l.max_s); }, nullptr},
  };
  return fields;
}

const std::vector<ValueField<RequestLevelTotals>>& request_rate_fields() {
  using F = ValueField<RequestLevelTotals>;
  using T = RequestLevelTotals;
  static const std::vector<F> fields = {
      {"slo_attainment", "", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.slo_attainment); }, nullptr},
      {"goodput_rps", "1/s", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.goodput_rps); }, nullptr},
      {"output_tokens_per_s", "1/s", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.output_tokens_per_s); }, nullptr},
      {"preemptions", "", F::Kind::kCount, [](const T& t) { return count_value(t.preemptions); }, nullptr},
      {"replica_changes", "", F::Kind::kCount, [](const T& t) { return count_value(t.replica_changes); }, nullptr},
      {"busy_replica_hours", "h", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.busy_replica_s / 3600.0); }, nullptr},
      {"active_replica_hours", "h", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.active_replica_s / 3600.0); }, nullptr},
      {"energy_kwh", "kWh", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.energy_j / 3.6e6); }, nullptr},
  };
  return fields;
}

}  // namespace schedsim
