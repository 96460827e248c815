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
  node.expect_map({"jobs", "split", "use", "load_scale", "offered_load", "time_shift_s", "episode_jobs", "start_jobs", "more_traces"});
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
  if (auto l = node.maybe_child("offered_load")) {
    if (node.has("load_scale")) l->fail("and load_scale both set the arrival rate; keep one (offered_load scales each run to a load, load_scale by a factor)");
    if (l->is_sequence()) {
      if (l->size() != 2) l->fail("must be a number or a range [min, max], got a list of " + std::to_string(l->size()));
      c.offered_load_min = l->at(0).as_positive_double();
      c.offered_load_max = l->at(1).as_positive_double();
      if (c.offered_load_min > c.offered_load_max) l->fail("the range [min, max] needs min <= max");
    } else {
      c.offered_load_min = c.offered_load_max = l->as_positive_double();
    }
  }
  if (auto t = node.maybe_child("time_shift_s")) c.time_shift_max_s = t->as_nonnegative_double();
  // A number or a [min, max] range of job counts; `positive` refuses 0.
  auto job_range = [](const ConfigNode& n, bool positive, std::int64_t& lo, std::int64_t& hi) {
    auto one = [positive](const ConfigNode& v) {
      const std::int64_t x = v.as_int();
      if (positive ? x < 1 : x < 0) v.fail(std::string("must be a number of jobs ") + (positive ? ">= 1" : ">= 0") + ", got " + std::to_string(x));
      return x;
    };
    if (n.is_sequence()) {
      if (n.size() != 2) n.fail("must be a number or a range [min, max], got a list of " + std::to_string(n.size()));
      lo = one(n.at(0));
      hi = one(n.at(1));
      if (lo > hi) n.fail("the range [min, max] needs min <= max");
    } else {
      lo = hi = one(n);
    }
  };
  c.episode_jobs_min = c.episode_jobs_max = c.jobs;
  if (auto e = node.maybe_child("episode_jobs")) {
    job_range(*e, true, c.episode_jobs_min, c.episode_jobs_max);
    if (c.episode_jobs_max > c.jobs) e->fail("must be at most jobs (" + std::to_string(c.jobs) + "): a run replays part of one window, got " + std::to_string(c.episode_jobs_max));
  }
  if (auto s = node.maybe_child("start_jobs")) {
    job_range(*s, false, c.start_jobs_min, c.start_jobs_max);
    if (c.start_jobs_max + c.episode_jobs_max > c.jobs) {
      s->fail("start_jobs max (" + std::to_string(c.start_jobs_max) + ") + episode_jobs max (" + std::to_string(c.episode_jobs_max) + ") must be at most jobs (" +
              std::to_string(c.jobs) + "), so that a run stays inside its window");
    }
  }
  if (auto m = node.maybe_child("more_traces")) {
    if (!m->is_sequence() || m->size() == 0) m->fail("must be a non-empty list of trace files, e.g. [../shared/data/itp/cluster05.csv]");
    for (std::size_t i = 0; i < m->size(); ++i) {
      c.more_traces.push_back(m->at(i).as_string());
      c.more_traces_resolved.push_back(m->at(i).as_path());
    }
  }
  return c;
}

YAML::Node TraceWindowConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["jobs"] = jobs;
  n["split"]["train"] = train_fraction;
  n["split"]["validation"] = validation_fraction;
  n["use"] = to_string(use);
  // A number, or [min, max] when the range is not one value (as the key accepts both).
  auto number_or_range = [](double lo, double hi) {
    if (lo == hi) return YAML::Node(lo);
    YAML::Node r(YAML::NodeType::Sequence);
    r.SetStyle(YAML::EmitterStyle::Flow);
    r.push_back(lo);
    r.push_back(hi);
    return r;
  };
  n["load_scale"] = number_or_range(load_scale_min, load_scale_max);
  // Written only when set: older resolved configs stay byte-identical.
  if (offered_load_max > 0) n["offered_load"] = number_or_range(offered_load_min, offered_load_max);
  n["time_shift_s"] = time_shift_max_s;
  // Written only when set, so that resolved configs of older scenarios stay byte-identical.
  auto range = [](std::int64_t lo, std::int64_t hi) {
    if (lo == hi) return YAML::Node(lo);
    YAML::Node r(YAML::NodeType::Sequence);
    r.SetStyle(YAML::EmitterStyle::Flow);
    r.push_back(lo);
    r.push_back(hi);
    return r;
  };
  if (episode_jobs_max > 0 && (episode_jobs_min != jobs || episode_jobs_max != jobs)) n["episode_jobs"] = range(episode_jobs_min, episode_jobs_max);
  if (start_jobs_max > 0) n["start_jobs"] = range(start_jobs_min, start_jobs_max);
  if (!more_traces.empty()) {
    YAML::Node m(YAML::NodeType::Sequence);
    for (const auto& p : more_traces) m.push_back(p);
    n["more_traces"] = m;
  }
  return n;
}

TraceWindows::TraceWindows(std::vector<JobSpec> jobs, const TraceWindowConfig& config, std::string where, std::vector<std::string> warnings)
    : config_(config), where_(std::move(where)), warnings_(std::move(warnings)) {
  const std::size_t total_jobs = jobs.size();
  jobs_.push_back(std::move(jobs));
  files_.emplace_back();
  build(total_jobs);
}

