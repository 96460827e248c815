#include "traces/trace_windows.hpp"

#include <cmath>
#include <sstream>

#include "base/error.hpp"
#include "base/rng.hpp"

namespace schedsim {

const char* to_string(WindowSplit s) {
  switch (s) {
    case WindowSplit::kTrain: return "train";
    case WindowSplit::kValidation: return "validation";
    case WindowSplit::kTest: return "test";
  }
  return "?";
}

TraceWindowConfig TraceWindowConfig::parse(const ConfigNode& node) {
  node.expect_map({"jobs", "split", "use", "load_scale", "time_shift_s"});
  TraceWindowConfig c;
  if (!node.has("jobs")) node.fail("needs 'jobs': the number of jobs per window (e.g. jobs: 300)");
  c.jobs = node.child("jobs").as_positive_int();
  if (auto s = node.maybe_child("split")) {
    s->expect_map({"train", "validation"});
    auto share = [](const ConfigNode& n) {
      const double v = n.as_nonnegative_double();
      if (v > 1.0) n.fail("must be a share of the windows in [0, 1], got " + n.as_string());
      return v;
    };
    if (auto t = s->maybe_child("train")) c.train_fraction = share(*t);
    if (auto v = s->maybe_child("validation")) c.validation_fraction = share(*v);
    if (c.train_fraction + c.validation_fraction > 1.0 + 1e-12) {
      s->fail("train + validation must be at most 1 (the rest of the windows test), got " + std::to_string(c.train_fraction) + " + " +
              std::to_string(c.validation_fraction));
    }
  }
  if (auto u = node.maybe_child("use")) {
    const std::string v = u->as_choice({"train", "validation", "test"});
    c.use = v == "train" ? WindowSplit::kTrain : v == "validation" ? WindowSplit::kValidation : WindowSplit::kTest;
  }
  if (auto l = node.maybe_child("load_scale")) {
    if (l->is_sequence()) {
      if (l->size() != 2) l->fail("must be a number or a range [min, max], got a list of " + std::to_string(l->size()));
      c.load_scale_min = l->at(0).as_positive_double();
      c.load_scale_max = l->at(1).as_positive_double();
      if (c.load_scale_min > c.load_scale_max) l->fail("the range [min, max] needs min <= max");
    } else {
      c.load_scale_min = c.load_scale_max = l->as_positive_double();
    }
  }
  if (auto t = node.maybe_child("time_shift_s")) c.time_shift_max_s = t->as_nonnegative_double();
  return c;
}

YAML::Node TraceWindowConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["jobs"] = jobs;
  n["split"]["train"] = train_fraction;
  n["split"]["validation"] = validation_fraction;
  n["use"] = to_string(use);
  if (load_scale_min == load_scale_max) {
    n["load_scale"] = load_scale_min;
  } else {
    YAML::Node r(YAML::NodeType::Sequence);
    r.SetStyle(YAML::EmitterStyle::Flow);
    r.push_back(load_scale_min);
    r.push_back(load_scale_max);
    n["load_scale"] = r;
  }
  n["time_shift_s"] = time_shift_max_s;
  return n;
}

TraceWindows::TraceWindows(std::vector<JobSpec> jobs, const TraceWindowConfig& config, std::string where, std::vector<std::string> warnings)
    : jobs_(std::move(jobs)), config_(config), where_(std::move(where)), warnings_(std::move(warnings)) {
  const auto total = static_cast<int>(static_cast<std::int64_t>(jobs_.size()) / config_.jobs);
  // Rounded down for train and validation, so a split never takes a window from a later
  // one; the test split gets the rest.
  train_ = static_cast<int>(std::floor(config_.train_fraction * total + 1e-9));
  validation_ = static_cast<int>(std::floor(config_.validation_fraction * total + 1e-9));
  test_ = total - train_ - validation_;
  const bool test_wanted = config_.train_fraction + config_.validation_fraction < 1.0 - 1e-12;
  auto check = [&](int n, double share, const char* name) {
    if (share > 0 && n == 0) {
      std::ostringstream m;
      m << "the " << name << " split (share " << share << ") gets no whole window: the trace has " << jobs_.size() << " jobs, "
        << total << " windows of " << config_.jobs << " jobs (train " << train_ << ", validation " << validation_ << ", test " << test_
        << "); use fewer jobs per window or a larger share";
      throw InputError(where_, m.str());
    }
  };
  check(train_, config_.train_fraction, "train");
  check(validation_, config_.validation_fraction, "validation");
  check(test_, test_wanted ? 1.0 - config_.train_fraction - config_.validation_fraction : 0.0, "test");
}

int TraceWindows::num_windows(WindowSplit split) const {
  return split == WindowSplit::kTrain ? train_ : split == WindowSplit::kValidation ? validation_ : test_;
}

int TraceWindows::window_for(WindowSplit split, std::uint64_t seed) const {
  const int n = num_windows(split);
  if (n == 0) throw InputError(where_, std::string("the ") + to_string(split) + " split has no windows (its share is 0); set split." + to_string(split) + " above 0 or draw from another split");
  const int first = split == WindowSplit::kTrain ? 0 : split == WindowSplit::kValidation ? train_ : train_ + validation_;
  Rng rng(seed, "trace.windows.pick");
  return first + static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
}

std::vector<JobSpec> TraceWindows::jobs_of(int window, std::uint64_t seed) const {
  const auto begin = static_cast<std::size_t>(window) * static_cast<std::size_t>(config_.jobs);
  std::vector<JobSpec> out(jobs_.begin() + static_cast<std::ptrdiff_t>(begin), jobs_.begin() + static_cast<std::ptrdiff_t>(begin + static_cast<std::size_t>(config_.jobs)));
  Rng load(seed, "trace.windows.load_scale");
  const double scale = config_.load_scale_min + (config_.load_scale_max - config_.load_scale_min) * load.uniform();
  Rng shift(seed, "trace.windows.time_shift");
  const double shift_s = config_.time_shift_max_s * shift.uniform();
  const std::int64_t origin_us = out.front().submit.us();
  const auto shift_us = static_cast<std::int64_t>(std::llround(shift_s * 1e6));
  for (JobSpec& j : out) {
    // The deadline keeps its distance to the submit time.
    const double rel_deadline_s = std::isnan(j.deadline_s) ? j.deadline_s : j.deadline_s - j.submit.seconds();
    const auto rebased_us = static_cast<std::int64_t>(std::llround(static_cast<double>(j.submit.us() - origin_us) / scale));
    j.submit = Tick::from_us(rebased_us + shift_us);
    if (!std::isnan(rel_deadline_s)) j.deadline_s = j.submit.seconds() + rel_deadline_s;
  }
  return out;
}

bool WindowJobSource::next(JobSpec& out) {
  if (next_ >= jobs_.size()) return false;
  out = jobs_[next_++];
  return true;
}

}  // namespace schedsim
