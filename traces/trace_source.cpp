#include "traces/trace_source.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace schedsim {

TraceJobSource::TraceJobSource(std::string path, std::string format, std::vector<std::string>& warnings)
    : TraceJobSource(std::move(path), std::move(format), TraceOptions{}, warnings) {}

TraceJobSource::TraceJobSource(std::string path, std::string format, const TraceOptions& options, std::vector<std::string>& warnings)
    : path_(std::move(path)), format_(std::move(format)), options_(options) {
  JobSpec job;
  bool sorted = true;
  Tick previous;
  std::int64_t first_unsorted_line = 0;
  {
    auto reader = open_trace_reader(path_, format_, options_);
    while (reader->next(job)) {
      if (num_jobs_ > 0 && job.submit < previous && sorted) {
        sorted = false;
        first_unsorted_line = job.source_line;
      }
      previous = job.submit;
      has_estimates_ = has_estimates_ || job.has_estimate();
      ++num_jobs_;
    }
    skipped_ = reader->skipped();
  }
  if (num_jobs_ == 0) {
    if (skipped_.empty()) throw InputError(path_, "the trace has a header but no jobs");
    std::string why;
    for (const auto& [reason, n] : skipped_) why += (why.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    throw InputError(path_, "every row of the trace was skipped (" + why + "); no jobs are left to simulate");
  }
  if (sorted) {
    stream_ = open_trace_reader(path_, format_, options_);
    return;
  }
  warnings.push_back(path_ + ":" + std::to_string(first_unsorted_line) +
                     ": submit times are not in order; the trace was sorted by submit time (ties keep file order)");
  auto reader = open_trace_reader(path_, format_, options_);
  sorted_.reserve(num_jobs_);
  while (reader->next(job)) sorted_.push_back(job);
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
}

bool TraceJobSource::next(JobSpec& out) {
  if (stream_) return stream_->next(out);
  if (sorted_next_ >= sorted_.size()) return false;
  out = std::move(sorted_[sorted_next_++]);
  return true;
}

}  // namespace schedsim
