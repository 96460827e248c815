#include "app/advise_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parallelism/planner.hpp"
#include "policies/registry.hpp"
#include "world/physics/catalogue_names.hpp"
#include "world/physics/cluster_physics.hpp"
#include "base/error.hpp"
#include "world/physics/speed_model.hpp"
#include "world/physics/topology.hpp"

namespace schedsim {

Objective parse_objective(const std::string& name, const std::string& where) {
  if (name == "cost") return Objective::kCost;
  if (name == "finish") return Objective::kFinish;
  if (name == "emissions") return Objective::kEmissions;
  throw InputError(where, "objective must be one of cost, finish, emissions; got '" + name + "'");
}

namespace {

// Devices per node of `type` in the scenario's cluster (the first node group of that type).
int devices_per_node(const ScenarioConfig& scenario, const AcceleratorSpec& type) {
  for (const NodeGroup& g : scenario.cluster) {
    if (scenario.accelerators.find(g.type) == &type) return g.devices_per_node;
  }
  return 8;
}

// The fastest parallelism plan for a profile that is a model of the parallelism
// catalogue (LLaMA-2-7B, ...), on n devices of `type` with the profile's global batch;
// nullopt for other profiles or when no plan fits.
std::optional<PlanChoice> planned_run(const ScenarioConfig& scenario, const WorkloadProfile& profile, const AcceleratorSpec& type, int n) {
  for (const ModelSpec& model : builtin_models()) {
    if (normalize_catalogue_name(model.name) != normalize_catalogue_name(profile.name)) continue;
    const ClusterNetwork network = ClusterNetwork::from_topology(scenario.topology, type, devices_per_node(scenario, type));
    try {
      return plan_training(model, type, network, n, static_cast<int>(profile.batch_size));
    } catch (const InputError&) {
      return std::nullopt;  // no plan fits: the candidate is infeasible (memory or batch)
    }
  }
  return std::nullopt;
}

// How the job runs on n devices of `type`, consolidated on whole nodes (the last one
// partly used) of the scenario's topology, uncontended: the physics model's iteration
// time, compute share and checkpoint costs. nullopt when it cannot run there. A job
// whose whole model does not fit one device runs with the planner's parallelism plan
// when its profile is a catalogued LLM (its description goes to `plan`).
std::optional<RunModel> run_model_of(const ScenarioConfig& scenario, const WorkloadProfile& profile, const AcceleratorSpec& type, int n,
                                     std::string* plan = nullptr) {
  if (n > profile.batch_size) return std::nullopt;
  std::optional<PlanChoice> planned;
  if (!fits_device_memory(profile, type)) {
    planned = planned_run(scenario, profile, type, n);
    if (!planned) return std::nullopt;
  }
  const int per_node = devices_per_node(scenario, type);
  const ClusterSpec cluster({NodeGroup{(n + per_node - 1) / per_node, type.name, per_node}});
  const TopologySpec topology(cluster, scenario.topology, [&](const std::string& t) { return scenario.accelerators.get(t).intra_node_link_bytes_per_s; });
  const PhysicsConfig config = scenario.physics ? *scenario.physics : PhysicsConfig{};
  const ClusterPhysics physics(cluster, topology, scenario.accelerators, scenario.profiles, config);
  JobSpec job;
  job.id = "advise";
  job.model = profile.name;
  job.num_gpus = n;
  std::vector<DeviceId> devices(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) devices[static_cast<std::size_t>(d)] = d;
  RunModel m;
  m.iteration_s = physics.iteration_time_s(job, Span<DeviceId>(devices.data(), devices.size()), std::numeric_limits<double>::infinity());
  m.compute_share = iteration_compute_time(profile, type, n).time_s / m.iteration_s;
  m.checkpoint_save_s = physics.checkpoint_save_s(job, n);
  m.checkpoint_restore_s = physics.checkpoint_restore_s(job, n);
  if (planned) {
    m.iteration_s = planned->time.iteration_s;
    m.compute_share = (planned->time.compute_s + planned->time.elementwise_s) / m.iteration_s;
    if (plan) *plan = planned->plan.describe();
  }
  m.idle_w = type.idle_w;
  m.busy_w = type.idle_w + m.compute_share * (type.tdp_w - type.idle_w);
  return m;
}

std::vector<std::string> string_list(const ConfigNode& node) {
  if (!node.is_sequence() || node.size() == 0) node.fail("expected a non-empty list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(node.at(i).as_string());
  return out;
}

}  // namespace

AdvisePlanner::AdvisePlanner(const ConfigNode& root) {
  root.expect_map({"scenario", "job", "search"});
  // The world: a scenario file (relative to this file) or an inline scenario map.
  const ConfigNode scenario_node = root.child("scenario");
  const PolicyRegistry registry = builtin_policies();
  if (scenario_node.is_scalar()) {
    scenario_ = std::make_unique<ScenarioConfig>(load_scenario(scenario_node.as_path(), {}, std::nullopt, registry));
  } else if (scenario_node.is_map()) {
    scenario_ = std::make_unique<ScenarioConfig>(load_scenario(scenario_node, {}, std::nullopt, registry));
  } else {
    scenario_node.fail("expected a scenario file path or a scenario map");
  }
  const ScenarioConfig& sc = *scenario_;
  if (!sc.datacenters) scenario_node.fail("the scenario has no datacenters: map; the advisor plans across datacenters (one is enough)");
  if (!sc.market) scenario_node.fail("the scenario has no market: map; the advisor needs the providers' offers");
  if (sc.energy && !sc.energy->power_caps.empty()) scenario_node.fail("energy.power_caps: the advisor does not model power caps; remove them");
  std::vector<std::string> warnings;
  setup_ = std::make_unique<SimulationSetup>(sc, sc.seed, warnings);
  world_.geography = setup_->geography();
  market_ = std::make_unique<Market>(sc.market->build(setup_->cluster(), &*sc.datacenters));
  world_.origin_utc_us = sc.market->origin_utc_us;
  world_.failures = sc.failures;

  const ConfigNode j = root.child("job");
  j.expect_map({"profile", "steps", "reference", "device_types", "device_counts", "regions", "kinds", "earliest_start_h", "deadline_h", "budget_usd",
                "carbon_cap_kg"});
  const WorkloadProfile& profile = sc.profiles.get(j.child("profile"));
  job_.profile = profile.name;

  // Device counts.
  const ConfigNode counts = j.child("device_counts");
  if (!counts.is_sequence() || counts.size() == 0) counts.fail("expected a non-empty list of device counts");
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int n = static_cast<int>(counts.at(i).as_positive_int());
    if (std::find(job_.device_counts.begin(), job_.device_counts.end(), n) != job_.device_counts.end()) counts.at(i).fail("device count " + std::to_string(n) + " is listed twice");
    job_.device_counts.push_back(n);
  }

