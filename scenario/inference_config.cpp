#include "scenario/inference_config.hpp"

#include <cmath>

#include "serving/request_service.hpp"
#include "policies/inference_autoscale.hpp"
#include "base/error.hpp"
#include "traces/signal_files.hpp"

namespace schedsim {

namespace {
std::vector<RateEvent> parse_events(const ConfigNode& list, bool bursts, YAML::Node& out) {
  std::vector<RateEvent> events;
  if (!list.is_sequence()) list.fail("expected a list of {start_s, duration_s, factor}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode e = list.at(i);
    e.expect_map({"start_s", "duration_s", "factor"});
    RateEvent r;
    r.start_s = e.child("start_s").as_nonnegative_double();
    r.end_s = r.start_s + e.child("duration_s").as_positive_double();
    // Within the simulated clock's range (sim/tick.cpp), which would otherwise stop the run
    // with a message naming no key.
    if (r.end_s > 1e12) e.fail("start_s + duration_s is " + std::to_string(r.end_s) + " s, over 10^12 seconds (about 31,700 years)");
    const ConfigNode f = e.child("factor");
    r.factor = f.as_nonnegative_double();
    if (bursts && !(r.factor > 1.0)) f.fail("a burst multiplies the rate by a factor > 1, got " + std::to_string(r.factor));
    if (!bursts && !(r.factor < 1.0)) f.fail("a drop multiplies the rate by a factor in [0, 1), got " + std::to_string(r.factor));
    events.push_back(r);
    YAML::Node n(YAML::NodeType::Map);
    n["start_s"] = r.start_s;
    n["duration_s"] = r.end_s - r.start_s;
    n["factor"] = r.factor;
    out.push_back(n);
  }
  return events;
}
}  // namespace

namespace {

// Keys of a replica-level service that a request-level one does not use, and why.
void refuse_replica_level_keys(const ConfigNode& n) {
  const std::pair<const char*, const char*> unused[] = {
      {"rate", "its load is its request stream (`requests`)"},
      {"bursts", "its load is its request stream (`requests`)"},
      {"drops", "its load is its request stream (`requests`)"},
      {"utc_offset_h", "its request stream is in simulated time"},
      {"gpus_per_replica", "its replicas have deployment.tensor_parallel devices"},
      {"slo_p99_s", "its SLO is `slo: {ttft_s, tpot_s}`"},
  };
  for (const auto& [key, why] : unused) {
    if (auto k = n.maybe_child(key)) k->fail(std::string("not used by a request-level service (one with `requests`): ") + why);
  }
}

// `request_copies: N`: the trace, stretched to duration_s without its diurnal warp, played
// N times back to back within that duration (N x the rate, each copy the trace's own
// pattern), then warped by the diurnal shape: N x the load with the same daily curve.
std::vector<serving::Request> replay_copies(const ConfigNode& req, int copies) {
  YAML::Node plain = YAML::Clone(req.yaml());
  plain["trace"] = req.child("trace").as_path();  // resolved against the YAML file's folder
  plain.remove("diurnal");
  const std::vector<serving::Request> base = serving::requests_from_yaml(ConfigNode(plain, req.source(), req.path()));
  const double span_s = req.has("duration_s") ? req.child("duration_s").as_positive_double() : base.back().arrival_s;
  std::vector<serving::Request> out;
  out.reserve(base.size() * static_cast<std::size_t>(copies));
  for (int j = 0; j < copies; ++j) {
    for (const serving::Request& q : base) {
      serving::Request c = q;
      c.id = static_cast<std::int64_t>(out.size());
      c.arrival_s = (q.arrival_s + j * span_s) / copies;
      out.push_back(c);
    }
  }
  if (auto d = req.maybe_child("diurnal")) {
    serving::DiurnalShape shape;
    shape.amplitude = d->child("amplitude").as_nonnegative_double();
    if (auto p = d->maybe_child("peak_hour")) shape.peak_hour = p->as_nonnegative_double();
    out = serving::rescale_time(std::move(out), span_s, &shape);
  }
  return out;
}

// The service's request-level half: stream, deployment, SLO, model load and capacity.
void parse_request_level(const ConfigNode& n, const std::string& site_type, const AcceleratorCatalogue& catalogue, std::int64_t origin_utc_us,
                         ServiceSpec& s, YAML::Node& r) {
  refuse_replica_level_keys(n);
  RequestServiceSpec rs;
  rs.name = s.name;
  const ConfigNode req = n.child("requests");
  std::vector<serving::Request> stream = serving::requests_from_yaml(req);  // checks every key
  if (stream.empty()) req.fail("the stream has no requests");
  if (auto c = n.maybe_child("request_copies")) {
    const std::int64_t asked = c->as_positive_int();
    if (asked > 1 && !req.has("trace")) c->fail("replays a trace; for a synthetic stream raise its rate_rps instead");
    // A run holds every request of the stream (and a record of each finished one).
    constexpr double kMaxRequests = 1e8;
    if (static_cast<double>(stream.size()) * static_cast<double>(asked) > kMaxRequests) {
      c->fail(std::to_string(asked) + " copies of " + std::to_string(stream.size()) + " requests would be more than the 100,000,000 requests a run holds");
    }
    const int copies = static_cast<int>(asked);  // <= 1e8 by the check
    if (copies > 1) stream = replay_copies(req, copies);
    r["request_copies"] = copies;
  }
  rs.requests = std::make_shared<const std::vector<serving::Request>>(std::move(stream));
  const ConfigNode dep = n.child("deployment");
  rs.deployment = serving::deployment_from_yaml(dep, catalogue);
  if (catalogue.get(site_type).name != rs.deployment.device.name) {
    (dep.has("device") ? dep.child("device") : dep)
        .fail("is " + rs.deployment.device.name + ", but the replicas of service '" + s.name + "' run on device type '" + site_type +
              "' (the first device type of its datacenter)");
  }
  rs.slo = serving::slo_from_yaml(n.child("slo"));
  rs.model_load_s = default_model_load_s(rs.deployment);
  if (auto m = n.maybe_child("model_load_s")) rs.model_load_s = m->as_nonnegative_double();
  double step_s = 300.0;
  if (auto st = n.maybe_child("rate_step_s")) step_s = st->as_positive_double();
  if (auto w = n.maybe_child("requests_csv")) rs.requests_csv = w->as_bool();
  r["requests_csv"] = rs.requests_csv;
  s.gpus_per_replica = rs.deployment.tensor_parallel;
  s.rate = RequestRate::series(std::make_shared<const StepSeries>(arrival_rate_series(*rs.requests, step_s, origin_utc_us)), origin_utc_us);
  if (auto cap = n.maybe_child("capacity_rps")) {
    if (!cap->is_map() || cap->keys().empty()) cap->fail("expected a map from device type to requests/s one replica serves, e.g. {" + site_type + ": 8}");
    for (const std::string& type : cap->keys()) s.capacity_rps_by_type[type] = cap->child(type).as_positive_double();
    if (s.capacity_rps_by_type.count(site_type) == 0) cap->fail("lists no capacity for device type '" + site_type + "', where the replicas of service '" + s.name + "' run");
  } else {
    s.capacity_rps_by_type[site_type] = saturation_capacity_rps(rs.deployment, *rs.requests);
  }
  r["requests"] = YAML::Clone(req.yaml());
  r["deployment"] = YAML::Clone(dep.yaml());
  r["slo"]["ttft_s"] = rs.slo.ttft_s;
  r["slo"]["tpot_s"] = rs.slo.tpot_s;
  r["model_load_s"] = rs.model_load_s;
  r["rate_step_s"] = step_s;
  s.request_level = std::make_shared<const EngineRequestModel>(std::move(rs));
}

}  // namespace

InferenceConfig InferenceConfig::parse(const ConfigNode& node, std::int64_t origin_utc_us, const DatacentersConfig* datacenters, int devices,
                                       const std::vector<NodeGroup>* cluster, const AcceleratorCatalogue* catalogue) {
  InferenceConfig c;
  node.expect_map({"services", "autoscaler"});
  const ConfigNode list = node.child("services");
  if (!list.is_sequence() || list.size() == 0) list.fail("expected a list of services, each {name, rate, capacity_rps, slo_p99_s, max_replicas, ...}");
  auto specs = std::make_shared<std::vector<ServiceSpec>>();
  YAML::Node resolved_list(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode n = list.at(i);
    n.expect_map({"name", "datacenter", "utc_offset_h", "rate", "bursts", "drops", "gpus_per_replica", "capacity_rps", "slo_p99_s", "min_replicas",
                  "max_replicas", "requests", "deployment", "slo", "model_load_s", "rate_step_s", "request_copies", "requests_csv"});
    const bool request_level = n.has("requests");
    if (request_level && n.has("rate")) n.fail("give rate (a replica-level service) or requests (a request-level one), not both");
    if (!request_level) {
      for (const char* key : {"deployment", "slo", "model_load_s", "rate_step_s", "request_copies", "requests_csv"}) {
        if (auto k = n.maybe_child(key)) k->fail("only a request-level service (one with `requests`) has it");
      }
    }
    ServiceSpec s;
    YAML::Node r(YAML::NodeType::Map);
    s.name = n.child("name").as_string();
    if (s.name.empty()) n.child("name").fail("must be a non-empty service name");
    for (const auto& other : *specs) {
      if (other.name == s.name) n.child("name").fail("service '" + s.name + "' is listed twice");
    }
    int site_devices = devices;
    double offset_h = 0.0;
    if (auto d = n.maybe_child("datacenter")) {
      s.datacenter = d->as_string();
      if (!datacenters) d->fail("names a datacenter but the scenario has no `datacenters:` map");
      bool found = false;
      for (const auto& dc : datacenters->sites) {
        if (dc.name != s.datacenter) continue;
        found = true;
        offset_h = dc.utc_offset_h;
        site_devices = 0;
        for (const auto& g : dc.nodes) site_devices += g.count * g.devices_per_node;
      }
      if (!found) d->fail("'" + s.datacenter + "' is not one of the datacenters");
    } else if (datacenters) {  // the first datacenter
      s.datacenter = datacenters->sites.front().name;
      offset_h = datacenters->sites.front().utc_offset_h;
      site_devices = 0;
      for (const auto& g : datacenters->sites.front().nodes) site_devices += g.count * g.devices_per_node;
    }
    // The device type the service's replicas run on: its datacenter's (or the cluster's) first.
    std::string site_type;
    if (cluster && !cluster->empty()) site_type = cluster->front().type;
    if (datacenters) {
      for (const auto& dc : datacenters->sites) {
        if (dc.name == s.datacenter && !dc.nodes.empty()) site_type = dc.nodes.front().type;
      }
    }
    if (request_level) {
      if (!catalogue || site_type.empty()) n.child("requests").fail("request-level services need the scenario's cluster and accelerator catalogue");
      parse_request_level(n, site_type, *catalogue, origin_utc_us, s, r);
    }
    YAML::Node bursts(YAML::NodeType::Sequence), drops(YAML::NodeType::Sequence);
    if (!request_level) {
    if (auto o = n.maybe_child("utc_offset_h")) {
      offset_h = o->as_double();
      if (!(offset_h >= -12.0 && offset_h <= 14.0)) o->fail("must be an offset from UTC in hours in [-12, 14]");
    }
    const ConfigNode rate = n.child("rate");
    rate.expect_map({"diurnal", "file", "time_column", "value_column"});
    if (rate.has("diurnal") == rate.has("file")) rate.fail("give exactly one of diurnal or file");
    if (auto d = rate.maybe_child("diurnal")) {
      d->expect_map({"mean_rps", "amplitude_rps", "peak_hour_local", "step_s"});
      const double mean = d->child("mean_rps").as_nonnegative_double();
      const double amp = d->has("amplitude_rps") ? d->child("amplitude_rps").as_nonnegative_double() : 0.0;
      double peak = 14.0, step = 300.0;
      if (auto p = d->maybe_child("peak_hour_local")) {
        peak = p->as_double();
        if (peak < 0 || peak >= 24) p->fail("must be an hour in [0, 24)");
      }
      if (auto st = d->maybe_child("step_s")) {
        step = st->as_positive_double();
        const double per_day = 86400.0 / step;
        if (std::fabs(per_day - std::round(per_day)) > 1e-9 || step < 1.0) st->fail("must divide a day (86400 s) into whole steps of at least 1 s");
      }
      s.rate = RequestRate::diurnal(mean, amp, peak, offset_h, step, origin_utc_us);
      r["rate"]["diurnal"]["mean_rps"] = mean;
      r["rate"]["diurnal"]["amplitude_rps"] = amp;
      r["rate"]["diurnal"]["peak_hour_local"] = peak;
      r["rate"]["diurnal"]["step_s"] = step;
    } else {
      const ConfigNode f = rate.child("file");
      SignalFileColumns cols;
      cols.time = rate.has("time_column") ? rate.child("time_column").as_string() : "Datetime (UTC)";
      cols.value = rate.has("value_column") ? rate.child("value_column").as_string() : "requests_per_s";
      s.rate = RequestRate::series(std::make_shared<const StepSeries>(load_step_csv(f.as_path(), "request-rate", cols.time, cols.value, f.as_path())), origin_utc_us);
      r["rate"]["file"] = f.as_string();
      r["rate"]["time_column"] = cols.time;
      r["rate"]["value_column"] = cols.value;
    }
    if (auto b = n.maybe_child("bursts")) {
      for (const RateEvent& e : parse_events(*b, true, bursts)) s.rate.add_event(e);
    }
    if (auto b = n.maybe_child("drops")) {
      for (const RateEvent& e : parse_events(*b, false, drops)) s.rate.add_event(e);
    }
    if (auto g = n.maybe_child("gpus_per_replica")) s.gpus_per_replica = static_cast<int>(std::min<std::int64_t>(g->as_positive_int(), 1'000'000));
    const ConfigNode cap = n.child("capacity_rps");
    if (!cap.is_map() || cap.keys().empty()) cap.fail("expected a map from device type to requests/s one replica serves, e.g. {A100-80GB: 20}");
    for (const std::string& type : cap.keys()) s.capacity_rps_by_type[type] = cap.child(type).as_positive_double();
    s.slo_p99_s = n.child("slo_p99_s").as_positive_double();
    }  // replica-level
    if (auto m = n.maybe_child("min_replicas")) s.min_replicas = static_cast<int>(std::min<std::int64_t>(m->as_int(), 1'000'000));
    if (s.min_replicas < 0) n.child("min_replicas").fail("must be >= 0");
    const ConfigNode mx = n.child("max_replicas");
    s.max_replicas = static_cast<int>(std::min<std::int64_t>(mx.as_positive_int(), 1'000'000));
    if (s.max_replicas < s.min_replicas) mx.fail("must be >= min_replicas (" + std::to_string(s.min_replicas) + ")");
    if (static_cast<std::int64_t>(s.max_replicas) * s.gpus_per_replica > site_devices) {
      mx.fail("max_replicas x gpus_per_replica = " + std::to_string(static_cast<std::int64_t>(s.max_replicas) * s.gpus_per_replica) +
              " devices, more than the " + std::to_string(site_devices) + " of its datacenter");
    }
    r["name"] = s.name;
    if (!s.datacenter.empty()) r["datacenter"] = s.datacenter;
    if (!request_level) {
      r["utc_offset_h"] = offset_h;
      r["bursts"] = bursts;
      r["drops"] = drops;
    }
    r["gpus_per_replica"] = s.gpus_per_replica;
    for (const auto& [type, v] : s.capacity_rps_by_type) r["capacity_rps"][type] = v;
    if (!request_level) r["slo_p99_s"] = s.slo_p99_s;
    r["min_replicas"] = s.min_replicas;
    r["max_replicas"] = s.max_replicas;
    resolved_list.push_back(r);
    specs->push_back(std::move(s));
  }
  c.services = specs;
  c.resolved = YAML::Node(YAML::NodeType::Map);
  c.resolved["services"] = resolved_list;
  // The default autoscaler's settings (policies/inference_autoscale.hpp): read by the
  // runner from the resolved map, which has them only when given.
  if (auto a = node.maybe_child("autoscaler")) c.resolved["autoscaler"] = autoscaler_yaml(parse_scenario_autoscaler(*a));
  return c;
}

}  // namespace schedsim
