#include "traces/synthetic.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/error.hpp"

namespace schedsim {
namespace {

// Published per-cluster statistics of GPU jobs. Copied here (never read at run time);
// each value's source is cited beside it and in docs/config.md.
struct PublishedCluster {
  const char* preset;
  double gpu_jobs;           // number of GPU jobs in the trace
  double span_days;          // submission period of the trace
  double mean_run_s;         // avg_run_time_gpu
  double median_run_s;       // med_run_time_gpu
  double mean_gpus;          // avg_gpu_num
  int max_gpus;              // max_gpu
  double completed, cancelled, failed;  // complete/cancel/fail_rate_gpu
};

// Source of all but span_days: ../shared/data/acme/cluster_summary.csv (InternLM/AcmeTrace,
// CC BY 4.0), rows Philly, Helios and Seren, columns gpu_job_num, avg_run_time_gpu,
// med_run_time_gpu, avg_gpu_num, max_gpu, complete_rate_gpu, cancel_rate_gpu,
// fail_rate_gpu. The Helios row equals the `total` row of
// ../shared/data/helios/helios_cluster_summary.csv (HeliosArtifact).
// span_days: Philly jobs were submitted 2017-08-07 .. 2017-12-22 = 137 days
// (../shared/data/philly/philly_traces_README.md); Helios covers April .. September 2020
// = 183 days (HeliosData_README.md); Acme covers March .. August 2023 = 184 days
// (AcmeTrace_README.md).
const PublishedCluster kPublished[] = {
    {"philly-like", 112956, 137, 18006.055, 874.0, 1.928, 128, 0.604, 0.09, 0.305},
    {"helios-like", 1580464, 183, 6651.681, 206.0, 3.716, 2048, 0.624, 0.221, 0.155},
    {"llm-cluster-like", 663813, 184, 1414.335, 122.0, 5.68, 1024, 0.497, 0.075, 0.429},
};

// GPU counts 1, 2, 4, ... up to max_gpus with P(2^k) proportional to r^k, r fitted by
// bisection so that the mean is `mean`. When that leaves P(1) < 0.5, which would
// contradict the published median of 1 GPU, P(1) is set to 0.5 and the fit is redone on
// the other counts.
std::vector<std::pair<int, double>> fit_gpu_counts(double mean, int max_gpus) {
  int levels = 0;
  while ((2 << levels) <= max_gpus) ++levels;  // exponents 0..levels
  auto shares = [&](double r, double p1) {
    std::vector<double> w;
    if (p1 < 0) {
      double sum = 0;
      for (int k = 0; k <= levels; ++k) sum += std::pow(r, k);
      for (int k = 0; k <= levels; ++k) w.push_back(std::pow(r, k) / sum);
    } else {
      double sum = 0;
      for (int k = 1; k <= levels; ++k) sum += std::pow(r, k);
      w.push_back(p1);
      for (int k = 1; k <= levels; ++k) w.push_back((1 - p1) * std::pow(r, k) / sum);
    }
    return w;
  };
  auto mean_of = [&](const std::vector<double>& w) {
    double m = 0;
    for (std::size_t k = 0; k < w.size(); ++k) m += w[k] * std::ldexp(1.0, static_cast<int>(k));
    return m;
  };
  auto fit = [&](double p1) {
    double lo = 1e-9, hi = 0.999999;
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (mean_of(shares(mid, p1)) < mean ? lo : hi) = mid;
    }
    return shares(0.5 * (lo + hi), p1);
  };
  std::vector<double> w = fit(-1);
  if (w[0] < 0.5) w = fit(0.5);
  std::vector<std::pair<int, double>> out;
  double total = 0;
  for (std::size_t k = 0; k < w.size(); ++k) total += w[k];
  for (std::size_t k = 0; k < w.size(); ++k) out.emplace_back(1 << k, w[k] / total);
  return out;
}

}  // namespace

std::vector<std::string> SyntheticConfig::preset_names() {
  std::vector<std::string> out;
  for (const auto& p : kPublished) out.emplace_back(p.preset);
  return out;
}

