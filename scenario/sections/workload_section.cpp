// `workload:`: the jobs (synthetic or a trace), checked against the cluster, the
// catalogues and the physics model parsed before it; LLM models get their plans here.
#include <algorithm>
#include <map>

#include "scenario/scenario.hpp"
#include "parallelism/model_spec.hpp"
#include "scenario/section_registry.hpp"
#include "base/error.hpp"

namespace schedsim::sections {

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

void parse_workload(const ConfigNode& workload, SectionParse& p) {
  ScenarioConfig& s = p.scenario;
  // Profiles of trace jobs (workload.trace.models, docs/traces.md#model-profiles): catalogue
  // profiles or, with physics.throughputs, the matrix's job types.
  const auto resolve_profile = [&s](const std::string& name, const ConfigNode& where) -> std::string {
    if (const WorkloadProfile* wp = s.profiles.find(name)) return wp->name;
    if (s.throughputs && s.throughputs->job_type_id(name) >= 0) return name;
    if (is_catalogue_model(name)) return find_model(name).name;  // an LLM under a parallelism plan
    where.fail(s.profiles.unknown_message(name) + (s.throughputs ? "; the job types of " + s.physics->throughputs + " are known too" : std::string()));
  };
  s.workload = WorkloadConfig::parse(workload, resolve_profile);
}

void check_workload(const ConfigNode& workload, SectionParse& p) {
  ScenarioConfig& s = p.scenario;
  const std::int64_t total = p.total_devices;
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
  // `load:` and `windows.offered_load` need the cluster's size, known only here (docs/config.md#offered-load).
  if (s.workload.trace && s.workload.trace->windows) s.workload.trace->windows->cluster_devices = total;
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
    for (const auto& [model, plan_entry] : s.workload.synthetic->models) {
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
}

}  // namespace

ScenarioSection workload_section() {
  ScenarioSection s;
  s.key = "workload";
  s.parse = parse_workload;
  s.check = check_workload;
  s.absent = [](SectionParse& p) { p.root.child("workload"); };  // fails: the key is required
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) { doc["workload"] = c.workload.to_yaml(); };
  return s;
}

}  // namespace schedsim::sections
