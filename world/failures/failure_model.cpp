#include "world/failures/failure_model.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "sim/physics.hpp"

namespace schedsim {

double Lifetime::sample(Rng& rng, double mean_s) const {
  if (kind == Kind::kExponential) return rng.exponential(mean_s);
  // Weibull(k, lambda) has mean lambda * Gamma(1 + 1/k); inverse-CDF sampling.
  const double scale = mean_s / std::tgamma(1.0 + 1.0 / weibull_shape);
  return scale * std::pow(-std::log(rng.uniform_open()), 1.0 / weibull_shape);
}

bool LossSpikeConfig::enabled() const {
  if (rate_per_gpu_hour > 0.0) return true;
  for (const auto& [model, rate] : rate_per_gpu_hour_by_model) {
    if (rate > 0.0) return true;
  }
  return false;
}

double LossSpikeConfig::hazard_per_s(const JobSpec& job, int num_devices) const {
  double rate = rate_per_gpu_hour;
  if (!job.model.empty()) {
    auto it = rate_per_gpu_hour_by_model.find(job.model);
    if (it != rate_per_gpu_hour_by_model.end()) rate = it->second;
  }
  if (!(rate > 0.0)) return 0.0;
  return rate * std::pow(static_cast<double>(num_devices), gpu_exponent) / 3600.0;
}

bool DeviceFailureConfig::enabled() const {
  if (mtbf_h > 0.0) return true;
  for (const auto& [type, m] : mtbf_h_by_type) {
    if (m > 0.0) return true;
  }
  return false;
}

double DeviceFailureConfig::mtbf_h_of(const std::string& type) const {
  auto it = mtbf_h_by_type.find(type);
  return it != mtbf_h_by_type.end() ? it->second : mtbf_h;
}

namespace {

Lifetime parse_lifetime(const ConfigNode& parent) {
  Lifetime l;
  if (auto d = parent.maybe_child("distribution")) {
    l.kind = d->as_choice({"exponential", "weibull"}) == "weibull" ? Lifetime::Kind::kWeibull : Lifetime::Kind::kExponential;
  }
  if (auto k = parent.maybe_child("weibull_shape")) {
    if (l.kind != Lifetime::Kind::kWeibull) k->fail("only applies with distribution: weibull");
    l.weibull_shape = k->as_positive_double();
    if (l.weibull_shape < 0.05 || l.weibull_shape > 20.0) k->fail("must lie in [0.05, 20]; got " + std::to_string(l.weibull_shape));
  }
  return l;
}

void lifetime_yaml(YAML::Node& n, const Lifetime& l) {
  n["distribution"] = l.kind == Lifetime::Kind::kWeibull ? "weibull" : "exponential";
  if (l.kind == Lifetime::Kind::kWeibull) n["weibull_shape"] = l.weibull_shape;
}

std::map<std::string, double> parse_rate_map(const ConfigNode& node, bool positive) {
  std::map<std::string, double> out;
  if (!node.is_map()) node.fail("must be a map from name to number, e.g. {A100: 50000}");
  for (const auto& key : node.keys()) out[key] = positive ? node.child(key).as_positive_double() : node.child(key).as_nonnegative_double();
  return out;
}

// A time in seconds (`scale` = 3600 for hours) within 10^12 s, as trace times are: the
// simulated clock (sim/tick.cpp) stops near 4e12 s with a message that names no key.
double bounded_time(const ConfigNode& v, double value, double scale = 1.0) {
  if (value * scale > 1e12) v.fail("'" + v.as_string() + "' is out of range (over 10^12 seconds, about 31,700 years)");
  return value;
}

}  // namespace

FailureConfig FailureConfig::parse(const ConfigNode& node) {
  FailureConfig c;
  if (node.is_null()) return c;
  node.expect_map({"recorded_outcomes", "loss_spikes", "devices", "stragglers", "checkpoint"});
  if (auto r = node.maybe_child("recorded_outcomes")) c.recorded_outcomes_separate = r->as_choice({"separate", "completed"}) == "separate";
  if (auto ls = node.maybe_child("loss_spikes")) {
    ls->expect_map({"rate_per_gpu_hour", "gpu_exponent", "by_model", "distribution", "weibull_shape", "rollback_checkpoints", "restart_s"});
    LossSpikeConfig& s = c.loss_spikes;
    if (auto v = ls->maybe_child("rate_per_gpu_hour")) s.rate_per_gpu_hour = v->as_nonnegative_double();
    if (auto v = ls->maybe_child("gpu_exponent")) {
      s.gpu_exponent = v->as_nonnegative_double();
      if (s.gpu_exponent > 4.0) v->fail("must lie in [0, 4]; 1 = hazard proportional to the GPU count");
    }
    if (auto v = ls->maybe_child("by_model")) s.rate_per_gpu_hour_by_model = parse_rate_map(*v, false);
    s.lifetime = parse_lifetime(*ls);
    if (auto v = ls->maybe_child("rollback_checkpoints")) {
      const std::int64_t k = v->as_positive_int();
      if (k > 1000) v->fail("must lie in [1, 1000]");
      s.rollback_checkpoints = static_cast<int>(k);
    }
    if (auto v = ls->maybe_child("restart_s")) s.restart_s = bounded_time(*v, v->as_nonnegative_double());
  }
  if (auto dv = node.maybe_child("devices")) {
    dv->expect_map({"mtbf_h", "mtbf_h_by_type", "distribution", "weibull_shape", "unit", "repair_h", "on_failure", "restart_s"});
    DeviceFailureConfig& d = c.devices;
    if (auto v = dv->maybe_child("mtbf_h")) d.mtbf_h = v->as_nonnegative_double();
    if (auto v = dv->maybe_child("mtbf_h_by_type")) d.mtbf_h_by_type = parse_rate_map(*v, false);
    d.lifetime = parse_lifetime(*dv);
    if (auto v = dv->maybe_child("unit")) d.unit = v->as_choice({"node", "device"}) == "device" ? DeviceFailureConfig::Unit::kDevice : DeviceFailureConfig::Unit::kNode;
    if (auto v = dv->maybe_child("repair_h")) d.repair_h = bounded_time(*v, v->as_nonnegative_double(), 3600.0);
    if (auto v = dv->maybe_child("on_failure")) {
      d.on_failure = v->as_choice({"requeue", "wait"}) == "wait" ? DeviceFailureConfig::OnFailure::kWait : DeviceFailureConfig::OnFailure::kRequeue;
    }
    if (auto v = dv->maybe_child("restart_s")) d.restart_s = bounded_time(*v, v->as_nonnegative_double());
  }
  if (auto st = node.maybe_child("stragglers")) {
    st->expect_map({"fraction", "slowdown"});
    if (auto v = st->maybe_child("fraction")) {
      c.stragglers.fraction = v->as_nonnegative_double();
      if (c.stragglers.fraction > 1.0) v->fail("is a share of nodes in [0, 1]");
    }
    if (auto v = st->maybe_child("slowdown")) {
      c.stragglers.slowdown = v->as_positive_double();
      if (c.stragglers.slowdown > 1.0) v->fail("is a rate multiplier in (0, 1], e.g. 0.5 = half speed");
    }
  }
  if (auto ck = node.maybe_child("checkpoint")) {
    ck->expect_map({"interval", "interval_s", "cost_s", "async"});
    CheckpointConfig& k = c.checkpoint;
    if (auto v = ck->maybe_child("interval")) {
      const std::string p = v->as_choice({"none", "fixed", "young_daly"});
      k.policy = p == "none" ? CheckpointConfig::Policy::kNone : p == "fixed" ? CheckpointConfig::Policy::kFixed : CheckpointConfig::Policy::kYoungDaly;
    }
    if (auto v = ck->maybe_child("interval_s")) {
      k.interval_s = bounded_time(*v, v->as_positive_double());
      if (!ck->has("interval")) k.policy = CheckpointConfig::Policy::kFixed;
      else if (k.policy != CheckpointConfig::Policy::kFixed) v->fail("only applies with interval: fixed");
    }
    if (k.policy == CheckpointConfig::Policy::kFixed && !(k.interval_s > 0.0)) ck->fail("interval: fixed needs interval_s (seconds of compute between checkpoints)");
    if (auto v = ck->maybe_child("cost_s")) k.cost_s = bounded_time(*v, v->as_nonnegative_double());
    if (auto v = ck->maybe_child("async")) k.async = v->as_bool();
  }
  return c;
}

YAML::Node FailureConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["recorded_outcomes"] = recorded_outcomes_separate ? "separate" : "completed";
  YAML::Node ls(YAML::NodeType::Map);
  ls["rate_per_gpu_hour"] = loss_spikes.rate_per_gpu_hour;
  ls["gpu_exponent"] = loss_spikes.gpu_exponent;
  if (!loss_spikes.rate_per_gpu_hour_by_model.empty()) {
    YAML::Node m(YAML::NodeType::Map);
    for (const auto& [k, v] : loss_spikes.rate_per_gpu_hour_by_model) m[k] = v;
    ls["by_model"] = m;
  }
  lifetime_yaml(ls, loss_spikes.lifetime);
  ls["rollback_checkpoints"] = loss_spikes.rollback_checkpoints;
  ls["restart_s"] = loss_spikes.restart_s;
  n["loss_spikes"] = ls;
  YAML::Node d(YAML::NodeType::Map);
  d["mtbf_h"] = devices.mtbf_h;
  if (!devices.mtbf_h_by_type.empty()) {
    YAML::Node m(YAML::NodeType::Map);
    for (const auto& [k, v] : devices.mtbf_h_by_type) m[k] = v;
    d["mtbf_h_by_type"] = m;
  }
  lifetime_yaml(d, devices.lifetime);
  d["unit"] = devices.unit == DeviceFailureConfig::Unit::kNode ? "node" : "device";
  d["repair_h"] = devices.repair_h;
  d["on_failure"] = devices.on_failure == DeviceFailureConfig::OnFailure::kRequeue ? "requeue" : "wait";
  d["restart_s"] = devices.restart_s;
  n["devices"] = d;
  YAML::Node st(YAML::NodeType::Map);
  st["fraction"] = stragglers.fraction;
  st["slowdown"] = stragglers.slowdown;
  n["stragglers"] = st;
  YAML::Node ck(YAML::NodeType::Map);
  ck["interval"] = checkpoint.policy == CheckpointConfig::Policy::kNone ? "none" : checkpoint.policy == CheckpointConfig::Policy::kFixed ? "fixed" : "young_daly";
  if (checkpoint.policy == CheckpointConfig::Policy::kFixed) ck["interval_s"] = checkpoint.interval_s;
  if (checkpoint.cost_s >= 0.0) ck["cost_s"] = checkpoint.cost_s;  // absent: from the physics model
  ck["async"] = checkpoint.async;
  n["checkpoint"] = ck;
  return n;
}