SyntheticConfig SyntheticConfig::from_preset(const std::string& name, const std::string& where) {
  for (const auto& p : kPublished) {
    if (name != p.preset) continue;
    SyntheticConfig c;
    c.preset = name;
    c.arrival_process = "poisson";
    c.mean_interarrival_s = p.span_days * 86400.0 / p.gpu_jobs;
    // Lognormal with the published median and mean: mean = median * exp(sigma^2 / 2).
    c.duration_s = Distribution::lognormal(p.median_run_s, std::sqrt(2.0 * std::log(p.mean_run_s / p.median_run_s)));
    c.gpus = fit_gpu_counts(p.mean_gpus, p.max_gpus);
    const double sum = p.completed + p.cancelled + p.failed;  // 0.999 for Philly: rounding
    c.recorded_status = StatusShares{p.completed / sum, p.cancelled / sum, p.failed / sum};
    return c;
  }
  std::string list;
  for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError(where, "unknown preset '" + name + "'; choose one of: " + list);
}

namespace {

// Simulated times stay below 10^12 s (as trace times do): beyond it a clock in
// microseconds nears its int64 limit, and the run would stop with a message naming no key.
double within_time_range(const ConfigNode& n, double v) {
  if (v > 1e12) n.fail("the value '" + n.as_string() + "' is out of range (over 10^12 seconds)");
  return v;
}

}  // namespace

SyntheticConfig SyntheticConfig::parse(const ConfigNode& node) {
  node.expect_map({"preset", "num_jobs", "arrival", "load", "duration_s", "gpus", "start_s", "estimate_error_sigma", "recorded_status", "models", "elastic"});
  SyntheticConfig c;
  if (auto p = node.maybe_child("preset")) c = from_preset(p->as_string(), p->where());
  if (auto n = node.maybe_child("num_jobs")) c.num_jobs = static_cast<std::uint64_t>(n->as_positive_int());
  if (auto a = node.maybe_child("arrival")) {
    a->expect_map({"process", "mean_interarrival_s", "interarrival_s", "burst_factor", "mean_calm_s", "mean_burst_s"});
    c.arrival_process = a->has("process") ? a->child("process").as_choice({"poisson", "fixed", "bursty"}) : "poisson";
    const bool fixed = c.arrival_process == "fixed";
    const char* gap_key = fixed ? "interarrival_s" : "mean_interarrival_s";
    const char* other = fixed ? "mean_interarrival_s" : "interarrival_s";
    if (a->has(other)) a->child(other).fail(std::string("does not apply to process: ") + c.arrival_process + "; use " + gap_key);
    if (auto g = a->maybe_child(gap_key)) c.mean_interarrival_s = within_time_range(*g, g->as_positive_double());
    const char* burst_keys[] = {"burst_factor", "mean_calm_s", "mean_burst_s"};
    if (c.arrival_process == "bursty") {
      for (const char* k : burst_keys) {
        if (!a->has(k)) a->fail(std::string("process: bursty needs '") + k + "' (burst_factor, mean_calm_s, mean_burst_s)");
      }
      c.burst_factor = a->child("burst_factor").as_positive_double();
      if (c.burst_factor < 1.0) a->child("burst_factor").fail("must be >= 1 (the burst state's rate / the calm state's rate)");
      c.mean_calm_s = within_time_range(a->child("mean_calm_s"), a->child("mean_calm_s").as_positive_double());
      c.mean_burst_s = within_time_range(a->child("mean_burst_s"), a->child("mean_burst_s").as_positive_double());
    } else {
      for (const char* k : burst_keys) {
        if (a->has(k)) a->child(k).fail(std::string("only applies to process: bursty, not ") + c.arrival_process);
      }
    }
  }
  if (auto l = node.maybe_child("load")) {
    // One knob sets the rate: a gap written beside it would be silently replaced.
    for (const char* k : {"mean_interarrival_s", "interarrival_s"}) {
      if (node.has("arrival") && node.child("arrival").has(k)) {
        l->fail(std::string("sets the arrival rate, so it cannot be given with arrival.") + k + "; remove one of them");
      }
    }
    c.load = l->as_positive_double();
  }
  if (auto s = node.maybe_child("start_s")) c.start_s = within_time_range(*s, s->as_nonnegative_double());
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
        if (const std::string problem = parse_decimal_int(key, count); !problem.empty()) {
          p.fail(problem.rfind("expected an integer", 0) == 0 ? "GPU counts must be positive integers, got '" + key + "'"
                                                              : "GPU counts must be positive integers: " + problem);
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
      const ConfigNode entry = m->child(key);
      if (entry.is_map()) {  // {share: P, plan: ...}: an LLM job class with its parallelism plan
        entry.expect_map({"share", "plan"});
        c.models.emplace_back(key, entry.child("share").as_positive_double());
        if (auto plan = entry.maybe_child("plan")) c.plans.emplace_back(key, PlanRequest::parse(*plan));
      } else {
        c.models.emplace_back(key, entry.as_positive_double());
      }
      total += c.models.back().second;
    }
    if (c.models.empty()) m->fail("give at least one model with its probability, e.g. {ResNet-50: 0.5, BERT-large: 0.5}");
    if (std::fabs(total - 1.0) > 1e-9) m->fail("probabilities must sum to 1, they sum to " + std::to_string(total));
    std::sort(c.models.begin(), c.models.end());  // order-independent draws, as for gpus
  }
  if (auto r = node.maybe_child("recorded_status")) {
    r->expect_map({"completed", "killed", "failed"});
    StatusShares s;
    if (auto v = r->maybe_child("completed")) s.completed = v->as_nonnegative_double();
    if (auto v = r->maybe_child("killed")) s.killed = v->as_nonnegative_double();
    if (auto v = r->maybe_child("failed")) s.failed = v->as_nonnegative_double();
    const double sum = s.completed + s.killed + s.failed;
    if (std::fabs(sum - 1.0) > 1e-9) r->fail("shares must sum to 1, they sum to " + std::to_string(sum));
    c.recorded_status = s;
  }
  if (auto e = node.maybe_child("elastic")) {
    e->expect_map({"fraction", "min_scale", "max_scale"});
    Elastic el;
    if (auto v = e->maybe_child("fraction")) {
      el.fraction = v->as_nonnegative_double();
      if (el.fraction > 1) v->fail("must be between 0 and 1");
    }
    if (auto v = e->maybe_child("min_scale")) {
      el.min_scale = v->as_nonnegative_double();
      if (el.min_scale > 1) v->fail("must be between 0 and 1 (elastic jobs never need more than num_gpus to run)");
    }
    if (auto v = e->maybe_child("max_scale")) {
      el.max_scale = v->as_nonnegative_double();
      if (el.max_scale < 1) v->fail("must be at least 1 (elastic jobs may always run on num_gpus)");
    }
    c.elastic = el;
  }
  return c;
}

