#include "scenario/sections/env_section.hpp"

#include <algorithm>
#include <string>

#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "base/error.hpp"

namespace schedsim::rl {

const char* to_string(PlacementOption o) {
  switch (o) {
    case PlacementOption::kPacked: return "packed";
    case PlacementOption::kFastestType: return "fastest_type";
    case PlacementOption::kSlowestType: return "slowest_type";
    case PlacementOption::kFirstFit: return "first_fit";
  }
  return "packed";
}

const char* to_string(CandidateOrder o) {
  switch (o) {
    case CandidateOrder::kArrival: return "arrival";
    case CandidateOrder::kShortestEstimate: return "shortest_estimate";
    case CandidateOrder::kFewestGpus: return "fewest_gpus";
    case CandidateOrder::kLeastAttained: return "least_attained";
  }
  return "arrival";
}

EnvConfig EnvConfig::parse(const ConfigNode& node) {
  EnvConfig c;
  if (node.is_null()) return c;
  node.expect_map({"max_candidates", "reward_scale", "max_steps", "reward", "order", "placements", "max_blocked_rows", "max_scan",
                   "preempt_rows", "preempt_min_run_s", "migrate_rows", "migrate_min_gain", "wake_every_s", "check_invariants", "cooling_setpoints"});
  if (auto k = node.maybe_child("max_candidates")) {
    const std::int64_t v = k->as_positive_int();
    if (v > 4096) k->fail("at most 4096 candidate rows, got " + std::to_string(v));
    c.max_candidates = static_cast<int>(v);
  }
  if (auto s = node.maybe_child("reward_scale")) c.reward_scale = s->as_positive_double();
  if (auto m = node.maybe_child("max_steps")) {
    const std::int64_t v = m->as_int();
    if (v < 0) m->fail("must be a non-negative number of agent steps (0 = no limit), got " + std::to_string(v));
    c.max_steps = v;
  }
  if (auto r = node.maybe_child("reward")) {
    r->expect_map({"jobs_in_system", "slowdown", "makespan", "energy_kwh", "preemption_s"});
    if (auto w = r->maybe_child("jobs_in_system")) c.reward.jobs_in_system = w->as_nonnegative_double();
    if (auto w = r->maybe_child("slowdown")) c.reward.slowdown = w->as_nonnegative_double();
    if (auto w = r->maybe_child("makespan")) c.reward.makespan = w->as_nonnegative_double();
    if (auto w = r->maybe_child("energy_kwh")) c.reward.energy_kwh = w->as_nonnegative_double();
    if (auto w = r->maybe_child("preemption_s")) c.reward.preemption_s = w->as_nonnegative_double();
  }
  if (auto o = node.maybe_child("order")) {
    const std::string v = o->as_choice({"arrival", "shortest_estimate", "fewest_gpus", "least_attained"});
    c.order = v == "arrival"             ? CandidateOrder::kArrival
              : v == "shortest_estimate" ? CandidateOrder::kShortestEstimate
              : v == "fewest_gpus"       ? CandidateOrder::kFewestGpus
                                         : CandidateOrder::kLeastAttained;
  }
  if (auto p = node.maybe_child("placements")) {
    if (!p->is_sequence() || p->size() == 0) p->fail("must be a non-empty list of: packed, fastest_type, slowest_type, first_fit");
    c.placements.clear();
    for (std::size_t i = 0; i < p->size(); ++i) {
      const ConfigNode item = p->at(i);
      const std::string v = item.as_choice({"packed", "fastest_type", "slowest_type", "first_fit"});
      const PlacementOption opt = v == "packed" ? PlacementOption::kPacked
                                  : v == "fastest_type" ? PlacementOption::kFastestType
                                  : v == "slowest_type" ? PlacementOption::kSlowestType
                                                        : PlacementOption::kFirstFit;
      for (PlacementOption seen : c.placements) {
        if (seen == opt) item.fail("'" + v + "' is listed twice");
      }
      c.placements.push_back(opt);
    }
  }
  if (auto b = node.maybe_child("max_blocked_rows")) {
    const std::int64_t v = b->as_int();
    if (v < 0) b->fail("must be a non-negative number of rows, got " + std::to_string(v));
    c.max_blocked_rows = static_cast<int>(std::min<std::int64_t>(v, 1 << 20));
  }
  if (auto m = node.maybe_child("max_scan")) c.max_scan = static_cast<int>(std::min<std::int64_t>(m->as_positive_int(), 1 << 30));
  if (auto ci = node.maybe_child("check_invariants")) c.check_invariants = ci->as_bool();
  if (auto p = node.maybe_child("preempt_rows")) {
    const std::int64_t v = p->as_int();
    if (v < 0 || v >= c.max_candidates) {
      p->fail("must be in 0.." + std::to_string(c.max_candidates - 1) + " (fewer than max_candidates, so that rows remain for starts), got " +
              std::to_string(v));
    }
    c.preempt_rows = static_cast<int>(v);
  }
  if (auto m = node.maybe_child("preempt_min_run_s")) c.preempt_min_run_s = m->as_nonnegative_double();
  if (auto m = node.maybe_child("migrate_rows")) {
    const std::int64_t v = m->as_int();
    if (v < 0 || c.preempt_rows + v >= c.max_candidates) {
      m->fail("must be in 0.." + std::to_string(c.max_candidates - 1 - c.preempt_rows) + " (preempt_rows + migrate_rows below max_candidates, so that rows remain for starts), got " +
              std::to_string(v));
    }
    c.migrate_rows = static_cast<int>(v);
  }
  if (auto m = node.maybe_child("migrate_min_gain")) c.migrate_min_gain = m->as_nonnegative_double();
  if (auto w = node.maybe_child("wake_every_s")) c.wake_every_s = w->as_nonnegative_double();
  if (auto cs = node.maybe_child("cooling_setpoints")) {
    if (!cs->is_sequence() || cs->size() == 0) cs->fail("expected a non-empty list of cooling set-points in °C, e.g. [18, 24, 30]");
    for (std::size_t i = 0; i < cs->size(); ++i) {
      const double v = cs->at(i).as_double();
      for (double seen : c.cooling_setpoints_c) {
        if (seen == v) cs->at(i).fail("set-point " + std::to_string(v) + " is listed twice");
      }
      c.cooling_setpoints_c.push_back(v);
    }
    if (c.preempt_rows + c.migrate_rows + static_cast<int>(c.cooling_setpoints_c.size()) >= c.max_candidates) {
      cs->fail("preempt_rows + migrate_rows + the number of set-points must be below max_candidates (" + std::to_string(c.max_candidates) +
               "), so that rows remain for starts");
    }
  }
  return c;
}

void check_cooling_setpoints(const std::vector<double>& setpoints_c, const std::vector<CoolingRange>& ranges, const std::string& where) {
  if (setpoints_c.empty()) return;
  if (ranges.empty()) throw InputError(where, "env.cooling_setpoints needs a thermal model: add `thermal:` under `energy:` or under each datacenter");
  for (double c : setpoints_c) {
    for (const CoolingRange& r : ranges) {
      if (c < r.min_c || c > r.max_c) {
        throw InputError(where, "env.cooling_setpoints: " + std::to_string(c) + " °C is outside " + r.name + "'s setpoint_range_c [" +
                                    std::to_string(r.min_c) + ", " + std::to_string(r.max_c) + "]");
      }
    }
  }
}

}  // namespace schedsim::rl

