#include "policies/information.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/error.hpp"
#include "base/rng.hpp"

namespace schedsim {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

InformationModel InformationModel::none() {
  InformationModel m;
  m.level_ = InformationLevel::kNone;
  return m;
}

InformationModel InformationModel::estimates(EstimateSource source, double sigma, double bias, double floor, std::uint64_t seed) {
  InformationModel m;
  m.level_ = InformationLevel::kEstimates;
  m.source_ = source;
  m.sigma_ = sigma;
  m.bias_ = bias;
  m.floor_ = floor;
  m.seed_ = seed;
  return m;
}

InformationModel InformationModel::parse(const ConfigNode& node) {
  if (node.is_scalar()) {
    const std::string v = node.as_choice({"oracle", "estimates", "none"});
    if (v == "oracle") return oracle();
    if (v == "none") return none();
    return estimates(EstimateSource::kTrace);
  }
  if (!node.is_map()) node.fail("must be oracle, none, estimates, or a map {estimates: {source: trace|noisy, sigma, bias, floor}}");
  node.expect_map({"estimates"});
  const ConfigNode e = node.child("estimates");
  InformationModel m = estimates(EstimateSource::kTrace);
  if (e.is_null()) return m;
  e.expect_map({"source", "sigma", "bias", "floor"});
  if (auto s = e.maybe_child("source")) m.source_ = s->as_choice({"trace", "noisy"}) == "noisy" ? EstimateSource::kNoisy : EstimateSource::kTrace;
  if (m.source_ == EstimateSource::kTrace) {
    for (const char* key : {"sigma", "bias"}) {
      if (auto k = e.maybe_child(key)) k->fail(std::string(key) + " only applies to source: noisy (source: trace uses the workload's estimates as they are)");
    }
  }
  if (auto s = e.maybe_child("sigma")) m.sigma_ = s->as_nonnegative_double();
  if (auto b = e.maybe_child("bias")) m.bias_ = b->as_positive_double();
  if (auto f = e.maybe_child("floor")) {
    m.floor_ = f->as_positive_double();
    if (m.floor_ > 1.0) f->fail("must be a fraction of the estimate in (0, 1], got " + number(m.floor_));
  }
  return m;
}

YAML::Node InformationModel::to_yaml() const {
  if (level_ == InformationLevel::kOracle) return YAML::Node("oracle");
  if (level_ == InformationLevel::kNone) return YAML::Node("none");
  YAML::Node e(YAML::NodeType::Map);
  e["source"] = source_ == EstimateSource::kNoisy ? "noisy" : "trace";
  if (source_ == EstimateSource::kNoisy) {
    e["sigma"] = sigma_;
    e["bias"] = bias_;
  }
  e["floor"] = floor_;
  YAML::Node n(YAML::NodeType::Map);
  n["estimates"] = e;
  return n;
}

std::string InformationModel::describe() const {
  if (level_ == InformationLevel::kOracle) return "oracle";
  if (level_ == InformationLevel::kNone) return "none";
  if (source_ == EstimateSource::kTrace) return "estimates (trace)";
  return "estimates (noisy, sigma " + number(sigma_) + ", bias " + number(bias_) + ")";
}

void InformationModel::require_durations_at(const std::string& where, const std::string& need) const {
  if (knows_durations()) return;
  throw InformationRefused(where, need +
                                                " needs job duration information, but the scenario declares information: none; declare information: estimates "
                                                "(the jobs' runtime estimates) or information: oracle, or use a policy that needs none (fifo, las, tiresias, gittins)");
}

void InformationModel::require_oracle(const std::string& policy, const std::string& need) const {
  if (is_oracle()) return;
  throw InformationRefused("policy '" + policy + "'", need + " reads the true job durations, which only information: oracle provides (the scenario declares information: " +
                                                describe() + "); declare information: oracle, or rank by what the scheduler may know");
}

double InformationModel::noisy_estimate_s(const JobSpec& job) const {
  Rng rng(seed_, "information.noisy:" + job.id + "@" + std::to_string(job.submit.us()));
  return job.duration_s * bias_ * std::exp(rng.normal(0.0, sigma_));
}

double InformationModel::estimated_total_s(const JobSpec& job) const {
  switch (level_) {
    case InformationLevel::kOracle: return job.has_estimate() ? job.estimate_s : job.duration_s;
    case InformationLevel::kEstimates:
      if (source_ == EstimateSource::kNoisy) return noisy_estimate_s(job);
      if (!job.has_estimate()) {
        throw InputError("job '" + job.id + "'", "has no runtime estimate, which information: estimates (source: trace) needs for a policy that uses job sizes (add an estimate_s column, or declare information: {estimates: {source: noisy}} or information: oracle)");
      }
      return job.estimate_s;
    case InformationLevel::kNone: break;
  }
  // Policies that need sizes are refused at construction under `none` (require_durations).
  throw InputError("job '" + job.id + "'", "a policy asked for its size, but the scenario declares information: none");
}

double InformationModel::estimated_remaining_s(const SchedulerView& view, const JobView& job) const {
  const JobSpec& spec = job.request();
  const double total_s = estimated_total_s(spec);
  if (level_ == InformationLevel::kOracle) {
    const double fraction = spec.duration_s > 0 ? kernel_remaining_work_s(job, view.now()) / spec.duration_s : 0.0;
    return total_s * fraction;
  }
  return std::max(total_s - job.attained_work_s(view.now()), floor_ * total_s);
}

double InformationModel::total_work_s(const JobSpec& job) const { return is_oracle() ? job.duration_s : estimated_total_s(job); }

double InformationModel::remaining_work_s(const SchedulerView& view, const JobView& job) const {
  return is_oracle() ? kernel_remaining_work_s(job, view.now()) : estimated_remaining_s(view, job);
}

}  // namespace schedsim