YAML::Node SyntheticConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  if (!preset.empty()) n["preset"] = preset;
  n["num_jobs"] = num_jobs;
  YAML::Node a(YAML::NodeType::Map);
  a["process"] = arrival_process;
  a[arrival_process == "fixed" ? "interarrival_s" : "mean_interarrival_s"] = mean_interarrival_s;
  if (arrival_process == "bursty") {
    a["burst_factor"] = burst_factor;
    a["mean_calm_s"] = mean_calm_s;
    a["mean_burst_s"] = mean_burst_s;
  }
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
    for (const auto& [name, plan] : plans) {
      YAML::Node e(YAML::NodeType::Map);
      e["share"] = m[name].as<double>();
      e["plan"] = plan.to_yaml();
      m[name] = e;
    }
    n["models"] = m;
  }
  if (recorded_status) {
    YAML::Node r(YAML::NodeType::Map);
    r["completed"] = recorded_status->completed;
    r["killed"] = recorded_status->killed;
    r["failed"] = recorded_status->failed;
    n["recorded_status"] = r;
  }
  if (elastic) {
    YAML::Node e(YAML::NodeType::Map);
    e["fraction"] = elastic->fraction;
    e["min_scale"] = elastic->min_scale;
    e["max_scale"] = elastic->max_scale;
    n["elastic"] = e;
  }
  return n;
}

double SyntheticConfig::long_run_interarrival_s() const {
  if (arrival_process != "bursty") return mean_interarrival_s;
  // Time-average rate over the alternating states: (calm x r + burst x f r) / (calm + burst).
  const double rate = (mean_calm_s + mean_burst_s * burst_factor) / (mean_calm_s + mean_burst_s) / mean_interarrival_s;
  return 1.0 / rate;
}

