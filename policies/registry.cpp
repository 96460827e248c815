#include "policies/registry.hpp"

#include "policies/compose.hpp"
#include "policies/edf.hpp"
#include "policies/elastic_goodput.hpp"
#include "policies/fair_share.hpp"
#include "policies/fifo.hpp"
#include "policies/gandiva.hpp"
#include "policies/gavel.hpp"
#include "policies/gittins.hpp"
#include "policies/las.hpp"
#include "policies/presets.hpp"
#include "policies/queue_tree_policy.hpp"
#include "policies/rounds.hpp"
#include "policies/priority.hpp"
#include "policies/reservation.hpp"
#include "policies/singularity.hpp"
#include "policies/sjf.hpp"
#include "policies/srtf.hpp"
#include "policies/inference_autoscale.hpp"
#include "policies/kubernetes.hpp"
#include "policies/thermal_aware.hpp"
#include "policies/spatial_routing.hpp"
#include "policies/temporal_shift.hpp"
#include "policies/themis.hpp"
#include "base/error.hpp"
#include "base/text_checks.hpp"

namespace schedsim {

int policy_count_option(const ConfigNode& value) {
  const std::int64_t x = value.as_positive_int();
  if (x > 1'000'000) value.fail("must be at most 1000000, found " + std::to_string(x));
  return static_cast<int>(x);
}

PolicyRegistry builtin_policies() {
  PolicyRegistry r;
  r.add(fifo_policy_info());
  r.add(sjf_policy_info());
  r.add(srtf_policy_info());
  r.add(las_policy_info());
  r.add(edf_policy_info());
  r.add(priority_policy_info());
  r.add(compose_policy_info());
  r.add(slurm_easy_policy_info());
  r.add(tiresias_policy_info());
  r.add(volcano_binpack_policy_info());
  r.add(gittins_policy_info());
  r.add(fair_share_policy_info());
  r.add(themis_policy_info());
  r.add(elastic_goodput_policy_info());
  r.add(gandiva_policy_info());
  r.add(carbon_aware_policy_info());
  r.add(price_aware_policy_info());
  r.add(spatial_policy_info());
  r.add(spatio_temporal_policy_info());
  r.add(inference_policy_info());
  r.add(fgd_policy_info());
  r.add(gavel_policy_info());
  r.add(thermal_aware_policy_info());
  r.add(tiresias_dlas_policy_info());
  r.add(tiresias_dlas_gpu_policy_info());
  r.add(tiresias_fifo_yarn_policy_info());
  r.add(round_fifo_policy_info());
  r.add(gavel_fifo_perf_policy_info());
  r.add(gavel_las_policy_info());
  r.add(rounds_policy_info());
  r.add(slurm_policy_info());
  r.add(pai_reservation_policy_info());
  r.add(singularity_policy_info());
  r.add(kubernetes_policy_info());
  r.add(queue_tree_generic_policy_info());
  r.add(volcano_policy_info());
  r.add(yunikorn_policy_info());
  return r;
}

void PolicyRegistry::add(PolicyInfo info) {
  if (find(info.name)) throw InvariantError("policy '" + info.name + "' registered twice");
  policies_.push_back(std::move(info));
}

const PolicyInfo* PolicyRegistry::find(const std::string& name) const {
  for (const auto& p : policies_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& p : policies_) out.push_back(p.name);
  return out;
}

std::vector<std::string> PolicyRegistry::plain_names() const {
  std::vector<std::string> out;
  for (const auto& p : policies_)
    if (p.argument_option.empty()) out.push_back(p.name);
  return out;
}

bool PolicyRegistry::knows(const std::string& name) const {
  if (find(name)) return true;
  const auto colon = name.find(':');
  const PolicyInfo* info = colon == std::string::npos ? nullptr : find(name.substr(0, colon));
  return info && !info->argument_option.empty();
}

std::string PolicyRegistry::unknown_policy_message(const std::string& name) const {
  std::string list;
  for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
  return "unknown policy '" + name + "'" + suggest_policy(name) + "; registered policies: " + list + " (see `schedsim policies`)";
}

std::string PolicyRegistry::suggest_policy(const std::string& name) const {
  std::string near = closest_match(name, names());
  // "NAME:VALUE" with a misspelt NAME ("rll:agent.pt"): suggest the short form's name.
  const auto colon = name.find(':');
  if (near.empty() && colon != std::string::npos) {
    std::vector<std::string> with_argument;
    for (const auto& p : policies_)
      if (!p.argument_option.empty()) with_argument.push_back(p.name);
    const std::string prefix = closest_match(name.substr(0, colon), with_argument);
    if (!prefix.empty()) near = prefix + name.substr(colon);
  }
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

PolicyInstance PolicyRegistry::create(const ConfigNode& node, const PolicyContext& context) const {
  std::string name;
  ConfigNode config = node;
  if (node.is_scalar()) {
    name = node.as_string();
    YAML::Node m(YAML::NodeType::Map);
    const auto colon = name.find(':');
    if (!find(name) && colon != std::string::npos) {  // "NAME:VALUE" short form
      const PolicyInfo* info = find(name.substr(0, colon));
      if (info && !info->argument_option.empty()) {
        m[info->argument_option] = name.substr(colon + 1);
        name = info->name;
      }
    }
    m["name"] = name;
    config = ConfigNode(m, node.source(), node.path());
  } else if (node.is_map()) {
    name = node.child("name").as_string();
  } else {
    node.fail("expected a policy name (e.g. sjf) or a map such as {name: sjf, by: estimate}");
  }
  const PolicyInfo* info = find(name);
  if (!info) (node.is_map() ? node.child("name") : node).fail(unknown_policy_message(name));
  return info->make(config, context);
}

PolicyInstance PolicyRegistry::create(const std::string& name, const PolicyContext& context) const {
  YAML::Node n(name);
  return create(ConfigNode(n, "policy name"), context);
}

}  // namespace schedsim
