#include "serving/request_service.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>

#include "serving/serving_metrics.hpp"
#include "base/error.hpp"

namespace schedsim {

double default_model_load_s(const serving::DeploymentSpec& d) {
  const double weight_bytes = d.model.total_params() * d.bytes_per_param;
  return weight_bytes / (static_cast<double>(d.tensor_parallel) * kModelLoadBytesPerSPerDevice);
}

double saturation_capacity_rps(const serving::DeploymentSpec& deployment, const std::vector<serving::Request>& requests) {
  if (requests.empty()) return 0.0;
  double prompt = 0.0, output = 0.0;
  for (const serving::Request& r : requests) {
    prompt += r.prompt_tokens;
    output += r.output_tokens;
  }
  const auto n = static_cast<double>(requests.size());
  std::vector<serving::Request> burst(kSaturationRequests);
  for (int i = 0; i < kSaturationRequests; ++i) {
    burst[static_cast<std::size_t>(i)].id = i;
    burst[static_cast<std::size_t>(i)].arrival_s = 0.0;
    burst[static_cast<std::size_t>(i)].prompt_tokens = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::lround(prompt / n)));
    burst[static_cast<std::size_t>(i)].output_tokens = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::lround(output / n)));
  }
  const std::vector<serving::RequestRecord> done = serving::serve_all(deployment, 1, burst);
  double end_s = 0.0;
  for (const serving::RequestRecord& r : done) end_s = std::max(end_s, r.finish_s);
  if (!(end_s > 0.0)) throw InvariantError("saturation_capacity_rps: the burst finished at t = 0");
  return static_cast<double>(done.size()) / end_s;
}

StepSeries arrival_rate_series(const std::vector<serving::Request>& requests, double step_s, std::int64_t origin_utc_us) {
  const double last_s = requests.empty() ? 0.0 : requests.back().arrival_s;
  const auto steps = static_cast<std::size_t>(std::floor(last_s / step_s)) + 1;
  std::vector<double> counts(steps + 1, 0.0);  // the last step: 0 after the stream
  for (const serving::Request& r : requests) counts[static_cast<std::size_t>(std::floor(r.arrival_s / step_s))] += 1.0;
  std::vector<std::int64_t> times_us;
  const auto step_us = static_cast<std::int64_t>(std::llround(step_s * 1e6));
  for (std::size_t k = 0; k < counts.size(); ++k) {
    times_us.push_back(origin_utc_us + static_cast<std::int64_t>(k) * step_us);
    counts[k] /= step_s;
  }
  // Past the simulated clock's range (about 4e12 s): the rate is defined wherever the run goes.
  const std::int64_t end_us = origin_utc_us + 5'000'000'000'000'000'000LL;
  return StepSeries::finite("request rate", std::move(times_us), std::move(counts), end_us);
}

namespace {

class EngineServer : public RequestServer {
 public:
  EngineServer(const RequestServiceSpec& spec, double start_s, int replicas)
      : spec_(spec), engine_(spec.deployment, replicas), replicas_(replicas) {
    const std::vector<serving::Request>& r = *spec_.requests;
    next_ = static_cast<std::size_t>(std::lower_bound(r.begin(), r.end(), start_s, [](const serving::Request& q, double t) { return q.arrival_s < t; }) -
                                     r.begin());
    first_ = next_;
    if (start_s > 0.0) engine_.advance_to(start_s, records_);
    // The engine's replicas are up from its t = 0: the span's totals start from here.
    before_ = engine_.stats();
  }

  void advance_to(double t_s) override {
    const std::vector<serving::Request>& r = *spec_.requests;
    for (; next_ < r.size() && r[next_].arrival_s <= t_s; ++next_) {
      engine_.advance_to(r[next_].arrival_s, records_);
      engine_.submit(r[next_]);
    }
    engine_.advance_to(t_s, records_);
  }

  void set_replicas(double t_s, int replicas) override {
    if (replicas == replicas_) return;
    engine_.set_replicas(t_s, replicas, spec_.model_load_s);
    replicas_ = replicas;
    ++changes_;
  }
  int replicas() const override { return replicas_; }

  RequestLevelTotals totals(double span_s) const override {
    const serving::ServingSummary s = serving::summarize(records_, spec_.slo, span_s);
    RequestLevelTotals t;
    t.arrived = static_cast<std::int64_t>(next_ - first_);
    t.finished = static_cast<std::int64_t>(records_.size());
    auto latency = [](const serving::LatencySummary& l) { return RequestLatency{l.mean_s, l.p50_s, l.p90_s, l.p99_s, l.max_s}; };
    t.ttft = latency(s.ttft);
    t.tpot = latency(s.tpot);
    t.e2e = latency(s.e2e);
    // summarize() counts finished requests; the unfinished ones missed the SLO.
    t.slo_attainment = t.arrived > 0 ? s.slo_attainment * static_cast<double>(t.finished) / static_cast<double>(t.arrived) : 0.0;
    t.goodput_rps = s.goodput_rps;
    t.output_tokens_per_s = s.output_tokens_per_s;
    const serving::ServingStats& now = engine_.stats();
    t.preemptions = now.preemptions - before_.preemptions;
    t.replica_changes = changes_;
    t.busy_replica_s = now.busy_replica_s - before_.busy_replica_s;
    t.active_replica_s = now.active_replica_s - before_.active_replica_s;
    t.energy_j = now.energy_j - before_.energy_j;
    return t;
  }

  void write_requests_csv(std::ostream& out) const override {
    out << "id,arrival_s,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,prompt_tokens,output_tokens,replica,preemptions\n";
    out << std::setprecision(17);
    for (const serving::RequestRecord& r : records_) {
      out << r.id << ',' << r.arrival_s << ',' << r.first_token_s << ',' << r.finish_s << ',' << r.ttft_s() << ',' << r.tpot_s() << ',' << r.e2e_s() << ','
          << r.prompt_tokens << ',' << r.output_tokens << ',' << r.replica << ',' << r.preemptions << '\n';
    }
  }

 private:
  const RequestServiceSpec& spec_;
  serving::ServingEngine engine_;
  std::vector<serving::RequestRecord> records_;
  serving::ServingStats before_;  // at the span's start
  std::size_t next_ = 0, first_ = 0;
  int replicas_ = 0;
  std::int64_t changes_ = 0;
};

}  // namespace

EngineRequestModel::EngineRequestModel(RequestServiceSpec spec) : spec_(std::move(spec)) {
  if (!spec_.requests) throw InvariantError("EngineRequestModel: no request stream");
}

std::unique_ptr<RequestServer> EngineRequestModel::start(double start_s, int replicas) const {
  return std::make_unique<EngineServer>(spec_, start_s, replicas);
}

}  // namespace schedsim
