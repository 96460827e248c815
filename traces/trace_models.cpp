#include "traces/trace_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "world/physics/catalogue_names.hpp"
#include "base/error.hpp"
#include "base/rng.hpp"

namespace schedsim {
namespace {

constexpr const char* kAnyModel = "any";

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// `{NAME: p, ...}` with every p > 0 summing to 1, names resolved, sorted by name.
std::vector<std::pair<std::string, double>> parse_shares(const ConfigNode& node, const TraceModelAssignment::NameResolver& resolve) {
  if (!node.is_map()) node.fail("must be a map from workload profile name to share, e.g. {ResNet-50: 0.4, BERT-large: 0.6}");
  std::vector<std::pair<std::string, double>> shares;
  double total = 0.0;
  for (const std::string& key : node.keys()) {
    const ConfigNode value = node.child(key);
    const std::string name = resolve ? resolve(key, value) : key;
    const double p = value.as_positive_double();
    for (const auto& [other, q] : shares) {
      if (other == name) value.fail("'" + key + "' names the profile " + name + " a second time in these shares");
    }
    shares.emplace_back(name, p);
    total += p;
  }
  if (shares.empty()) node.fail("give at least one profile with its share, e.g. {ResNet-50: 0.4, BERT-large: 0.6}");
  // Not normalised: shares that do not add up are more often a typo than a wish.
  if (std::fabs(total - 1.0) > 1e-9) node.fail("shares must sum to 1, they sum to " + format_number(total));
  std::sort(shares.begin(), shares.end());
  return shares;
}

// Portable hash of the job's identity (FNV-1a over id, then the line).
std::uint64_t job_key(const JobSpec& job) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : job.id) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  for (int i = 0; i < 8; ++i) {
    h ^= static_cast<unsigned char>(static_cast<std::uint64_t>(job.source_line) >> (8 * i));
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

bool TraceModelRule::matches(const JobSpec& job) const {
  if (trace_model.empty()) {
    if (!job.model.empty()) return false;
  } else if (trace_model != kAnyModel) {
    if (job.model.empty() || normalize_catalogue_name(job.model) != normalize_catalogue_name(trace_model)) return false;
  }
  if (job.num_gpus < min_gpus || job.num_gpus > max_gpus) return false;
  return job.duration_s >= min_duration_s && job.duration_s < max_duration_s;
}

TraceModelAssignment TraceModelAssignment::parse(const ConfigNode& node, const NameResolver& resolve) {
  TraceModelAssignment a;
  if (node.is_map()) {
    a.shares_form_ = true;
    TraceModelRule rule;
    rule.shares = parse_shares(node, resolve);
    const YAML::Mark m = node.yaml().Mark();
    rule.line = m.is_null() ? 0 : m.line + 1;
    a.rules_.push_back(std::move(rule));
    return a;
  }
  if (!node.is_sequence() || node.size() == 0) {
    node.fail("must be a map of shares ({ResNet-50: 0.4, BERT-large: 0.6}) or a non-empty list of rules "
              "([{min_gpus: 8, model: GPT-2-1.5B}, {model: ResNet-50}])");
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const ConfigNode r = node.at(i);
    if (!r.is_map()) r.fail("a rule must be a map, e.g. {min_gpus: 8, model: GPT-2-1.5B}");
    r.expect_map({"trace_model", "min_gpus", "max_gpus", "min_duration_s", "max_duration_s", "model", "shares", "plan"});
    TraceModelRule rule;
    if (auto t = r.maybe_child("trace_model")) {
      rule.trace_model = t->as_string();
      if (normalize_catalogue_name(rule.trace_model).empty()) t->fail("must name a model (a letter or a digit), or be 'any'");
    }
    if (auto g = r.maybe_child("min_gpus")) rule.min_gpus = g->as_positive_int();
    if (auto g = r.maybe_child("max_gpus")) rule.max_gpus = g->as_positive_int();
    if (rule.min_gpus > rule.max_gpus) {
      r.child("max_gpus").fail("is " + std::to_string(rule.max_gpus) + ", below min_gpus " + std::to_string(rule.min_gpus) + ": no job can match");
    }
    if (auto d = r.maybe_child("min_duration_s")) rule.min_duration_s = d->as_nonnegative_double();
    if (auto d = r.maybe_child("max_duration_s")) rule.max_duration_s = d->as_positive_double();
    if (rule.min_duration_s >= rule.max_duration_s) {
      r.child("max_duration_s").fail("is " + format_number(rule.max_duration_s) + ", not above min_duration_s " + format_number(rule.min_duration_s) +
                                     " (max is exclusive): no job can match");
    }
    if (r.has("model") == r.has("shares")) r.fail("give exactly one of 'model' (a profile name) or 'shares' (a map of profile name to share)");
    if (auto m = r.maybe_child("model")) {
      rule.shares = {{resolve ? resolve(m->as_string(), *m) : m->as_string(), 1.0}};
      rule.single = true;
    } else {
      rule.shares = parse_shares(r.child("shares"), resolve);
    }
    if (auto p = r.maybe_child("plan")) rule.plan = PlanRequest::parse(*p);
    const YAML::Mark m = r.yaml().Mark();
    rule.line = m.is_null() ? 0 : m.line + 1;
    a.rules_.push_back(std::move(rule));
  }
  return a;
}

YAML::Node TraceModelAssignment::to_yaml() const {
  auto shares_yaml = [](const TraceModelRule& r) {
    YAML::Node s(YAML::NodeType::Map);
    for (const auto& [name, p] : r.shares) s[name] = p;
    return s;
  };
  if (shares_form_) return shares_yaml(rules_.front());
  YAML::Node list(YAML::NodeType::Sequence);
  for (const TraceModelRule& r : rules_) {
    YAML::Node n(YAML::NodeType::Map);
    if (!r.trace_model.empty()) n["trace_model"] = r.trace_model;
    if (r.min_gpus > 0) n["min_gpus"] = r.min_gpus;
    if (r.max_gpus != std::numeric_limits<std::int64_t>::max()) n["max_gpus"] = r.max_gpus;
    if (r.min_duration_s > 0) n["min_duration_s"] = r.min_duration_s;
    if (std::isfinite(r.max_duration_s)) n["max_duration_s"] = r.max_duration_s;
    if (r.single) {
      n["model"] = r.shares.front().first;
    } else {
      n["shares"] = shares_yaml(r);
    }
    if (r.plan) n["plan"] = r.plan->to_yaml();
    list.push_back(n);
  }
  return list;
}

const TraceModelRule* TraceModelAssignment::rule_for(const JobSpec& job) const {
  for (const TraceModelRule& r : rules_) {
    if (r.matches(job)) return &r;
  }
  return nullptr;
}

const std::string& TraceModelAssignment::draw(const TraceModelRule& rule, const JobSpec& job, std::uint64_t seed) {
  if (rule.shares.size() == 1) return rule.shares.front().first;
  // A stream per job: the draw does not depend on which jobs came before (sorting,
  // skipped rows, a resumed snapshot re-reading the trace).
  Rng rng(seed ^ job_key(job), "trace.models");
  const double u = rng.uniform();
  double cum = 0.0;
  for (const auto& [name, p] : rule.shares) {
    cum += p;
    if (u < cum) return name;
  }
  return rule.shares.back().first;  // u within rounding of 1
}

TraceModels::TraceModels(std::optional<TraceModelAssignment> assignment, WorkloadProfileCatalogue profiles, bool physics,
                         std::shared_ptr<const ThroughputMatrix> matrix, std::string matrix_label, std::vector<std::string> planned_models)
    : assignment_(std::move(assignment)),
      profiles_(std::move(profiles)),
      physics_(physics),
      matrix_(std::move(matrix)),
      matrix_label_(std::move(matrix_label)),
      planned_models_(std::move(planned_models)) {}

bool TraceModels::known(const std::string& model) const {
  return profiles_.find(model) != nullptr || (matrix_ && matrix_->job_type_id(model) >= 0) ||
         std::find(planned_models_.begin(), planned_models_.end(), model) != planned_models_.end();
}

TraceModels::Outcome TraceModels::apply(JobSpec& job, std::uint64_t seed, const std::string& trace_path) const {
  bool assigned = false;
  if (assignment_) {
    if (const TraceModelRule* rule = assignment_->rule_for(job)) {
      job.model = TraceModelAssignment::draw(*rule, job, seed);
      assigned = true;
    }
  }
  if (job.model.empty()) return Outcome::kNoProfile;
  if (!physics_) return assigned ? Outcome::kAssigned : Outcome::kOwnProfile;  // a label only
  if (!known(job.model)) {
    const std::string where = job.source_line > 0 ? trace_path + ":" + std::to_string(job.source_line) : trace_path;
    std::string what = "job '" + job.id + "': " + profiles_.unknown_message(job.model);
    if (matrix_) what += "; the job types of " + matrix_label_ + " are known too";
    const std::string near = profiles_.closest_name(job.model);
    what += "; with the physics model on every model name needs a profile: map it with a rule under workload.trace.models (e.g. - {trace_model: " +
            job.model + ", model: " + (near.empty() ? "PROFILE" : near) + "}) or define it under workload_profiles";
    throw InputError(where, what);
  }
  return assigned ? Outcome::kAssigned : Outcome::kOwnProfile;
}

std::optional<std::string> TraceModels::warning(const Tally& tally, const std::string& trace_path) const {
  if (!physics_ || tally.none == 0 || tally.total() == 0) return std::nullopt;
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(tally.none) / static_cast<double>(tally.total()));
  std::string msg = trace_path + ": " + std::to_string(tally.none) + " of " + std::to_string(tally.total()) + " jobs (" + share +
                    ") have no workload profile, so the physics model runs them at rate 1 on every device type; ";
  msg += assignment_ ? "add a rule that matches them to workload.trace.models"
                     : "assign profiles with workload.trace.models (shares such as {ResNet-50: 0.5, BERT-large: 0.5}, or rules by GPU count and duration)";
  return msg + " (docs/traces.md#model-profiles)";
}

}  // namespace schedsim
