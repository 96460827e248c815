#include "serving/serving_metrics.hpp"

#include <algorithm>

#include "base/exact_sum.hpp"
#include "sim/metrics.hpp"

namespace schedsim::serving {

LatencySummary summarize_latencies(std::vector<double> values_s) {
  LatencySummary s;
  if (values_s.empty()) return s;
  std::sort(values_s.begin(), values_s.end());
  ExactSum sum;
  for (double v : values_s) sum.add(v);
  s.mean_s = sum.value() / static_cast<double>(values_s.size());
  s.p50_s = percentile_sorted(values_s, 50);
  s.p90_s = percentile_sorted(values_s, 90);
  s.p99_s = percentile_sorted(values_s, 99);
  s.max_s = values_s.back();
  return s;
}

bool meets_slo(const RequestRecord& record, const ServingSlo& slo) {
  if (slo.ttft_s > 0 && !(record.ttft_s() <= slo.ttft_s)) return false;
  if (slo.tpot_s > 0 && !(record.tpot_s() <= slo.tpot_s)) return false;
  return true;
}

ServingSummary summarize(const std::vector<RequestRecord>& records, const ServingSlo& slo, double duration_s) {
  ServingSummary s;
  s.requests = static_cast<std::int64_t>(records.size());
  s.duration_s = duration_s;
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(records.size());
  e2e.reserve(records.size());
  std::int64_t good = 0, output_tokens = 0;
  for (const auto& r : records) {
    ttft.push_back(r.ttft_s());
    e2e.push_back(r.e2e_s());
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s());
    if (meets_slo(r, slo)) ++good;
    output_tokens += r.output_tokens;
    s.preemptions += r.preemptions;
  }
  s.ttft = summarize_latencies(std::move(ttft));
  s.tpot = summarize_latencies(std::move(tpot));
  s.e2e = summarize_latencies(std::move(e2e));
  if (!records.empty()) s.slo_attainment = static_cast<double>(good) / static_cast<double>(records.size());
  if (duration_s > 0) {
    s.goodput_rps = static_cast<double>(good) / duration_s;
    s.output_tokens_per_s = static_cast<double>(output_tokens) / duration_s;
  }
  return s;
}

}  // namespace schedsim::serving