void SyntheticConfig::set_offered_load(int devices, const ConfigNode& where) {
  const double mean_duration_s = duration_s.mean();
  if (!std::isfinite(mean_duration_s)) where.fail("needs a duration distribution with a finite mean (pareto needs shape > 1)");
  const double target_gap_s = mean_gpus() * mean_duration_s / (*load * devices);
  // The long-run gap is proportional to mean_interarrival_s for every process.
  mean_interarrival_s *= target_gap_s / long_run_interarrival_s();
  if (!(mean_interarrival_s <= 1e12)) where.fail("gives a mean gap of " + std::to_string(mean_interarrival_s) + " s between arrivals, over 10^12 seconds");
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
      process_(config.arrival_process == "fixed"     ? ArrivalProcess::kFixed
               : config.arrival_process == "poisson" ? ArrivalProcess::kPoisson
                                                     : ArrivalProcess::kBursty),
      arrivals_(seed, "synthetic.arrivals"),
      durations_(seed, "synthetic.durations"),
      gpus_(seed, "synthetic.gpus"),
      estimates_(seed, "synthetic.estimates"),
      statuses_(seed, "synthetic.statuses"),
      models_(seed, "synthetic.models"),
      elastic_(seed, "synthetic.elastic"),
      bursts_(seed, "synthetic.bursts"),
      t_s_(config.start_s) {
  if (config.arrival_process == "bursty") state_end_s_ = t_s_ + bursts_.exponential(config.mean_calm_s);
  double cum = 0;
  for (const auto& [count, p] : config.gpus) gpu_cdf_.push_back(cum += p);
  cum = 0;
  for (const auto& [name, p] : config.models) model_cdf_.push_back(cum += p);
}

double SyntheticJobSource::next_arrival_s() {
  if (process_ == ArrivalProcess::kFixed) return t_s_ + config_.mean_interarrival_s;
  if (process_ == ArrivalProcess::kPoisson) return t_s_ + arrivals_.exponential(config_.mean_interarrival_s);
  // Bursty: exponential gaps at the current state's rate. A gap that would cross the end
  // of the state is cut there (memorylessness makes the redraw exact) and the state flips.
  double t = t_s_;
  for (;;) {
    const double mean_gap_s = in_burst_ ? config_.mean_interarrival_s / config_.burst_factor : config_.mean_interarrival_s;
    const double candidate_s = t + arrivals_.exponential(mean_gap_s);
    if (candidate_s < state_end_s_) return candidate_s;
    t = state_end_s_;
    in_burst_ = !in_burst_;
    state_end_s_ = t + bursts_.exponential(in_burst_ ? config_.mean_burst_s : config_.mean_calm_s);
  }
}

bool SyntheticJobSource::next(JobSpec& out) {
  if (generated_ >= config_.num_jobs) return false;
  t_s_ = next_arrival_s();
  // The clock's limit (sim/tick.cpp), checked here so that the message names the key.
  if (!(t_s_ <= 4e12)) {
    char at[32];
    std::snprintf(at, sizeof at, "%.6g", t_s_);
    throw InputError("workload.synthetic", "job " + std::to_string(generated_) + " would arrive at " + at +
                                               " s, past the 4e12 s (about 100,000 years) a simulation can span; lower start_s, num_jobs or the arrival gaps");
  }
  // Formatted in place: no temporary string per job.
  char digits[24];
  out.id.assign(digits, std::to_chars(digits, digits + sizeof digits, generated_).ptr);
  out.submit = Tick::from_seconds(t_s_);
  out.duration_s = config_.duration_s.sample(durations_);
  if (!(out.duration_s <= 4e12)) {
    char d[32];
    std::snprintf(d, sizeof d, "%.6g", out.duration_s);
    throw InputError("workload.synthetic.duration_s", "job " + std::to_string(generated_) + " drew a duration of " + d +
                                                          " s, over the 4e12 s (about 100,000 years) a simulation can span; lower the distribution's parameters");
  }
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
  out.recorded_status = RecordedStatus::kUnknown;
  if (config_.recorded_status) {
    const double u = statuses_.uniform();
    const auto& s = *config_.recorded_status;
    out.recorded_status = u < s.completed ? RecordedStatus::kCompleted : u < s.completed + s.killed ? RecordedStatus::kKilled : RecordedStatus::kFailed;
  }
  out.min_gpus = 0;
  out.max_gpus = 0;
  if (config_.elastic && config_.elastic->fraction > 0 && elastic_.uniform() < config_.elastic->fraction) {
    const auto& e = *config_.elastic;
    out.min_gpus = std::max(1, static_cast<int>(std::floor(out.num_gpus * e.min_scale)));
    out.max_gpus = static_cast<int>(std::ceil(out.num_gpus * e.max_scale));
  }
  ++generated_;
  return true;
}

}  // namespace schedsim