TraceWindows::TraceWindows(std::vector<std::vector<JobSpec>> jobs_by_file, std::vector<std::string> files, const TraceWindowConfig& config, std::string where,
                           std::vector<std::string> warnings)
    : jobs_(std::move(jobs_by_file)), files_(std::move(files)), config_(config), where_(std::move(where)), warnings_(std::move(warnings)) {
  files_.resize(jobs_.size());
  std::size_t total_jobs = 0;
  for (const auto& j : jobs_) total_jobs += j.size();
  build(total_jobs);
}

std::size_t TraceWindows::total_jobs() const {
  std::size_t n = 0;
  for (const auto& j : jobs_) n += j.size();
  return n;
}

void TraceWindows::build(std::size_t total_jobs) {
  // Each file on its own: rounded down for train and validation, so a split never takes
  // a window from a later one; the test split gets the rest.
  std::vector<Window> by_split[3];
  int total = 0;
  for (std::size_t f = 0; f < jobs_.size(); ++f) {
    const auto n = static_cast<int>(static_cast<std::int64_t>(jobs_[f].size()) / config_.jobs);
    const int tr = static_cast<int>(std::floor(config_.train_fraction * n + 1e-9));
    const int va = static_cast<int>(std::floor(config_.validation_fraction * n + 1e-9));
    for (int k = 0; k < n; ++k) {
      const int split = k < tr ? 0 : k < tr + va ? 1 : 2;
      by_split[split].push_back(Window{f, static_cast<std::size_t>(k) * static_cast<std::size_t>(config_.jobs)});
    }
    total += n;
  }
  train_ = static_cast<int>(by_split[0].size());
  validation_ = static_cast<int>(by_split[1].size());
  test_ = static_cast<int>(by_split[2].size());
  for (auto& s : by_split) windows_.insert(windows_.end(), s.begin(), s.end());
  const bool test_wanted = config_.train_fraction + config_.validation_fraction < 1.0 - 1e-12;
  auto check = [&](int n, double share, const char* name) {
    if (share > 0 && n == 0) {
      std::ostringstream m;
      m << "the " << name << " split (share " << share << ") gets no whole window: ";
      if (jobs_.size() == 1) m << "the trace has " << total_jobs << " jobs, ";
      else m << "the " << jobs_.size() << " traces have " << total_jobs << " jobs, ";
      m << total << " windows of " << config_.jobs << " jobs (train " << train_ << ", validation " << validation_ << ", test " << test_
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

double TraceWindows::offered_load_scale(const std::vector<JobSpec>& jobs, std::uint64_t seed) const {
  if (config_.cluster_devices <= 0) throw InputError(where_, "offered_load needs the cluster's device count (set by the scenario)");
  Rng draw(seed, "trace.windows.offered_load");
  const double target = config_.offered_load_min + (config_.offered_load_max - config_.offered_load_min) * draw.uniform();
  double gpu_s = 0.0;
  for (const JobSpec& j : jobs) {
    if (j.num_gpus <= config_.cluster_devices) gpu_s += static_cast<double>(j.device_milli()) / 1000.0 * j.duration_s;
  }
  const double span_s = (jobs.back().submit - jobs.front().submit).seconds();
  // A part that arrives at one instant (or demands nothing) has no rate to scale.
  if (!(span_s > 0) || !(gpu_s > 0)) return 1.0;
  // load = gpu_s / (devices x span / scale)  =>  scale = load x devices x span / gpu_s.
  return target * static_cast<double>(config_.cluster_devices) * span_s / gpu_s;
}

std::vector<JobSpec> TraceWindows::jobs_of(int window, std::uint64_t seed) const {
  const Window& w = windows_[static_cast<std::size_t>(window)];
  const std::vector<JobSpec>& file = jobs_[w.file];
  // The part of the window this run replays; drawn only when a range is set, so that
  // scenarios without these keys draw exactly what they drew before.
  std::int64_t length = config_.episode_jobs_max > 0 ? config_.episode_jobs_max : config_.jobs;
  if (config_.episode_jobs_min > 0 && config_.episode_jobs_min < length) {
    Rng r(seed, "trace.windows.episode_jobs");
    length = config_.episode_jobs_min + static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(length - config_.episode_jobs_min + 1)));
  }
  std::int64_t start = config_.start_jobs_min;
  if (config_.start_jobs_max > config_.start_jobs_min) {
    Rng r(seed, "trace.windows.start_jobs");
    start += static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(config_.start_jobs_max - config_.start_jobs_min + 1)));
  }
  const auto begin = w.begin + static_cast<std::size_t>(start);
  std::vector<JobSpec> out(file.begin() + static_cast<std::ptrdiff_t>(begin), file.begin() + static_cast<std::ptrdiff_t>(begin + static_cast<std::size_t>(length)));
  Rng load(seed, "trace.windows.load_scale");
  double scale = config_.load_scale_min + (config_.load_scale_max - config_.load_scale_min) * load.uniform();
  if (config_.offered_load_max > 0) scale = offered_load_scale(out, seed);
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
