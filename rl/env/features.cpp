#include "rl/env/features.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "policies/queue_order.hpp"
#include "base/signals.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim::rl {

namespace {

constexpr double kHour_s = 3600.0;
constexpr double kDay_s = 86400.0;
constexpr double kTwoPi = 6.283185307179586;

// ln(1 + x) for x >= 0, and its odd extension for signed values.
double log1p_signed(double x) { return x >= 0 ? std::log1p(x) : -std::log1p(-x); }

}  // namespace

int candidate_feature_count(const EnvConfig& config) {
  return kCandidateFeatures + (config.cooling_setpoints_c.empty() ? 0 : kCoolingCandidateFeatures);
}
int global_feature_count(const EnvConfig& config) { return kGlobalFeatures + (config.cooling_setpoints_c.empty() ? 0 : kCoolingGlobalFeatures); }

std::vector<std::string> candidate_feature_names(bool cooling) {
  std::vector<std::string> names = {"gpus_frac",       "log_est_work_h", "log_est_gpu_h",  "log_age_h",   "speed_vs_best",    "log_est_runtime_h", "memory_use",
          "priority",        "has_deadline",   "deadline_slack", "log2_nodes",  "cross_rack",       "shares_node",       "log_rank",
          "blocked",         "opt_packed",     "opt_fastest_type", "opt_slowest_type", "opt_first_fit",    "preempt",
          "log_attained_h",  "log_attained_gpu_h", "migrate",       "log_migrate_gain"};
  if (cooling) names.insert(names.end(), {"cooling", "cooling_setpoint"});
  return names;
}

std::vector<std::string> global_feature_names(bool cooling) {
  std::vector<std::string> names = {"free_frac_type0", "free_frac_type1", "free_frac_type2", "free_frac_type3", "free_frac",      "log_queue_len",
          "queued_gpus_frac", "log_queued_gpu_h", "log_running",    "log_running_mean_remaining_h",     "time_of_day_sin",
          "time_of_day_cos", "price_now",        "carbon_now",     "price_forecast", "carbon_forecast"};
  if (cooling) names.insert(names.end(), {"outside_temp", "cooling_setpoint", "pue_excess"});
  return names;
}

