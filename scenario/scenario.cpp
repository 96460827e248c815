#include "scenario/scenario.hpp"

#include <algorithm>
#include <map>

#include "scenario/default_scenario.hpp"
#include "sim/interrupt.hpp"
#include "parallelism/model_spec.hpp"
#include "rl/env/env_config.hpp"
#include "rl/train_config.hpp"
#include "base/error.hpp"

namespace schedsim {

namespace {

// Whether `name` is a model of the parallelism catalogue (parallelism/model_spec.hpp).
bool is_catalogue_model(const std::string& name) {
  try {
    find_model(name);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

std::string catalogue_model_names() {
  std::string out;
  for (const ModelSpec& m : builtin_models()) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

}  // namespace

const char* default_scenario_yaml() { return kDefaultScenarioYaml; }

namespace {

// A copy with map keys sorted, so the resolved config does not depend on the order the
// user wrote fields in (catalogue entries are order-free).
YAML::Node sorted_copy(const YAML::Node& n) {
  if (n.IsMap()) {
    std::vector<std::string> keys;
    for (const auto& kv : n) keys.push_back(kv.first.Scalar());
    std::sort(keys.begin(), keys.end());
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& k : keys) out[k] = sorted_copy(n[k]);
    return out;
  }
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(sorted_copy(n[i]));
    return out;
  }
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace

ScenarioConfig ScenarioConfig::parse(const ConfigNode& root, const PolicyRegistry& registry) {
  root.expect_map({"seed", "name", "cluster", "workload", "policy", "accelerators", "workload_profiles", "physics", "energy", "signals", "failures", "env", "train", "datacenters", "inference", "market",
                   "metrics", "information"});
  ScenarioConfig s;
  s.source = root.source();
  if (auto seed = root.maybe_child("seed")) s.seed = seed->as_seed();
  if (auto name = root.maybe_child("name")) s.name = name->as_string();
  if (auto train = root.maybe_child("train")) {
    rl::TrainConfig::parse(*train);  // checked for every command, not only `train` (docs/config.md#train)
    s.train_yaml = train->yaml();    // a handle: keeps line numbers for rl/'s messages
  }

  std::int64_t total = 0;
  const std::optional<ConfigNode> datacenters = root.maybe_child("datacenters");
  const ConfigNode cluster = datacenters && !root.has("cluster") ? ConfigNode(YAML::Node(YAML::NodeType::Map), root.source(), "cluster") : root.child("cluster");
  cluster.expect_map({"nodes", "topology"});
  if (datacenters) {  // several datacenters: the cluster is their node groups, in order
    if (cluster.has("nodes")) cluster.child("nodes").fail("with `datacenters:` the nodes go under each datacenter (datacenters.sites[i].nodes)");
    if (root.has("signals")) root.child("signals").fail("with `datacenters:` the signals go under each datacenter (datacenters.sites[i].signals)");
    if (root.has("energy") && root.child("energy").has("pue")) root.child("energy").child("pue").fail("with `datacenters:` the PUE goes under each datacenter (datacenters.sites[i].pue)");
    if (root.has("energy") && root.child("energy").has("thermal")) {
      root.child("energy").child("thermal").fail("with `datacenters:` the thermal model goes under each datacenter (datacenters.sites[i].thermal)");
    }
    s.datacenters = DatacentersConfig::parse(*datacenters, total);
    s.cluster = s.datacenters->cluster();
  } else {
    s.cluster = parse_node_groups(cluster.child("nodes"), total);
  }

  if (auto a = root.maybe_child("accelerators")) {
    s.accelerators.merge(*a);
    s.accelerators_yaml = sorted_copy(a->yaml());
  }
  if (auto p = root.maybe_child("workload_profiles")) {
    s.profiles.merge(*p);
    s.profiles_yaml = sorted_copy(p->yaml());
  }
  if (auto t = cluster.maybe_child("topology")) s.topology = TopologyConfig::from_yaml(*t);
  if (auto ph = root.maybe_child("physics")) {
    s.physics = ph->is_null() ? PhysicsConfig{} : PhysicsConfig::parse(*ph);
    if (!s.physics->throughputs.empty()) {
      s.throughputs = std::make_shared<const ThroughputMatrix>(ThroughputMatrix::load_file(
          s.physics->throughputs_resolved, [](const std::string& path) { throw_if_interrupted("reading the throughput matrix " + path); }));
    }
    // Physics needs every device type in the catalogue.
    if (datacenters) {
      const ConfigNode sites = datacenters->child("sites");
      for (std::size_t i = 0; i < sites.size(); ++i) {
        const ConfigNode nodes = sites.at(i).child("nodes");
        for (std::size_t k = 0; k < nodes.size(); ++k) s.accelerators.get(nodes.at(k).child("type"));
      }
    } else {
      const ConfigNode nodes = cluster.child("nodes");
      for (std::size_t i = 0; i < nodes.size(); ++i) s.accelerators.get(nodes.at(i).child("type"));
    }
    if (!s.physics->reference_device.empty()) s.accelerators.get(ph->child("reference_device"));
    // Topology errors (e.g. racks that split an NVLink domain) surface now, not mid-run.
    const ClusterSpec spec(s.cluster);
    TopologySpec(spec, s.topology, [&](const std::string& type) { return s.accelerators.get(type).intra_node_link_bytes_per_s; });
  }

  if (auto e = root.maybe_child("energy")) s.energy = EnergyConfig::parse(*e, s.cluster, s.accelerators);
  if (auto sg = root.maybe_child("signals")) s.signals = SignalsConfig::parse(*sg);
  if (s.datacenters && s.datacenters->sites.front().thermal && !s.energy) {
    datacenters->child("sites").at(0).child("thermal").fail("the thermal model needs an `energy:` map (the meter that applies its PUE)");
  }
  const std::int64_t origin_us = s.origin_utc_us();
  if (auto inf = root.maybe_child("inference")) {
    s.inference = InferenceConfig::parse(*inf, origin_us, s.datacenters ? &*s.datacenters : nullptr, static_cast<int>(total), &s.cluster, &s.accelerators);
  }
  if (auto m = root.maybe_child("metrics")) s.metrics_window = MeasurementWindowConfig::parse(*m);
  if (auto m = root.maybe_child("market")) s.market = MarketConfig::parse(*m, s.cluster, s.datacenters ? &*s.datacenters : nullptr, s.accelerators, origin_us);
  if (auto f = root.maybe_child("failures")) {
    s.failures = FailureConfig::parse(*f);
    if (s.failures->checkpoint.policy != CheckpointConfig::Policy::kNone && s.failures->checkpoint.cost_s < 0.0 && !s.physics) {
      f->child("checkpoint").fail("needs cost_s (seconds per checkpoint) when the scenario has no `physics:` map to derive it from");
    }
    for (const auto& [type, mtbf] : s.failures->devices.mtbf_h_by_type) {
      bool found = false;
      for (const auto& g : s.cluster) found = found || g.type == type;
      if (!found) f->child("devices").child("mtbf_h_by_type").child(type).fail("no node group of the cluster has device type '" + type + "'");
    }
  }

  const ConfigNode workload = root.child("workload");
  // Profiles of trace jobs (workload.trace.models, docs/traces.md#model-profiles): catalogue
  // profiles or, with physics.throughputs, the matrix's job types.
  const auto resolve_profile = [&s](const std::string& name, const ConfigNode& where) -> std::string {
    if (const WorkloadProfile* p = s.profiles.find(name)) return p->name;
    if (s.throughputs && s.throughputs->job_type_id(name) >= 0) return name;
    if (is_catalogue_model(name)) return find_model(name).name;  // an LLM under a parallelism plan
    where.fail(s.profiles.unknown_message(name) + (s.throughputs ? "; the job types of " + s.physics->throughputs + " are known too" : std::string()));
  };
  s.workload = WorkloadConfig::parse(workload, resolve_profile);
  if (s.workload.trace && s.workload.trace->models && !s.physics) {
    workload.child("trace").child("models").fail("models only matter with the physics model on; add a `physics:` map to the scenario");
  }
  std::vector<std::string> planned_trace_models;
  if (s.workload.trace && s.workload.trace->models && s.physics) {
    // LLM models the rules assign run under their rule's `plan:` (default auto); one model
    // has one plan in a run.
    const ConfigNode models = workload.child("trace").child("models");
    const auto& rules = s.workload.trace->models->rules();
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const TraceModelRule& rule = rules[i];
      const std::optional<ConfigNode> rule_node = models.is_sequence() ? std::optional<ConfigNode>(models.at(i)) : std::nullopt;
      for (const auto& [name, share] : rule.shares) {
        if (!is_catalogue_model(name)) {
          if (rule.plan) {
            rule_node->child("plan").fail("'" + name + "' is no model of the parallelism catalogue (" + catalogue_model_names() +
                                          "), so it cannot run under a plan; use one of those names or drop `plan:`");
          }
          continue;
        }
        PlanRequest request = rule.plan ? *rule.plan : PlanRequest{};
        if (!rule.plan) request.where = (rule_node ? *rule_node : models).where();
        if (request.kind == PlanRequest::Kind::kDataParallel && !s.profiles.find(name)) {
          rule_node->child("plan").fail("'" + name + "' has no workload profile, so it cannot run data_parallel; use auto or a plan map");
        }
        const std::string& rule_model = name;  // C++17 lambdas cannot capture a structured binding
        auto same = std::find_if(s.llm_plans.begin(), s.llm_plans.end(), [&](const auto& e) { return e.first == rule_model; });
        if (same != s.llm_plans.end()) {
          if (!(same->second == request)) {
            (rule_node ? *rule_node : models).fail("gives '" + name + "' another plan than " + same->second.where + "; a model has one plan in a run");
          }
          continue;
        }
        s.llm_plans.emplace_back(name, request);
        if (request.kind != PlanRequest::Kind::kDataParallel) planned_trace_models.push_back(name);
      }
    }
  }
  if (s.workload.trace && s.physics) {  // checks every job's model, assigns, counts those without a profile
    s.workload.trace->options.models = std::make_shared<const TraceModels>(s.workload.trace->models, s.profiles, true, s.throughputs,
                                                                           s.physics->throughputs, planned_trace_models);
  }
  // `load:` needs the cluster's size, known only here (docs/config.md#offered-load).
  if (s.workload.synthetic && s.workload.synthetic->load) s.workload.synthetic->set_offered_load(static_cast<int>(total), workload.child("synthetic").child("load"));
  if (s.workload.synthetic && s.workload.oversized == OversizedMode::kError && s.workload.synthetic->max_gpus() > total) {
    const ConfigNode gpus = workload.child("synthetic").has("gpus") ? workload.child("synthetic").child("gpus") : workload.child("synthetic");
    gpus.fail("jobs may ask for " + std::to_string(s.workload.synthetic->max_gpus()) + " GPUs but the cluster has " + std::to_string(total) +
              "; enlarge the cluster or set workload.oversized: drop");
  }
  if (s.workload.synthetic && s.datacenters && s.workload.synthetic->max_gpus() > s.datacenters->largest_site_devices()) {
    const ConfigNode gpus = workload.child("synthetic").has("gpus") ? workload.child("synthetic").child("gpus") : workload.child("synthetic");
    gpus.fail("jobs may ask for " + std::to_string(s.workload.synthetic->max_gpus()) + " GPUs but the largest datacenter has " +
              std::to_string(s.datacenters->largest_site_devices()) + " and a job runs inside one datacenter");
  }
  if (s.workload.synthetic && s.physics && !s.physics->allow_mixed_types) {
    // No placement may span types, so a job larger than every type's pool never starts.
    std::map<std::string, std::int64_t> by_type;
    for (const auto& g : s.cluster) by_type[g.type] += static_cast<std::int64_t>(g.count) * g.devices_per_node;
    const auto largest = std::max_element(by_type.begin(), by_type.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    if (by_type.size() > 1 && s.workload.synthetic->max_gpus() > largest->second) {
      const ConfigNode gpus = workload.child("synthetic").has("gpus") ? workload.child("synthetic").child("gpus") : workload.child("synthetic");
      gpus.fail("jobs may ask for " + std::to_string(s.workload.synthetic->max_gpus()) + " GPUs but the largest device type (" + largest->first +
                ") has " + std::to_string(largest->second) + " and physics.mixed_types: forbid keeps a job on one type");
    }
  }

  if (s.workload.synthetic && !s.workload.synthetic->models.empty()) {
    const ConfigNode models = workload.child("synthetic").child("models");
    const auto& plans = s.workload.synthetic->plans;
    for (const auto& [model, p] : s.workload.synthetic->models) {
      const auto matrix_jobs = s.throughputs ? s.throughputs->job_types() : std::vector<std::string>{};
      // An LLM of the parallelism catalogue runs under a plan: `plan:` or auto.
      const std::string& model_name = model;  // C++17 lambdas cannot capture a structured binding
      const auto plan = std::find_if(plans.begin(), plans.end(), [&](const auto& e) { return e.first == model_name; });
      const bool llm = is_catalogue_model(model);
      if (plan != plans.end() && !llm) {
        models.child(model).child("plan").fail("'" + model + "' is no model of the parallelism catalogue (" + catalogue_model_names() +
                                               "), so it cannot run under a plan; use one of those names or drop `plan:`");
      }
      if (llm && s.physics) {
        PlanRequest request;
        if (plan != plans.end()) {
          request = plan->second;
        } else {
          request.where = models.child(model).where();
        }
        s.llm_plans.emplace_back(model, request);
        if (request.kind != PlanRequest::Kind::kDataParallel) continue;
      }
      if (!s.profiles.find(model) && std::find(matrix_jobs.begin(), matrix_jobs.end(), model) == matrix_jobs.end()) {
        std::string known;
        for (const auto& n : s.profiles.names()) known += (known.empty() ? "" : ", ") + n;
        models.child(model).fail("unknown workload profile '" + model + "'; known profiles: " + known +
                                 (s.throughputs ? " and the job types of " + s.physics->throughputs : std::string()));
      }
    }
    if (!s.physics) models.fail("models only matter with the physics model on; add a `physics:` map to the scenario");
  }

  s.information = root.has("information") ? InformationModel::parse(root.child("information")) : default_information(s.workload);
  const ConfigNode policy = root.has("policy") ? root.child("policy") : ConfigNode(YAML::Node("fifo"), root.source(), "policy");
  // Validates name and options now, before anything runs. What the information level
  // cannot serve is refused when a run builds the policy (policy_context): `compare
  // --policies` never builds the scenario's own one.
  registry.create(policy);
  s.policy = YAML::Clone(policy.yaml());
  s.policy_source = root.source();
  if (auto e = root.maybe_child("env")) {  // checked here for every command; rl/env builds the environment from it
    const rl::EnvConfig env = rl::EnvConfig::parse(*e);
    if (!env.cooling_setpoints_c.empty()) {  // the cross-check the environment makes, so that `run` fails as `train` would
      std::vector<rl::CoolingRange> ranges;
      if (s.energy && s.energy->thermal) ranges.push_back({"energy.thermal", s.energy->thermal->min_setpoint_c, s.energy->thermal->max_setpoint_c});
      if (s.datacenters) {
        for (const DatacenterConfig& dc : s.datacenters->sites) {
          if (dc.thermal) ranges.push_back({"datacenter '" + dc.name + "'", dc.thermal->min_setpoint_c, dc.thermal->max_setpoint_c});
        }
      }
      const YAML::Mark m = e->child("cooling_setpoints").yaml().Mark();
      rl::check_cooling_setpoints(env.cooling_setpoints_c, ranges, m.is_null() ? root.source() : root.source() + ":" + std::to_string(m.line + 1));
    }
    s.env_yaml = e->yaml();
    s.env_source = root.source();
  }
  return s;
}

PolicyContext policy_context(const ScenarioConfig& s) {
  return PolicyContext{s.seed, &s.accelerators, s.env_yaml, s.inference ? s.inference->services : nullptr, s.information.with_seed(s.seed)};
}

InformationModel default_information(const WorkloadConfig& workload) {
  // Only a synthetic workload that generates estimates is known, before its jobs are read,
  // to give every job one: it defaults to them. A trace (whose estimate column, if any,
  // is only seen when the run reads it) and a synthetic workload without estimates are
  // non-clairvoyant. Oracle is opt-in.
  if (workload.synthetic && workload.synthetic->estimate_error_sigma >= 0) return InformationModel::estimates(EstimateSource::kTrace);
  return InformationModel::none();
}

bool information_serves(const ScenarioConfig& scenario, const PolicyRegistry& registry, const std::string& policy) {
  try {
    registry.create(policy, policy_context(scenario));
  } catch (const InformationRefused&) {
    return false;
  }
  return true;
}

int ScenarioConfig::num_devices() const {
  int n = 0;
  for (const auto& g : cluster) n += g.count * g.devices_per_node;
  return n;
}

std::int64_t ScenarioConfig::origin_utc_us() const {
  std::int64_t origin_us = 1'672'531'200'000'000LL;
  if (signals) origin_us = signals->origin_utc_us;
  if (datacenters && datacenters->sites.front().signals) origin_us = datacenters->sites.front().signals->origin_utc_us;
  return origin_us;
}

YAML::Node ScenarioConfig::to_yaml(const YAML::Node& resolved_policy) const {
  YAML::Node n(YAML::NodeType::Map);
  n["seed"] = seed;
  if (!name.empty()) n["name"] = name;
  YAML::Node nodes(YAML::NodeType::Sequence);
  for (const auto& g : cluster) {
    YAML::Node gn(YAML::NodeType::Map);
    gn["count"] = g.count;
    gn["type"] = g.type;
    gn["devices_per_node"] = g.devices_per_node;
    nodes.push_back(gn);
  }
  if (!datacenters) n["cluster"]["nodes"] = nodes;
  if (physics) {
    YAML::Node t(YAML::NodeType::Map);
    t["nodes_per_nvlink_domain"] = topology.nodes_per_nvlink_domain;
    if (topology.intra_node_bandwidth_gbps) t["intra_node_bandwidth_gbps"] = *topology.intra_node_bandwidth_gbps;
    t["nic_bandwidth_gbps"] = topology.nic_bandwidth_gbps;
    if (topology.nics_per_node) t["nics_per_node"] = *topology.nics_per_node;
    t["nodes_per_rack"] = topology.nodes_per_rack;
    t["oversubscription"] = topology.oversubscription;
    t["nvlink_latency_us"] = topology.nvlink_latency_us;
    t["network_latency_us"] = topology.network_latency_us;
    if (topology.racks_per_pod) {
      t["racks_per_pod"] = *topology.racks_per_pod;
      t["pod_oversubscription"] = topology.pod_oversubscription;
    }
    n["cluster"]["topology"] = t;
  }
  n["workload"] = workload.to_yaml();
  n["policy"] = resolved_policy;
  if (accelerators_yaml.IsDefined() && !accelerators_yaml.IsNull()) n["accelerators"] = accelerators_yaml;
  if (profiles_yaml.IsDefined() && !profiles_yaml.IsNull()) n["workload_profiles"] = profiles_yaml;
  if (physics) n["physics"] = physics->to_yaml();
  if (energy) n["energy"] = energy->to_yaml();
  if (signals) n["signals"] = signals->to_yaml();
  if (datacenters) n["datacenters"] = datacenters->to_yaml();
  if (inference) n["inference"] = inference->resolved;
  if (market) n["market"] = market->to_yaml();
  if (failures) n["failures"] = failures->to_yaml();
  n["metrics"] = metrics_window.to_yaml();
  if (env_yaml.IsDefined() && !env_yaml.IsNull()) n["env"] = YAML::Clone(env_yaml);
  n["information"] = information.to_yaml();
  return n;
}

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry) {
  return load_scenario(path.empty() ? ConfigNode::load_string(default_scenario_yaml(), "built-in default scenario") : ConfigNode::load_file(path),
                       overrides, seed, registry);
}

ScenarioConfig load_scenario(const ConfigNode& root, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry) {
  YAML::Node doc = root.yaml();
  if (!doc.IsMap()) root.fail("the scenario must be a YAML map with keys seed, cluster, workload, policy");
  // Each override's value is remembered, so that a bad value is reported as the --set
  // option that gave it rather than as the file.
  std::vector<ConfigNode::Override> applied;
  for (const auto& o : overrides) applied.push_back({apply_override(doc, o), o});
  // An empty file (or one of comments only) is not a scenario missing 'cluster'.
  if (doc.size() == 0) root.fail("the scenario is empty; it needs at least cluster and workload (`schedsim default-config` prints a complete one)");
  ScenarioConfig s = ScenarioConfig::parse(root.with_overrides(std::move(applied)), registry);
  if (seed) {
    if (*seed > kMaxSeed) throw InputError("seed", "must be an integer in 0..9223372036854775807 (2^63-1), got " + std::to_string(*seed));
    s.seed = *seed;
  }
  return s;
}

}  // namespace schedsim
