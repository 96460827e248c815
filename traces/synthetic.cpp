#include "traces/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "sim/error.hpp"

namespace schedsim {

SyntheticConfig SyntheticConfig::parse(const ConfigNode& node) {
  node.expect_map({"num_jobs", "arrival", "duration_s", "gpus", "start_s", "estimate_error_sigma", "models"});
  SyntheticConfig c;
  if (auto n = node.maybe_child("num_jobs")) c.num_jobs = static_cast<std::uint64_t>(n->as_positive_int());
  if (auto a = node.maybe_child("arrival")) {
    a->expect_map({"process", "mean_interarrival_s", "interarrival_s"});
    c.arrival_process = a->has("process") ? a->child("process").as_choice({"poisson", "fixed"}) : "poisson";
    const char* gap_key = c.arrival_process == "poisson" ? "mean_interarrival_s" : "interarrival_s";
    const char* other = c.arrival_process == "poisson" ? "interarrival_s" : "mean_interarrival_s";
    if (a->has(other)) a->child(other).fail(std::string("does not apply to process: ") + c.arrival_process + "; use " + gap_key);
    if (auto g = a->maybe_child(gap_key)) c.mean_interarrival_s = g->as_positive_double();
  }
  if (auto s = node.maybe_child("start_s")) c.start_s = s->as_nonnegative_double();
  if (auto d = node.maybe_child("duration_s")) c.duration_s = Distribution::parse(*d);
  if (auto g = node.maybe_child("gpus")) {
    c.gpus.clear();
    if (g->is_scalar()) {
      c.gpus.emplace_back(static_cast<int>(g->as_positive_int()), 1.0);
    } else {
      double total = 0;
      for (const std::string& key : g->keys()) {
        const ConfigNode p = g->child(key);
        std::int64_t count = 0;
        try {
          std::size_t used = 0;
          count = std::stoll(key, &used);
          if (used != key.size()) throw std::invalid_argument(key);
        } catch (const std::exception&) {
          p.fail("GPU counts must be positive integers, got '" + key + "'");
        }
        if (count < 1 || count > 1'000'000) p.fail("GPU counts must be between 1 and 1000000, got " + key);
        const double prob = p.as_positive_double();
        c.gpus.emplace_back(static_cast<int>(count), prob);
        total += prob;
      }
      if (c.gpus.empty()) g->fail("give at least one GPU count with its probability, e.g. {1: 0.7, 8: 0.3}");
      // Draws must not depend on the order keys were written in (JSON tools reorder them).
      std::sort(c.gpus.begin(), c.gpus.end());
      for (std::size_t i = 1; i < c.gpus.size(); ++i) {
        if (c.gpus[i].first == c.gpus[i - 1].first) g->fail("GPU count " + std::to_string(c.gpus[i].first) + " is listed twice");
      }
      if (std::fabs(total - 1.0) > 1e-9) g->fail("probabilities must sum to 1, they sum to " + std::to_string(total));
    }
  }
  if (auto e = node.maybe_child("estimate_error_sigma")) c.estimate_error_sigma = e->as_nonnegative_double();
  if (auto m = node.maybe_child("models")) {
    double total = 0;
    for (const std::string& key : m->keys()) {
      c.models.emplace_back(key, m->child(key).as_positive_double());
      total += c.models.back().second;
    }
    if (c.models.empty()) m->fail("give at least one model with its probability, e.g. {ResNet-50: 0.5, BERT-large: 0.5}");
    if (std::fabs(total - 1.0) > 1e-9) m->fail("probabilities must sum to 1, they sum to " + std::to_string(total));
    std::sort(c.models.begin(), c.models.end());  // order-independent draws, as for gpus
  }
  return c;
}

YAML::Node SyntheticConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["num_jobs"] = num_jobs;
  YAML::Node a(YAML::NodeType::Map);
  a["process"] = arrival_process;
  a[arrival_process == "poisson" ? "mean_interarrival_s" : "interarrival_s"] = mean_interarrival_s;
  n["arrival"] = a;
  n["start_s"] = start_s;
  n["duration_s"] = duration_s.to_yaml();
  YAML::Node g(YAML::NodeType::Map);
  for (const auto& [count, p] : gpus) g[std::to_string(count)] = p;
  n["gpus"] = g;
  if (estimate_error_sigma >= 0) n["estimate_error_sigma"] = estimate_error_sigma;
  if (!models.empty()) {
    YAML::Node m(YAML::NodeType::Map);
    for (const auto& [name, p] : models) m[name] = p;
    n["models"] = m;
  }
  return n;
}

int SyntheticConfig::max_gpus() const {
  int m = 0;
  for (const auto& [count, p] : gpus) m = std::max(m, count);
  return m;
}

double SyntheticConfig::mean_gpus() const {
  double m = 0;
  for (const auto& [count, p] : gpus) m += count * p;
  return m;
}

SyntheticJobSource::SyntheticJobSource(const SyntheticConfig& config, std::uint64_t seed)
    : config_(config),
      arrivals_(seed, "synthetic.arrivals"),
      durations_(seed, "synthetic.durations"),
      gpus_(seed, "synthetic.gpus"),
      estimates_(seed, "synthetic.estimates"),
      models_(seed, "synthetic.models"),
      t_s_(config.start_s) {
  double cum = 0;
  for (const auto& [count, p] : config.gpus) gpu_cdf_.push_back(cum += p);
  cum = 0;
  for (const auto& [name, p] : config.models) model_cdf_.push_back(cum += p);
}

bool SyntheticJobSource::next(JobSpec& out) {
  if (generated_ >= config_.num_jobs) return false;
  t_s_ += config_.arrival_process == "poisson" ? arrivals_.exponential(config_.mean_interarrival_s) : config_.mean_interarrival_s;
  out.id = std::to_string(generated_);
  out.submit = Tick::from_seconds(t_s_);
  out.duration_s = config_.duration_s.sample(durations_);
  std::size_t i = 0;
  if (gpu_cdf_.size() > 1) {
    const double u = gpus_.uniform();
    while (i + 1 < gpu_cdf_.size() && u >= gpu_cdf_[i]) ++i;
  }
  out.num_gpus = config_.gpus[i].first;
  out.estimate_s = config_.estimate_error_sigma >= 0 ? out.duration_s * std::exp(estimates_.normal(0.0, config_.estimate_error_sigma))
                                                      : std::nan("");
  out.model.clear();
  if (!model_cdf_.empty()) {
    std::size_t m = 0;
    const double u = models_.uniform();
    while (m + 1 < model_cdf_.size() && u >= model_cdf_[m]) ++m;
    out.model = config_.models[m].first;
  }
  out.source_line = 0;
  ++generated_;
  return true;
}

}  // namespace schedsim
