#include "policies/gittins.hpp"

#include <algorithm>

#include "policies/queue_policy.hpp"
#include "base/rng.hpp"
#include "traces/distribution.hpp"

namespace schedsim {
namespace {

struct GittinsOptions {
  // Service distribution in GPU-seconds (GPUs x run time of a whole job).
  Distribution durations = Distribution::lognormal(3600.0, 2.0);
  std::int64_t samples = 1000;  // size of the sorted table drawn from it
};

class GittinsOrder : public QueueOrder {
 public:
  explicit GittinsOrder(GittinsOptions options) : options_(std::move(options)) {
    Rng rng(0, "policy.gittins");
    table_.reserve(static_cast<std::size_t>(options_.samples));
    for (std::int64_t i = 0; i < options_.samples; ++i) table_.push_back(options_.durations.sample(rng));
    std::sort(table_.begin(), table_.end());
    prefix_.assign(table_.size() + 1, 0.0);
    for (std::size_t i = 0; i < table_.size(); ++i) prefix_[i + 1] = prefix_[i] + table_[i];
  }

  // Higher index first: the key is the negated index.
  double queued_key(const SchedulerView& view, JobSlot job) override { return -index(attained_service_gpu_s(view, view.job(job))); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return -index(attained_service_gpu_s(view, view.job(job))); }
  void write(YAML::Node& resolved) const override {
    resolved["durations"] = options_.durations.to_yaml();
    resolved["samples"] = options_.samples;
  }

  // Gittins index at attained service a over the sorted table s_0 <= ... <= s_{n-1}:
  // max over D of P(S - a <= D | S > a) / E[min(S - a, D) | S > a]. For an empirical
  // distribution the maximum is at a jump, D = s_j - a, where with i0 the first sample
  // above a, c = j - i0 + 1 and m = n - i0 the ratio is
  //   c / (sum_{k=i0..j} (s_k - a) + (n - 1 - j) (s_j - a))   (the common 1/m cancels).
  // O(n) in the table size, independent of the queue. A job that outlived every sample
  // has index 0 (served last).
  double index(double a) const {
    const std::size_t n = table_.size();
    const std::size_t i0 = static_cast<std::size_t>(std::upper_bound(table_.begin(), table_.end(), a) - table_.begin());
    double best = 0.0;
    for (std::size_t j = i0; j < n; ++j) {
      if (j + 1 < n && table_[j + 1] == table_[j]) continue;  // the jump is at the last tie
      const double c = static_cast<double>(j - i0 + 1);
      const double expected = (prefix_[j + 1] - prefix_[i0]) - c * a + static_cast<double>(n - 1 - j) * (table_[j] - a);
      if (expected > 0) best = std::max(best, c / expected);
    }
    return best;
  }

 private:
  GittinsOptions options_;
  std::vector<double> table_;
  std::vector<double> prefix_;  // prefix_[i] = sum of the i smallest samples
};

}  // namespace

OrderKind gittins_order() {
  return OrderKind{
      "gittins",
      {{"durations", "{dist: lognormal, median: 3600, sigma: 2}", "service distribution in GPU-seconds (a Distribution map, as in workload durations)"},
       {"samples", "1000", "size of the sorted table sampled from durations at construction (the index costs O(samples))"}},
      true,
      [](const ConfigNode& config) {
        GittinsOptions o;
        if (auto v = config.maybe_child("durations")) o.durations = Distribution::parse(*v);
        if (auto v = config.maybe_child("samples")) o.samples = v->as_positive_int();
        return std::make_unique<GittinsOrder>(std::move(o));
      },
  };
}

PolicyInfo gittins_policy_info() {
  return queue_policy_info("gittins", "highest Gittins index of attained service (GPUs x executed time) under a configured service distribution first, as in Tiresias; preemptive",
                           gittins_order());
}

}  // namespace schedsim