namespace schedsim::sections {

// `env:` as a scenario section: checked by every command, kept typed (ScenarioConfig::env)
// and, as written, for the rl policy's PolicyContext and the resolved YAML.
ScenarioSection env_section() {
  ScenarioSection s;
  s.key = "env";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    p.scenario.env = rl::EnvConfig::parse(node);
    p.scenario.env_yaml = node.yaml();
    p.scenario.env_source = p.root.source();
  };
  s.check = [](const ConfigNode& node, SectionParse& p) {
    const ScenarioConfig& c = p.scenario;
    if (c.env->cooling_setpoints_c.empty()) return;
    // The cross-check the environment makes, so that `run` fails as `train` would.
    std::vector<rl::CoolingRange> ranges;
    if (c.energy && c.energy->thermal) ranges.push_back({"energy.thermal", c.energy->thermal->min_setpoint_c, c.energy->thermal->max_setpoint_c});
    if (c.datacenters) {
      for (const DatacenterConfig& dc : c.datacenters->sites) {
        if (dc.thermal) ranges.push_back({"datacenter '" + dc.name + "'", dc.thermal->min_setpoint_c, dc.thermal->max_setpoint_c});
      }
    }
    const YAML::Mark m = node.child("cooling_setpoints").yaml().Mark();
    rl::check_cooling_setpoints(c.env->cooling_setpoints_c, ranges, m.is_null() ? p.root.source() : p.root.source() + ":" + std::to_string(m.line + 1));
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.env_yaml.IsDefined() && !c.env_yaml.IsNull()) doc["env"] = YAML::Clone(c.env_yaml);
  };
  return s;
}

}  // namespace schedsim::sections
