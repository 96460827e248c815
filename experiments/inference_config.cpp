#include "experiments/inference_config.hpp"

#include <cmath>

#include "policies/inference_autoscale.hpp"
#include "sim/error.hpp"
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

InferenceConfig InferenceConfig::parse(const ConfigNode& node, std::int64_t origin_utc_us, const DatacentersConfig* datacenters, int devices) {
  InferenceConfig c;
  node.expect_map({"services", "autoscaler"});
  const ConfigNode list = node.child("services");
  if (!list.is_sequence() || list.size() == 0) list.fail("expected a list of services, each {name, rate, capacity_rps, slo_p99_s, max_replicas, ...}");
  auto specs = std::make_shared<std::vector<ServiceSpec>>();
  YAML::Node resolved_list(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode n = list.at(i);
    n.expect_map({"name", "datacenter", "utc_offset_h", "rate", "bursts", "drops", "gpus_per_replica", "capacity_rps", "slo_p99_s", "min_replicas",
                  "max_replicas"});
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
    YAML::Node bursts(YAML::NodeType::Sequence), drops(YAML::NodeType::Sequence);
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
    r["utc_offset_h"] = offset_h;
    r["bursts"] = bursts;
    r["drops"] = drops;
    r["gpus_per_replica"] = s.gpus_per_replica;
    for (const auto& [type, v] : s.capacity_rps_by_type) r["capacity_rps"][type] = v;
    r["slo_p99_s"] = s.slo_p99_s;
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