FailureModel::FailureModel(const FailureConfig& config, const ClusterSpec& cluster, std::uint64_t seed, const PhysicsModel* physics)
    : config_(config), cluster_(cluster), physics_(physics), spike_rng_(seed, "failures.loss_spikes"), unit_rng_(seed, "failures.devices") {
  const bool per_node = config_.devices.unit == DeviceFailureConfig::Unit::kNode;
  num_units_ = per_node ? cluster.num_nodes() : cluster.num_devices();
  device_ids_.resize(static_cast<std::size_t>(cluster.num_devices()));
  for (DeviceId d = 0; d < cluster.num_devices(); ++d) device_ids_[static_cast<std::size_t>(d)] = d;
  unit_rate_per_s_.assign(static_cast<std::size_t>(num_units_), 0.0);
  if (config_.devices.enabled()) {
    for (int u = 0; u < num_units_; ++u) {
      const Span<DeviceId> devs = unit_devices(u);
      const double mtbf_h = config_.devices.mtbf_h_of(cluster.device_type_of(devs[0]));
      if (mtbf_h > 0.0) unit_rate_per_s_[static_cast<std::size_t>(u)] = static_cast<double>(devs.size()) / (mtbf_h * 3600.0);
    }
  }
  if (config_.stragglers.fraction > 0.0 && config_.stragglers.slowdown < 1.0) {
    Rng rng(seed, "failures.stragglers");
    slow_node_.assign(static_cast<std::size_t>(cluster.num_nodes()), 0);
    for (auto& s : slow_node_) s = rng.uniform() < config_.stragglers.fraction ? 1 : 0;
  }
}

