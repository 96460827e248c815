#include "traces/trace_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>

#include "base/error.hpp"
#include "traces/line_reader.hpp"
#include "traces/trace_models.hpp"

namespace schedsim {
namespace {

// The spill format of sorted runs: each JobSpec field in binary, as this process wrote
// it (the files never outlive the source).
void put_bytes(std::ostream& out, const void* p, std::size_t n) { out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); }
template <class T>
void put(std::ostream& out, const T& v) {
  put_bytes(out, &v, sizeof v);
}
void put_string(std::ostream& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  put_bytes(out, s.data(), s.size());
}
template <class T>
bool get(std::istream& in, T& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}
bool get_string(std::istream& in, std::string& s) {
  std::uint64_t n = 0;
  if (!get(in, n)) return false;
  s.resize(n);
  return n == 0 || static_cast<bool>(in.read(&s[0], static_cast<std::streamsize>(n)));
}

void write_job(std::ostream& out, const JobSpec& j) {
  put_string(out, j.id);
  put(out, j.submit.us());
  put(out, j.num_gpus);
  put(out, j.duration_s);
  put(out, j.estimate_s);
  put(out, j.source_line);
  put_string(out, j.user);
  put_string(out, j.group);
  put_string(out, j.model);
  put_string(out, j.gpu_type);
  put(out, j.gpu_milli);
  put(out, j.iterations);
  put(out, j.deadline_s);
  put(out, j.priority);
  put(out, j.recorded_status);
  put(out, j.min_gpus);
  put(out, j.max_gpus);
}

bool read_job(std::istream& in, JobSpec& j) {
  std::int64_t us = 0;
  if (!get_string(in, j.id)) return false;
  const bool ok = get(in, us) && get(in, j.num_gpus) && get(in, j.duration_s) && get(in, j.estimate_s) && get(in, j.source_line) &&
                  get_string(in, j.user) && get_string(in, j.group) && get_string(in, j.model) && get_string(in, j.gpu_type) &&
                  get(in, j.gpu_milli) && get(in, j.iterations) && get(in, j.deadline_s) && get(in, j.priority) && get(in, j.recorded_status) &&
                  get(in, j.min_gpus) && get(in, j.max_gpus);
  if (!ok) throw InputError("sorting the trace", "a temporary run file was cut short (disk full?)");
  j.submit = Tick::from_us(us);
  return true;
}

}  // namespace

// A sorted run: a temporary file opened for writing and reading, and unlinked at once,
// so that it disappears with the process however the process ends.
struct TraceJobSource::Run {
  std::string path;  // for messages; no longer in the folder once opened
  std::fstream io;
  JobSpec next;  // the run's smallest unread job, valid while the run is in heads_
};

TraceJobSource::~TraceJobSource() = default;

void TraceJobSource::external_sort(std::vector<std::string>& warnings) {
  static std::atomic<unsigned> counter{0};
  const std::size_t limit = std::max<std::size_t>(options_.sort_memory_jobs, 1);
  const std::string stem = (std::filesystem::path(temp_folder()) /
                            ("schedsim-sort-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-"))
                               .string();
  auto reader = open_reader();
  std::vector<JobSpec> chunk;
  chunk.reserve(limit);
  JobSpec job;
  bool more = true;
  while (more) {
    chunk.clear();
    while (chunk.size() < limit && (more = reader->next(job))) chunk.push_back(job);
    if (chunk.empty()) break;
    std::stable_sort(chunk.begin(), chunk.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
    auto run = std::make_unique<Run>();
    run->path = stem + std::to_string(runs_.size());
    run->io.open(run->path, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc);
    if (!run->io) throw InputError(run->path, "cannot write a temporary file to sort the trace (set TMPDIR to a writable folder)");
    std::error_code ec;
    std::filesystem::remove(run->path, ec);  // the open stream keeps the data
    for (const auto& j : chunk) write_job(run->io, j);
    if (!run->io.flush()) throw InputError(run->path, "write failed while sorting the trace (disk full?)");
    runs_.push_back(std::move(run));
  }
  chunk = std::vector<JobSpec>();
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    runs_[r]->io.seekg(0);
    if (read_job(runs_[r]->io, runs_[r]->next)) heads_.push_back({runs_[r]->next.submit, r});
  }
  std::make_heap(heads_.begin(), heads_.end(), std::greater<Head>());
  warnings.push_back(path_ + ": the trace has " + std::to_string(num_jobs_) + " jobs, more than the " + std::to_string(limit) +
                     " sorted in memory; it was sorted in " + std::to_string(runs_.size()) + " runs through temporary files in " +
                     temp_folder());
}

TraceJobSource::TraceJobSource(std::string path, std::string format, std::vector<std::string>& warnings)
    : TraceJobSource(std::move(path), std::move(format), TraceOptions{}, warnings) {}