namespace {

// The columns of a row that depend only on its job and rank: the rows of one job (its
// placement options) follow each other and share them, so they are computed once.
struct JobTerms {
  JobSlot job = kNoJob;
  int rank = -1;
  double work_s = 0.0;  // estimated seconds of work left at rate 1
  double gpus_frac = 0.0, log_work = 0.0, log_gpu_work = 0.0, log_age = 0.0, log_priority = 0.0, log_rank = 0.0;
  // Attained service, what LAS and Tiresias rank by: known at every information level, so
  // a non-clairvoyant agent can learn a Gittins-like index from it.
  double log_attained = 0.0, log_attained_gpu = 0.0;
};

double log_rank(int rank, int max_candidates) { return std::log1p(static_cast<double>(rank)) / std::log1p(static_cast<double>(max_candidates)); }

void job_terms(const SchedulerView& view, const InformationModel& info, const Candidate& c, int max_candidates, JobTerms& t, FeatureLogCache* cache) {
  const JobView& j = view.job(c.job);
  const JobView& s = j;
  const double now_s = view.now().seconds();
  const double total_devices = view.cluster_state().spec().num_devices();
  t.job = c.job;
  t.rank = c.rank;
  t.work_s = observed_remaining_s(info, view, j);
  t.gpus_frac = s.num_gpus() / total_devices;
  const double work_h = t.work_s / kHour_s, gpu_work_h = s.num_gpus() * t.work_s / kHour_s;
  const double age_h = std::max(0.0, now_s - s.submit().seconds()) / kHour_s;
  const double attained_h = std::max(0.0, attained_work_s(view, j)) / kHour_s;
  const double attained_gpu_h = s.num_gpus() * attained_h;
  // log1p(+-0) is +-0: most jobs have priority 0.
  t.log_priority = s.priority() == 0.0 ? s.priority() : log1p_signed(s.priority());
  if (!cache) {
    t.log_work = std::log1p(work_h);
    t.log_gpu_work = std::log1p(gpu_work_h);
    t.log_age = std::log1p(age_h);
    t.log_rank = log_rank(c.rank, max_candidates);
    t.log_attained = std::log1p(attained_h);
    t.log_attained_gpu = std::log1p(attained_gpu_h);
    return;
  }
  FeatureLogCache::Job& memo = cache->job(c.job);
  t.log_work = memo.work(work_h);
  t.log_gpu_work = memo.gpu_work(gpu_work_h);
  t.log_age = memo.age(age_h);
  t.log_attained = memo.attained(attained_h);
  t.log_attained_gpu = memo.attained_gpu(attained_gpu_h);
  if (cache->log_rank_of != max_candidates) {
    cache->log_rank.clear();
    cache->log_rank_of = max_candidates;
  }
  while (static_cast<int>(cache->log_rank.size()) <= c.rank) cache->log_rank.push_back(log_rank(static_cast<int>(cache->log_rank.size()), max_candidates));
  t.log_rank = cache->log_rank[static_cast<std::size_t>(c.rank)];
}

void write_start_or_preempt_row(const SchedulerView& view, const Candidate& c, const JobTerms& t, float* row, int features,
                                FeatureLogCache* cache) {
  const JobView& s = view.job(c.job);
  const double now_s = view.now().seconds();
  // Run time on this placement (on the best one for a blocked row; the rest of the run at
  // its current rate for a preemption row).
  const double rate = c.legal ? c.rate : c.best_rate;
  const bool start = c.legal && !c.preempt && !c.migrate;
  const double runtime_s = rate > 0 ? t.work_s / rate : t.work_s;
  const bool has_deadline = !std::isnan(s.deadline_s());
  const double values[kCandidateFeatures] = {
      t.gpus_frac,
      t.log_work,
      t.log_gpu_work,
      t.log_age,
      c.legal && c.best_rate > 0 ? c.rate / c.best_rate : 0.0,
      cache ? cache->job(c.job).runtime[start ? static_cast<int>(c.option) : kNumPlacementOptions](runtime_s / kHour_s)
            : std::log1p(runtime_s / kHour_s),
      c.memory_use,
      t.log_priority,
      has_deadline ? 1.0 : 0.0,
      has_deadline ? log1p_signed((s.deadline_s() - now_s - runtime_s) / kHour_s) : 0.0,
      c.legal ? std::log2(static_cast<double>(c.nodes)) : 0.0,
      c.legal && c.racks > 1 ? 1.0 : 0.0,
      c.legal && c.shares_node ? 1.0 : 0.0,
      t.log_rank,
      c.legal ? 0.0 : 1.0,
      start && c.option == PlacementOption::kPacked ? 1.0 : 0.0,
      start && c.option == PlacementOption::kFastestType ? 1.0 : 0.0,
      start && c.option == PlacementOption::kSlowestType ? 1.0 : 0.0,
      start && c.option == PlacementOption::kFirstFit ? 1.0 : 0.0,
      c.preempt ? 1.0 : 0.0,
      t.log_attained,
      t.log_attained_gpu,
      c.migrate ? 1.0 : 0.0,
      c.migrate ? std::log(c.gain) : 0.0,
  };
  for (int i = 0; i < kCandidateFeatures; ++i) row[i] = static_cast<float>(values[i]);
  for (int i = kCandidateFeatures; i < features; ++i) row[i] = 0.0f;
}

void write_cooling_row(const Candidate& c, float* row, int features) {  // only its own columns
  std::fill(row, row + features, 0.0f);
  row[kCandidateFeatures] = 1.0f;
  row[kCandidateFeatures + 1] = static_cast<float>(c.setpoint_c / kTemperatureScale_c);
}

}  // namespace

void write_candidate_features(const SchedulerView& view, const InformationModel& info, const Candidate& c, int max_candidates, float* row, int features) {
  if (c.cooling) return write_cooling_row(c, row, features);
  JobTerms t;
  job_terms(view, info, c, max_candidates, t, nullptr);
  write_start_or_preempt_row(view, c, t, row, features, nullptr);
}

void write_candidate_rows(const SchedulerView& view, const InformationModel& info, const std::vector<Candidate>& candidates, int rows, int max_candidates, float* out,
                          std::uint8_t* mask, int features, FeatureLogCache* cache) {
  std::memset(out, 0, sizeof(float) * static_cast<std::size_t>(max_candidates) * static_cast<std::size_t>(features));
  std::memset(mask, 0, static_cast<std::size_t>(max_candidates));
  JobTerms t;
  for (int i = 0; i < rows; ++i) {
    const Candidate& c = candidates[static_cast<std::size_t>(i)];
    float* row = out + static_cast<std::size_t>(i) * static_cast<std::size_t>(features);
    if (c.cooling) {
      write_cooling_row(c, row, features);
    } else {
      if (c.job != t.job || c.rank != t.rank) job_terms(view, info, c, max_candidates, t, cache);
      write_start_or_preempt_row(view, c, t, row, features, cache);
    }
    mask[i] = c.legal ? 1 : 0;
  }
}

namespace {

// Time-weighted mean of a forecast's step points over [now, now + window).
double forecast_mean(const GridSignals& signals, SignalKind kind, Tick now, std::vector<std::pair<Tick, double>>& points) {
  const Tick end = now + Tick::from_seconds(kForecastWindow_s);
  signals.forecast(kind, now, end - now, points);
  double sum = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Tick a = points[i].first;
    const Tick b = i + 1 < points.size() ? std::min(points[i + 1].first, end) : end;
    if (b > a) sum += points[i].second * (b - a).seconds();
  }
  return sum / kForecastWindow_s;
}

}  // namespace