Span<DeviceId> FailureModel::unit_devices(int unit) const {
  if (config_.devices.unit == DeviceFailureConfig::Unit::kDevice) return Span<DeviceId>(&device_ids_[static_cast<std::size_t>(unit)], 1);
  // Node devices are numbered contiguously: a window of the id table.
  const NodeSpec& node = cluster_.node(unit);
  return Span<DeviceId>(&device_ids_[static_cast<std::size_t>(node.first_device)], static_cast<std::size_t>(node.num_devices));
}

int FailureModel::unit_of(DeviceId d) const {
  return config_.devices.unit == DeviceFailureConfig::Unit::kDevice ? static_cast<int>(d) : cluster_.node_of(d);
}

std::optional<double> FailureModel::sample_time_to_failure_s(int unit) {
  const double rate = unit_rate_per_s_[static_cast<std::size_t>(unit)];
  if (!(rate > 0.0)) return std::nullopt;
  const double t = config_.devices.lifetime.sample(unit_rng_, 1.0 / rate);
  if (!(t < kHorizon_s)) return std::nullopt;
  return t;
}

std::optional<double> FailureModel::sample_time_to_spike_s(const JobSpec& job, int num_devices) {
  const double h = config_.loss_spikes.hazard_per_s(job, num_devices);
  if (!(h > 0.0)) return std::nullopt;
  const double t = config_.loss_spikes.lifetime.sample(spike_rng_, 1.0 / h);
  if (!(t < kHorizon_s)) return std::nullopt;
  return t;
}