  // Device types: the job's list (catalogue names) or every type an offer sells.
  std::vector<std::string> offer_types;
  for (const Offer& o : market_->offers()) {
    const std::string t = sc.accelerators.get(o.device_type).name;
    if (std::find(offer_types.begin(), offer_types.end(), t) == offer_types.end()) offer_types.push_back(t);
  }
  if (auto t = j.maybe_child("device_types")) {
    string_list(*t);
    for (std::size_t i = 0; i < t->size(); ++i) {
      const std::string name = sc.accelerators.get(t->at(i)).name;
      if (std::find(offer_types.begin(), offer_types.end(), name) == offer_types.end()) t->at(i).fail("no offer of the market sells " + name);
      job_.device_types.push_back(name);
    }
  } else {
    job_.device_types = offer_types;
  }

  // Regions: datacenter names, default all.
  if (auto r = j.maybe_child("regions")) {
    string_list(*r);
    for (std::size_t i = 0; i < r->size(); ++i) {
      const int s = world_.geography->find(r->at(i).as_string());
      if (s < 0) {
        std::string names;
        for (int k = 0; k < world_.geography->num_sites(); ++k) names += (k ? ", " : "") + world_.geography->site(k).name;
        r->at(i).fail("unknown datacenter '" + r->at(i).as_string() + "'; the scenario has " + names);
      }
      job_.sites.push_back(s);
    }
  } else {
    for (int s = 0; s < world_.geography->num_sites(); ++s) job_.sites.push_back(s);
  }
  for (int s : job_.sites) {
    const Datacenter& site = world_.geography->site(s);
    if (!site.signals || !site.signals->has(SignalKind::kPrice) || !site.signals->has(SignalKind::kCarbon)) {
      scenario_node.fail("datacenter " + site.name + " has no price and carbon signals; the advisor needs both for every region it may use");
    }
  }

  // Offer kinds.
  if (auto k = j.maybe_child("kinds")) {
    string_list(*k);
    for (std::size_t i = 0; i < k->size(); ++i) {
      const std::string v = k->at(i).as_choice({"on_demand", "reserved", "spot"});
      job_.kinds.push_back(v == "on_demand" ? PriceKind::kOnDemand : v == "reserved" ? PriceKind::kReserved : PriceKind::kSpot);
    }
  } else {
    job_.kinds = {PriceKind::kOnDemand, PriceKind::kReserved, PriceKind::kSpot};
  }

  // Times, in hours since simulated time 0 (the signals' origin).
  // Bounded (10^12 s, as trace times are) so that the horizon fits the simulated clock,
  // whose own check ("time is too large") would name no key.
  const auto hours = [](const ConfigNode& n, double h) {
    if (h * 3600.0 > 1e12) n.fail("'" + n.as_string() + "' hours is out of range (over 10^12 seconds, about 31,700 years)");
    return h * 3600.0;
  };
  job_.earliest_start_s = j.has("earliest_start_h") ? hours(j.child("earliest_start_h"), j.child("earliest_start_h").as_nonnegative_double()) : 0.0;
  job_.deadline_s = hours(j.child("deadline_h"), j.child("deadline_h").as_positive_double());
  if (!(job_.deadline_s > job_.earliest_start_s)) j.child("deadline_h").fail("the deadline must be after earliest_start_h");
  if (auto b = j.maybe_child("budget_usd")) job_.budget_usd = b->as_positive_double();
  if (auto c = j.maybe_child("carbon_cap_kg")) job_.carbon_cap_kg = c->as_positive_double();

