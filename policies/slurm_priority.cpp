#include "policies/slurm_priority.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policies/queue_policy.hpp"
#include "world/physics/catalogue_names.hpp"
#include "base/error.hpp"

namespace schedsim {

SlurmPriorityOrder::SlurmPriorityOrder(SlurmPriorityOptions options) : options_(std::move(options)) {
  // Accounts with configured shares count towards the normalization from the start, as
  // Slurm's association tree lists them before they run anything.
  for (const auto& [name, shares] : options_.shares) account_id(name);
}

int SlurmPriorityOrder::account_id(const std::string& name) {
  const auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(usage_.size());
  ids_.emplace(name, id);
  usage_.push_back(0.0);
  held_.push_back(0.0);
  const auto s = options_.shares.find(name);
  raw_shares_.push_back(s == options_.shares.end() ? 1.0 : s->second);
  shares_total_ += raw_shares_.back();
  return id;
}

// Usage accrues at the devices held and decays with the half-life H; between updates the
// devices held are constant, so dU/dt = held - U ln2 / H integrates exactly to
// U(t0 + dt) = U(t0) d + held (1 - d) H / ln2 with d = 2^(-dt/H) (Slurm decays in steps of
// PriorityCalcPeriod; this is the limit of small steps).
double SlurmPriorityOrder::usage_at(std::size_t a, double now_s) const {
  const double dt = now_s - last_s_;
  if (dt <= 0) return usage_[a];
  const double h = options_.decay_half_life_s;
  if (h <= 0) return usage_[a] + held_[a] * dt;
  const double rate = std::log(2.0) / h;
  const double one_minus_d = -std::expm1(-rate * dt);
  return usage_[a] * (1.0 - one_minus_d) + held_[a] * one_minus_d / rate;
}

double SlurmPriorityOrder::usage_gpu_s(const std::string& account, double now_s) const {
  const auto it = ids_.find(account);
  return it == ids_.end() ? 0.0 : usage_at(static_cast<std::size_t>(it->second), now_s);
}

void SlurmPriorityOrder::advance(double now_s) {
  if (now_s <= last_s_) return;
  for (std::size_t a = 0; a < usage_.size(); ++a) usage_[a] = usage_at(a, now_s);
  last_s_ = now_s;
}

void SlurmPriorityOrder::fairshare_at(double now_s, std::vector<double>& out) const {
  // Classic fair share, every account a child of the root: U = the account's usage over
  // everyone's, S = its shares over all accounts' shares.
  out.resize(usage_.size());
  double total = 0;
  for (std::size_t i = 0; i < usage_.size(); ++i) total += (out[i] = usage_at(i, now_s));
  for (std::size_t i = 0; i < usage_.size(); ++i) {
    const double u = total > 0 ? out[i] / total : 0.0;
    out[i] = std::exp2(-u / (raw_shares_[i] / shares_total_));
  }
}

void SlurmPriorityOrder::on_decision(const SchedulerView& view) {
  advance(view.now().seconds());
  fairshare_at(last_s_, fairshare_);
  fairshare_s_ = last_s_;
}

SlurmPriorityFactors SlurmPriorityOrder::compute(const JobTerms& t, double now_s) const {
  SlurmPriorityFactors f;
  f.age = std::min(std::max(now_s - t.submit_s, 0.0) / options_.max_age_s, 1.0);
  const auto a = static_cast<std::size_t>(t.account);
  if (now_s == fairshare_s_ && fairshare_.size() == usage_.size()) {
    f.fairshare = fairshare_[a];
  } else {
    std::vector<double> now;
    fairshare_at(now_s, now);
    f.fairshare = now[a];
  }
  f.jobsize = t.jobsize;
  if (options_.weight_qos > 0) {
    const double top = options_.qos_max_priority > 0 ? options_.qos_max_priority : max_priority_seen_;
    f.qos = top > 0 ? t.priority / top : 0.0;
  }
  f.priority = std::floor(options_.weight_age * f.age + options_.weight_fairshare * f.fairshare + options_.weight_jobsize * f.jobsize +
                          options_.weight_qos * f.qos);
  return f;
}

SlurmPriorityFactors SlurmPriorityOrder::factors(const SchedulerView& view, JobSlot job) const {
  const JobTerms& t = terms_.at(static_cast<std::size_t>(job));
  if (t.arrival_seq != view.job(job).arrival_seq()) throw InvariantError("slurm order: factors asked for job '" + view.job(job).id() + "', which was never queued");
  return compute(t, view.now().seconds());
}

const SlurmPriorityOrder::JobTerms& SlurmPriorityOrder::terms_of(const SchedulerView& view, JobSlot job) {
  const auto slot = static_cast<std::size_t>(job);
  if (terms_.size() <= slot) terms_.resize(slot + 1);
  JobTerms& t = terms_[slot];
  const JobView& j = view.job(job);
  if (t.arrival_seq == j.arrival_seq()) return t;  // queued again after a preemption, or re-keyed
  const JobView& spec = j;
  if (options_.weight_qos > 0) {
    // The QoS factor is a share of the top priority: a negative one, or one above an
    // explicit top, has no place on that scale.
    if (spec.priority() < 0) {
      throw InputError("job '" + spec.id() + "'", "priority " + detail::format_number(spec.priority()) + " is negative; the slurm order's QoS factor (weight_qos > 0) needs priorities >= 0 (or set weight_qos: 0)");
    }
    if (options_.qos_max_priority > 0 && spec.priority() > options_.qos_max_priority) {
      throw InputError("job '" + spec.id() + "'", "priority " + detail::format_number(spec.priority()) + " exceeds qos_max_priority " + detail::format_number(options_.qos_max_priority) +
                                                    " of the slurm order; raise qos_max_priority, or set it to 0 (the largest priority seen)");
    }
    max_priority_seen_ = std::max(max_priority_seen_, spec.priority());
  }
  t.arrival_seq = j.arrival_seq();
  t.submit_s = spec.submit().seconds();
  // Relative to the cluster's devices: a job asking for all of them gets 1 (favouring
  // large), a one-device job gets 1 (favouring small).
  const double devices = view.cluster().num_devices();
  const double n = std::min<double>(spec.num_gpus(), devices);
  t.jobsize = options_.favor_small ? (devices - n + 1.0) / devices : n / devices;
  t.priority = spec.priority();
  t.account = account_id(account(spec));
  return t;
}

double SlurmPriorityOrder::queued_key(const SchedulerView& view, JobSlot job) { return -compute(terms_of(view, job), view.now().seconds()).priority; }

void SlurmPriorityOrder::on_started(const SchedulerView& view, JobSlot job) {
  advance(view.now().seconds());
  const JobView& spec = view.job(job);
  const int a = terms_[static_cast<std::size_t>(job)].account;
  const double devices = spec.num_gpus() * (spec.gpu_milli() / 1000.0);
  held_[static_cast<std::size_t>(a)] += devices;
  const auto s = static_cast<std::size_t>(job);
  if (counted_.size() <= s) counted_.resize(s + 1, {-1, 0.0});
  counted_[s] = {a, devices};
}

void SlurmPriorityOrder::on_stopped(const SchedulerView& view, JobSlot job) {
  const auto s = static_cast<std::size_t>(job);
  if (s >= counted_.size() || counted_[s].first < 0) return;
  advance(view.now().seconds());
  held_[static_cast<std::size_t>(counted_[s].first)] -= counted_[s].second;
  counted_[s] = {-1, 0.0};
}

void SlurmPriorityOrder::write(YAML::Node& resolved) const {
  resolved["weight_age"] = options_.weight_age;
  resolved["weight_fairshare"] = options_.weight_fairshare;
  resolved["weight_jobsize"] = options_.weight_jobsize;
  resolved["weight_qos"] = options_.weight_qos;
  resolved["max_age_s"] = options_.max_age_s;
  resolved["decay_half_life_s"] = options_.decay_half_life_s;
  resolved["favor_small"] = options_.favor_small;
  resolved["account"] = options_.by_group ? "group" : "user";
  YAML::Node shares(YAML::NodeType::Map);
  for (const auto& [name, value] : options_.shares) shares[name] = value;
  resolved["shares"] = shares;
  resolved["qos_max_priority"] = options_.qos_max_priority;
}

void SlurmPriorityOrder::snapshot(SnapshotArchive& ar) {
  ar(ids_, usage_, held_, raw_shares_, shares_total_, last_s_, max_priority_seen_, counted_, fairshare_, fairshare_s_);
  ar.io_each(terms_, [&](JobTerms& t) { ar(t.arrival_seq, t.submit_s, t.jobsize, t.priority, t.account); });
  if (!ar.loading()) return;
  // Account ids index the per-account vectors without checks.
  const auto accounts = static_cast<int>(usage_.size());
  ar.check(held_.size() == usage_.size() && raw_shares_.size() == usage_.size() && static_cast<int>(ids_.size()) == accounts,
           "the slurm order's per-account tables differ in length");
  for (const auto& [name, id] : ids_) ar.check(id >= 0 && id < accounts, "the slurm order's account '" + name + "' has id " + std::to_string(id) + " of " + std::to_string(accounts));
  for (const JobTerms& t : terms_) ar.check(t.account < accounts, "the slurm order names account " + std::to_string(t.account) + ", which it has no usage for");
  for (const auto& c : counted_) ar.check(c.first < accounts, "the slurm order counts devices for account " + std::to_string(c.first) + ", which it has no usage for");
}

OrderKind slurm_priority_order() {
  const SlurmPriorityOptions d;
  return OrderKind{
      "slurm-priority",
      {{"weight_age", "1000", "PriorityWeightAge: weight of the age factor min(wait / max_age_s, 1)"},
       {"weight_fairshare", "10000", "PriorityWeightFairshare: weight of the classic fair-share factor 2^(-U/S)"},
       {"weight_jobsize", "1000", "PriorityWeightJobSize: weight of the job-size factor (devices asked for, relative to the cluster's)"},
       {"weight_qos", "0", "PriorityWeightQOS: weight of the QoS factor JobSpec.priority / qos_max_priority"},
       {"max_age_s", "1209600", "PriorityMaxAge in seconds (default 14 days): the wait at which the age factor reaches 1"},
       {"decay_half_life_s", "1209600", "PriorityDecayHalfLife in seconds (default 14 days): half-life of recorded usage; 0 = usage never decays"},
       {"favor_small", "false", "PriorityFavorSmall: true = a one-device job gets job size 1, false = a job asking for every device does"},
       {"account", "user", "whose usage and shares the fair-share factor counts: user or group (JobSpec.user / JobSpec.group)"},
       {"shares", "{}", "account -> positive raw shares, e.g. {alice: 2} (default 1 each); normalized over the accounts seen and listed"},
       {"qos_max_priority", "0", "the JobSpec.priority that gives QoS factor 1; 0 = the largest priority among the jobs queued so far"}},
      false,
      [d](const ConfigNode& config) {
        SlurmPriorityOptions o = d;
        if (auto v = config.maybe_child("weight_age")) o.weight_age = v->as_nonnegative_double();
        if (auto v = config.maybe_child("weight_fairshare")) o.weight_fairshare = v->as_nonnegative_double();
        if (auto v = config.maybe_child("weight_jobsize")) o.weight_jobsize = v->as_nonnegative_double();
        if (auto v = config.maybe_child("weight_qos")) o.weight_qos = v->as_nonnegative_double();
        if (auto v = config.maybe_child("max_age_s")) o.max_age_s = v->as_positive_double();
        if (auto v = config.maybe_child("decay_half_life_s")) o.decay_half_life_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("favor_small")) o.favor_small = v->as_bool();
        if (auto v = config.maybe_child("account")) o.by_group = v->as_choice({"user", "group"}) == "group";
        if (auto v = config.maybe_child("shares")) {
          if (!v->is_map()) v->fail("expected a map from account to raw shares, e.g. {alice: 2}");
          for (const auto& k : v->keys()) o.shares[k] = v->child(k).as_positive_double();
        }
        if (auto v = config.maybe_child("qos_max_priority")) o.qos_max_priority = v->as_nonnegative_double();
        return std::make_unique<SlurmPriorityOrder>(std::move(o));
      },
  };
}

}  // namespace schedsim
