// Serving metrics (issue 26): latency percentiles per request, SLO attainment, goodput and
// token throughput of a finished run. Definitions: docs/serving.md, "Metrics".
#pragma once

#include <cstdint>
#include <vector>

#include "serving/request.hpp"

namespace schedsim::serving {

// A request meets the SLO when ttft_s() <= ttft_s and tpot_s() <= tpot_s. A limit <= 0 is
// not checked (the default checks nothing).
struct ServingSlo {
  double ttft_s = 0;
  double tpot_s = 0;
};

// Percentiles by linear interpolation between order statistics (numpy's default), the
// rule of sim/metrics.hpp's percentile_sorted. All zero over no values.
struct LatencySummary {
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

struct ServingSummary {
  std::int64_t requests = 0;
  double duration_s = 0;
  LatencySummary ttft, tpot, e2e;  // tpot over requests with at least 2 output tokens
  double slo_attainment = 0;       // share of requests meeting both ttft and tpot SLOs
  double goodput_rps = 0;          // requests/s meeting both
  double output_tokens_per_s = 0;
  std::int64_t preemptions = 0;
};

LatencySummary summarize_latencies(std::vector<double> values_s);
bool meets_slo(const RequestRecord& record, const ServingSlo& slo);

// `duration_s` divides the counts into rates (the serve command passes the time of the
// last completion); <= 0 gives rates of 0. Means are exact sums (sim/exact_sum.hpp), so the
// numbers do not depend on the records' order.
ServingSummary summarize(const std::vector<RequestRecord>& records, const ServingSlo& slo, double duration_s);

}  // namespace schedsim::serving