  // The run models of every allowed (type, count).
  world_.model_types = job_.device_types;
  world_.model_counts = job_.device_counts;
  for (const std::string& t : job_.device_types) {
    for (int n : job_.device_counts) {
      std::string plan;
      world_.models.push_back(run_model_of(sc, profile, sc.accelerators.get(t), n, &plan));
      world_.model_plans.push_back(plan);
    }
  }

  // Work: steps, or the length of a reference run.
  if (j.has("steps") == j.has("reference")) j.fail("give the work as exactly one of steps (iterations) or reference {device_type, devices, hours}");
  if (auto st = j.maybe_child("steps")) {
    job_.steps = st->as_positive_double();
  } else {
    const ConfigNode ref = j.child("reference");
    ref.expect_map({"device_type", "devices", "hours"});
    const AcceleratorSpec& type = sc.accelerators.get(ref.child("device_type"));
    const int n = static_cast<int>(ref.child("devices").as_positive_int());
    const auto m = run_model_of(sc, profile, type, n);
    if (!m) ref.child("devices").fail(profile.name + " does not run on " + std::to_string(n) + " " + type.name + " (memory or a batch smaller than the devices)");
    job_.steps = ref.child("hours").as_positive_double() * 3600.0 / m->iteration_s;
  }

  // Search.
  job_.latest_start_s = job_.deadline_s;
  if (auto s = root.maybe_child("search")) {
    s->expect_map({"start_step_h", "latest_start_h", "segments", "split_at", "cost_includes_electricity"});
    if (auto v = s->maybe_child("start_step_h")) job_.start_step_s = v->as_positive_double() * 3600.0;
    if (auto v = s->maybe_child("latest_start_h")) {
      job_.latest_start_s = hours(*v, v->as_nonnegative_double());
      if (job_.latest_start_s < job_.earliest_start_s || job_.latest_start_s >= job_.deadline_s) v->fail("must lie in [earliest_start_h, deadline_h)");
    }
    if (auto v = s->maybe_child("segments")) {
      const std::int64_t k = v->as_positive_int();
      if (k > 2) v->fail("at most 2 segments (one move between regions) are searched; got " + std::to_string(k));
      job_.max_segments = static_cast<int>(k);
    }
    if (auto v = s->maybe_child("split_at")) {
      if (!v->is_sequence() || v->size() == 0) v->fail("expected a non-empty list of fractions in (0, 1)");
      job_.split_fractions.clear();
      for (std::size_t i = 0; i < v->size(); ++i) {
        const double f = v->at(i).as_double();
        if (!(f > 0.0 && f < 1.0)) v->at(i).fail("a split fraction must lie in (0, 1), got " + v->at(i).as_string());
        job_.split_fractions.push_back(f);
      }
    }
    if (auto v = s->maybe_child("cost_includes_electricity")) job_.cost_includes_electricity = v->as_bool();
  }

  // The offers, with their spot availability over the planning horizon.
  const Tick horizon = Tick::from_seconds(job_.deadline_s);
  for (std::size_t i = 0; i < market_->offers().size(); ++i) {
    const Offer& o = market_->offer(static_cast<int>(i));
    OfferTerms t;
    t.provider = market_->providers()[static_cast<std::size_t>(o.provider)].name;
    t.site = world_.geography->find(market_->sites()[static_cast<std::size_t>(o.site)].name);
    t.device_type = sc.accelerators.get(o.device_type).name;
    t.kind = o.kind;
    t.price_usd_per_device_h = o.usd_per_device_h;
    t.max_devices = o.devices;
    if (o.kind == PriceKind::kSpot) {
      switch (o.availability.kind) {
        case SpotAvailability::Kind::kAlways: break;
        case SpotAvailability::Kind::kOnOff:
          t.spot.kind = OfferTerms::Spot::Kind::kOnOff;
          t.spot.mean_up_h = o.availability.mean_up_h;
          t.spot.mean_down_h = o.availability.mean_down_h;
          t.spot.available_when_down = o.devices - static_cast<int>(std::lround(o.availability.fraction_reclaimed * o.devices));
          break;
        case SpotAvailability::Kind::kSeries:
          t.spot.kind = OfferTerms::Spot::Kind::kTimeline;
          t.spot.horizon_s = job_.deadline_s;
          for (const SpotChange& c : market_->spot_timeline(static_cast<int>(i), horizon, sc.seed)) {
            t.spot.timeline.emplace_back(c.time.seconds(), c.available);
          }
          break;
      }
    }
    world_.offers.push_back(std::move(t));
  }
}

}  // namespace schedsim