double FailureModel::job_failure_rate_per_s(const JobSpec& job, Span<DeviceId> devices) const {
  double rate = config_.loss_spikes.hazard_per_s(job, static_cast<int>(devices.size()));
  // Each unit the job touches counts once (a node failure hits the job whichever of the
  // node's devices it holds).
  std::vector<int> units;
  units.reserve(devices.size());
  for (DeviceId d : devices) units.push_back(unit_of(d));
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  for (int u : units) rate += unit_rate_per_s_[static_cast<std::size_t>(u)];
  return rate;
}

double FailureModel::checkpoint_cost_s(const JobSpec& job, int num_devices) const {
  if (config_.checkpoint.cost_s >= 0.0) return config_.checkpoint.cost_s;
  return physics_ ? physics_->checkpoint_save_s(job, num_devices) : 0.0;
}

double FailureModel::checkpoint_interval_s(const JobSpec& job, Span<DeviceId> devices) const {
  if (config_.checkpoint.policy == CheckpointConfig::Policy::kNone) return 0.0;
  const double rate = config_.checkpoint.policy == CheckpointConfig::Policy::kYoungDaly ? job_failure_rate_per_s(job, devices) : 0.0;
  return schedsim::checkpoint_interval_s(config_.checkpoint, checkpoint_cost_s(job, static_cast<int>(devices.size())), rate);
}

double FailureModel::straggler_factor(Span<DeviceId> devices) const {
  if (slow_node_.empty()) return 1.0;
  for (DeviceId d : devices) {
    if (slow_node_[static_cast<std::size_t>(cluster_.node_of(d))]) return config_.stragglers.slowdown;
  }
  return 1.0;
}

}  // namespace schedsim