void write_global_features(const SchedulerView& view, const InformationModel& info, const PendingQueue& queue, float* global, int features, FeatureLogCache* cache) {
  const ClusterState& state = view.cluster_state();
  const ClusterSpec& spec = state.spec();
  double free_by_type[kMaxDeviceTypes] = {0, 0, 0, 0};
  double all_by_type[kMaxDeviceTypes] = {0, 0, 0, 0};
  for (int n = 0; n < spec.num_nodes(); ++n) {
    const NodeSpec& node = spec.node(n);
    // The last slot pools the fourth and every later type, so that any cluster fits the
    // fixed observation (a trained network's input width does not depend on the cluster).
    const int slot = std::min(node.type_index, kMaxDeviceTypes - 1);
    free_by_type[slot] += state.free_on_node(n);
    all_by_type[slot] += node.num_devices;
  }
  double remaining_h = 0.0;
  std::size_t running = 0;
  for (JobSlot r = view.first_running(); r != kNoJob; r = view.next_running(r)) {
    const JobView& j = view.job(r);
    const double rate = j.physics_rate() > 0 ? j.physics_rate() : 1.0;
    remaining_h += observed_remaining_s(info, view, j) / rate / kHour_s;
    ++running;
  }
  const double day_phase = std::fmod(view.now().seconds(), kDay_s) / kDay_s * kTwoPi;
  const double total = spec.num_devices();
  double* v = nullptr;
  double values[kGlobalFeatures] = {};
  v = values;
  for (int t = 0; t < kMaxDeviceTypes; ++t) v[t] = all_by_type[t] > 0 ? free_by_type[t] / all_by_type[t] : 0.0;
  v[4] = state.free_devices() / total;
  const double pending = static_cast<double>(view.num_pending());
  const double queued_gpu_h = std::max(0.0, queue.queued_gpu_s()) / kHour_s;
  const double running_mean_h = running > 0 ? remaining_h / static_cast<double>(running) : 0.0;
  v[5] = cache ? cache->pending(pending) : std::log1p(pending);
  v[6] = static_cast<double>(queue.queued_gpus()) / total;
  v[7] = cache ? cache->queued_gpu_h(queued_gpu_h) : std::log1p(queued_gpu_h);
  v[8] = cache ? cache->running(static_cast<double>(running)) : std::log1p(static_cast<double>(running));
  v[9] = running > 0 ? (cache ? cache->running_mean_h(running_mean_h) : std::log1p(running_mean_h)) : 0.0;
  v[10] = std::sin(day_phase);
  v[11] = std::cos(day_phase);
  // v[12..15]: electricity price and carbon intensity now and their forecast mean over the
  // next kForecastWindow_s, when the scenario has those signals (0 otherwise).
  if (const GridSignals* signals = view.signals()) {
    std::vector<std::pair<Tick, double>> points;
    if (signals->has(SignalKind::kPrice)) {
      v[12] = signals->now(SignalKind::kPrice, view.now()) / kPriceScale_usd_per_mwh;
      v[14] = forecast_mean(*signals, SignalKind::kPrice, view.now(), points) / kPriceScale_usd_per_mwh;
    }
    if (signals->has(SignalKind::kCarbon)) {
      v[13] = signals->now(SignalKind::kCarbon, view.now()) / kCarbonScale_g_per_kwh;
      v[15] = forecast_mean(*signals, SignalKind::kCarbon, view.now(), points) / kCarbonScale_g_per_kwh;
    }
  }
  for (int i = 0; i < kGlobalFeatures; ++i) global[i] = static_cast<float>(v[i]);
  if (features > kGlobalFeatures) {  // the cooling family: means over the datacenters
    double outside = 0.0, setpoint = 0.0, pue = 0.0;
    if (const ThermalModel* thermal = view.thermal()) {
      for (int s = 0; s < thermal->num_sites(); ++s) {
        outside += thermal->outside_c(s);
        setpoint += thermal->setpoint_c(s);
        pue += thermal->pue(s);
      }
      outside /= thermal->num_sites();
      setpoint /= thermal->num_sites();
      pue /= thermal->num_sites();
    }
    global[kGlobalFeatures] = static_cast<float>(outside / kTemperatureScale_c);
    global[kGlobalFeatures + 1] = static_cast<float>(setpoint / kTemperatureScale_c);
    global[kGlobalFeatures + 2] = static_cast<float>(pue > 0 ? pue - 1.0 : 0.0);
  }
}

}  // namespace schedsim::rl