TraceJobSource::TraceJobSource(std::string path, std::string format, const TraceOptions& options, std::vector<std::string>& warnings)
    : path_(std::move(path)), format_(std::move(format)), options_(options) {
  spool_ = std::make_unique<InputSpool>(path_, options_.poll_interrupt);
  // Read again each time a reader opens: a pipe would block (or be empty) the second time.
  for (auto [file, kind] : {std::pair{&options_.job_table_path, "job table"}, std::pair{&options_.throughputs_path, "throughput matrix"}}) {
    if (file->empty()) continue;
    side_spools_.push_back(std::make_unique<InputSpool>(*file, options_.poll_interrupt, kind));
    *file = side_spools_.back()->path();
  }
  if (spooled() && options_.poll_interrupt) {
    // The interruption message names the files given, not their copies.
    options_.poll_interrupt = [this, poll = options_.poll_interrupt](const std::string& p) { poll(renamed(p)); };
  }
  try {
    if (format_ == "auto") format_ = detect_trace_format(spool_->path());
    read_trace(warnings);
  } catch (const DamagedFileError& e) {
    throw DamagedFileError(renamed(e.what()));
  } catch (const InputError& e) {
    if (!spooled()) throw;
    throw InputError(renamed(e.what()));
  }
}

bool TraceJobSource::spooled() const {
  if (spool_->spooled()) return true;
  for (const auto& s : side_spools_) {
    if (s->spooled()) return true;
  }
  return false;
}

std::string TraceJobSource::renamed(std::string message) const {
  message = spool_->renamed(std::move(message));
  for (const auto& s : side_spools_) message = s->renamed(std::move(message));
  return message;
}

std::unique_ptr<TraceReader> TraceJobSource::open_reader() const {
  auto reader = open_trace_reader(spool_->path(), format_, options_);
  return reader;
}

void TraceJobSource::read_trace(std::vector<std::string>& warnings) {
  JobSpec job;
  bool sorted = true;
  Tick previous;
  std::int64_t first_unsorted_line = 0;
  {
    auto reader = open_reader();
    TraceModels::Tally models;
    while (reader->next(job)) {
      // Unknown model names stop the run here, before it starts; the assignment itself is
      // applied again as jobs are pulled (next()).
      if (options_.models) models.add(options_.models->apply(job, options_.model_seed, path_));
      if (num_jobs_ > 0 && job.submit < previous && sorted) {
        sorted = false;
        first_unsorted_line = job.source_line;
      }
      previous = job.submit;
      has_estimates_ = has_estimates_ || job.has_estimate();
      ++num_jobs_;
    }
    skipped_ = reader->skipped();
    if (options_.models) {
      if (auto w = options_.models->warning(models, path_)) warnings.push_back(*w);
    }
  }
  if (num_jobs_ == 0) {
    if (skipped_.empty()) throw InputError(path_, "the trace has a header but no jobs");
    std::string why;
    for (const auto& [reason, n] : skipped_) why += (why.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    throw InputError(path_, "every row of the trace was skipped (" + why + "); no jobs are left to simulate");
  }
  if (sorted) {
    stream_ = open_reader();
    return;
  }
  warnings.push_back(path_ + ":" + std::to_string(first_unsorted_line) +
                     ": submit times are not in order; the trace was sorted by submit time (ties keep file order)");
  if (num_jobs_ > options_.sort_memory_jobs) {
    external_sort(warnings);
    return;
  }
  auto reader = open_reader();
  sorted_.reserve(num_jobs_);
  while (reader->next(job)) sorted_.push_back(job);
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
}

bool TraceJobSource::next(JobSpec& out) {
  if (!next_as_read(out)) return false;
  if (options_.models) options_.models->apply(out, options_.model_seed, path_);
  return true;
}

bool TraceJobSource::next_as_read(JobSpec& out) {
  if (stream_) {
    try {
      return stream_->next(out);
    } catch (const DamagedFileError& e) {
      if (!spooled()) throw;
      throw DamagedFileError(renamed(e.what()));
    } catch (const InputError& e) {
      if (!spooled()) throw;
      throw InputError(renamed(e.what()));
    }
  }
  if (!runs_.empty()) {
    if (heads_.empty()) return false;
    std::pop_heap(heads_.begin(), heads_.end(), std::greater<Head>());
    const std::size_t r = heads_.back().run;
    heads_.pop_back();
    out = std::move(runs_[r]->next);
    if (read_job(runs_[r]->io, runs_[r]->next)) {
      heads_.push_back({runs_[r]->next.submit, r});
      std::push_heap(heads_.begin(), heads_.end(), std::greater<Head>());
    }
    return true;
  }
  if (sorted_next_ >= sorted_.size()) return false;
  out = std::move(sorted_[sorted_next_++]);
  return true;
}

}  // namespace schedsim
