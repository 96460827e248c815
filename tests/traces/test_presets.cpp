// Synthetic presets calibrated to published cluster statistics.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;

namespace {
SyntheticConfig parse(const std::string& yaml) { return SyntheticConfig::parse(ConfigNode::load_string(yaml, "w.yaml")); }
}  // namespace

TEST_CASE("presets reproduce the published means medians and status shares", "[traces][synthetic][presets]") {
  struct Expect {
    const char* preset;
    double interarrival_s, median_run_s, mean_run_s, mean_gpus;
    int max_gpus;
    double completed, killed, failed;
  };
  // acme/cluster_summary.csv rows Philly, Helios, Seren; spans 137, 183, 184 days.
  const Expect expects[] = {
      {"philly-like", 137 * 86400.0 / 112956, 874, 18006.055, 1.928, 128, 0.604, 0.09, 0.305},
      {"helios-like", 183 * 86400.0 / 1580464, 206, 6651.681, 3.716, 2048, 0.624, 0.221, 0.155},
      {"llm-cluster-like", 184 * 86400.0 / 663813, 122, 1414.335, 5.68, 1024, 0.497, 0.075, 0.429},
  };
  for (const auto& e : expects) {
    INFO(e.preset);
    const SyntheticConfig c = parse(std::string("{preset: ") + e.preset + ", num_jobs: 200000}");
    CHECK(c.num_jobs == 200000);
    CHECK(c.mean_interarrival_s == Approx(e.interarrival_s));
    CHECK(c.duration_s.mean() == Approx(e.mean_run_s));
    CHECK(c.mean_gpus() == Approx(e.mean_gpus).epsilon(1e-6));
    CHECK(c.max_gpus() == e.max_gpus);
    CHECK(c.gpus.front().first == 1);
    CHECK(c.gpus.front().second >= 0.5);  // the published median is 1 GPU
    REQUIRE(c.recorded_status);
    const double sum = e.completed + e.killed + e.failed;
    CHECK(c.recorded_status->completed == Approx(e.completed / sum));
    CHECK(c.recorded_status->failed == Approx(e.failed / sum));

    SyntheticJobSource source(c, 3);
    std::vector<double> durations;
    std::size_t failed = 0;
    JobSpec j;
    double last_s = 0;
    while (source.next(j)) {
      durations.push_back(j.duration_s);
      failed += j.recorded_status == RecordedStatus::kFailed;
      last_s = j.submit.seconds();
    }
    std::sort(durations.begin(), durations.end());
    CHECK(durations[durations.size() / 2] == Approx(e.median_run_s).epsilon(0.03));
    CHECK(static_cast<double>(failed) / 200000 == Approx(e.failed / sum).epsilon(0.02));
    CHECK(last_s / 200000 == Approx(e.interarrival_s).epsilon(0.02));
  }
}

TEST_CASE("keys given next to a preset override it and the resolved form reproduces it", "[traces][synthetic][presets]") {
  const SyntheticConfig c = parse("{preset: philly-like, num_jobs: 50, gpus: {1: 0.5, 8: 0.5}, arrival: {mean_interarrival_s: 30}}");
  CHECK(c.preset == "philly-like");
  CHECK(c.max_gpus() == 8);
  CHECK(c.mean_interarrival_s == 30);
  CHECK(c.duration_s.mean() == Approx(18006.055));  // from the preset
  YAML::Emitter out;
  out << c.to_yaml();
  const SyntheticConfig again = parse(out.c_str());
  SyntheticJobSource a(c, 9), b(again, 9);
  JobSpec x, y;
  int n = 0;
  while (a.next(x)) {
    REQUIRE(b.next(y));
    CHECK(x.submit == y.submit);
    CHECK(x.duration_s == y.duration_s);
    CHECK(x.num_gpus == y.num_gpus);
    CHECK(x.recorded_status == y.recorded_status);
    ++n;
  }
  CHECK(n == 50);
  CHECK_THROWS_WITH(parse("{preset: alibaba-like}"), "w.yaml:1: preset: unknown preset 'alibaba-like'; choose one of: philly-like, helios-like, llm-cluster-like");
  CHECK_THROWS_WITH(parse("{recorded_status: {completed: 0.5, failed: 0.4}}"), "w.yaml:1: recorded_status: shares must sum to 1, they sum to 0.900000");
}
