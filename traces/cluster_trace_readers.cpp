// Production GPU-cluster job logs in CSV: SenseTime Helios, Shanghai AI Lab Acme
// (Seren, Kalos), Alibaba PAI 2020 task table (joined with its job table when given) and
// Alibaba 2023 openb pod lists. Field mappings, units and time zones are in
// docs/traces.md.
#include <cctype>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "base/error.hpp"
#include "traces/readers.hpp"
#include "traces/time_parse.hpp"

namespace schedsim {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

double datetime(const CsvTable& t, int col, const TimeZone& zone) {
  double s = 0;
  if (!parse_datetime(t.raw(col), zone, s)) {
    t.fail(col, "expected a date-time like '2020-06-09 18:41:01' (optionally with '+08:00'), got " + t.quoted(col), "bad_time");
  }
  return s;
}

// Helios cluster_log.csv and Acme trace_seren.csv / trace_kalos.csv share their core
// columns; Helios adds `vc`, Acme adds `type` (and Kalos fail_time/stop_time, dropped).
class SlurmLogReader : public TraceReader {
 public:
  SlurmLogReader(const std::string& path, BadRowMode mode, const char* format, TimeZone zone)
      : TraceReader(mode), t_(path, format), zone_(zone) {
    id_ = t_.column("job_id", true);
    user_ = t_.column("user", false);
    vc_ = t_.column("vc", false);
    type_ = t_.column("type", false);
    gpus_ = t_.column("gpu_num", true);
    state_ = t_.column("state", true);
    submit_ = t_.column("submit_time", true);
    start_ = t_.column("start_time", true);
    end_ = t_.column("end_time", true);
    duration_ = t_.column("duration", false);
  }

 protected:
  bool read(JobSpec& out) override {
    while (t_.next_row()) {
      out.id.assign(t_.text(id_));
      if (out.id.empty()) t_.fail(id_, "the job id is empty", "missing_value");
      const std::int64_t gpus = t_.integer(gpus_, 0, 1'000'000);
      const std::string_view state = t_.text(state_);
      if (iequals(state, "COMPLETED")) out.recorded_status = RecordedStatus::kCompleted;
      else if (iequals(state, "CANCELLED")) out.recorded_status = RecordedStatus::kKilled;
      else if (iequals(state, "FAILED") || iequals(state, "TIMEOUT") || iequals(state, "NODE_FAIL")) out.recorded_status = RecordedStatus::kFailed;
      else if (state.empty()) t_.fail(state_, "the state is empty; allowed: COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL", "missing_value");
      else {
        filtered("other_state");  // e.g. the single SUSPENDED job of Helios Uranus
        continue;
      }
      set_submit(t_, submit_, datetime(t_, submit_, zone_), out);
      if (gpus == 0) {
        filtered("cpu_only");
        continue;
      }
      if (t_.empty(start_)) {
        filtered("never_started");
        continue;
      }
      double duration = 0;
      if (!t_.empty(duration_)) {
        duration = t_.number(duration_);
      } else {
        if (t_.empty(end_)) {
          filtered("still_running");
          continue;
        }
        duration = datetime(t_, end_, zone_) - datetime(t_, start_, zone_);
      }
      if (duration == 0) {
        filtered("zero_duration");
        continue;
      }
      set_duration(t_, duration_ >= 0 ? duration_ : end_, duration, out);
      out.num_gpus = static_cast<int>(gpus);
      if (user_ >= 0) out.user.assign(t_.text(user_));
      if (vc_ >= 0) out.group.assign(t_.text(vc_));
      if (type_ >= 0) out.model.assign(t_.text(type_));
      out.source_line = t_.line();
      return true;
    }
    return false;
  }

 private:
  CsvTable t_;
  TimeZone zone_;
  int id_, user_, vc_, type_, gpus_, state_, submit_, start_, end_, duration_;
};

// Alibaba 2023 openb pod list: one pod per row, fractional GPU shares in gpu_milli.
class OpenbPodsReader : public TraceReader {
 public:
  OpenbPodsReader(const std::string& path, BadRowMode mode) : TraceReader(mode), t_(path, "openb-pods") {
    id_ = t_.column("name", true);
    gpus_ = t_.column("num_gpu", true);
    milli_ = t_.column("gpu_milli", true);
    spec_ = t_.column("gpu_spec", false);
    qos_ = t_.column("qos", false);
    phase_ = t_.column("pod_phase", true);
    created_ = t_.column("creation_time", true);
    deleted_ = t_.column("deletion_time", true);
    scheduled_ = t_.column("scheduled_time", true);
  }

 protected:
  bool read(JobSpec& out) override {
    while (t_.next_row()) {
      out.id.assign(t_.text(id_));
      if (out.id.empty()) t_.fail(id_, "the pod name is empty", "missing_value");
      const std::int64_t gpus = t_.integer(gpus_, 0, 1'000'000);
      const std::string_view phase = t_.text(phase_);
      if (iequals(phase, "Succeeded")) out.recorded_status = RecordedStatus::kCompleted;
      else if (iequals(phase, "Failed")) out.recorded_status = RecordedStatus::kFailed;
      else if (iequals(phase, "Running") || iequals(phase, "Pending")) out.recorded_status = RecordedStatus::kUnknown;
      else t_.fail(phase_, "unknown pod_phase " + t_.quoted(phase_) + "; allowed: Succeeded, Failed, Running, Pending", "bad_value");
      set_submit(t_, created_, t_.number(created_), out);
      if (gpus == 0) {
        filtered("cpu_only");
        continue;
      }
      if (iequals(phase, "Pending") || t_.empty(scheduled_)) {
        filtered("never_scheduled");
        continue;
      }
      const double duration = t_.number(deleted_) - t_.number(scheduled_);
      if (duration == 0) {
        filtered("zero_duration");
        continue;
      }
      set_duration(t_, deleted_, duration, out);
      out.num_gpus = static_cast<int>(gpus);
      out.gpu_milli = static_cast<int>(t_.integer(milli_, 1, 1000));
      if (gpus > 1 && out.gpu_milli != 1000) t_.fail(milli_, "a pod with several GPUs must ask for whole GPUs (1000), got " + t_.quoted(milli_), "out_of_range");
      if (spec_ >= 0) out.gpu_type.assign(t_.text(spec_));
      if (qos_ >= 0) out.group.assign(t_.text(qos_));
      out.source_line = t_.line();
      return true;
    }
    return false;
  }

 private:
  CsvTable t_;
  int id_, gpus_, milli_, spec_, qos_, phase_, created_, deleted_, scheduled_;
};

// The status words of the PAI 2020 task and job tables. `running` is set for Running and
// Waiting (not finished when the trace ended). False for any other word.
bool pai_status(std::string_view word, RecordedStatus& out, bool& running) {
  running = false;
  if (iequals(word, "Terminated")) out = RecordedStatus::kCompleted;
  else if (iequals(word, "Failed")) out = RecordedStatus::kFailed;
  else if (iequals(word, "Interrupted")) out = RecordedStatus::kKilled;
  else if (iequals(word, "Running") || iequals(word, "Waiting")) {
    out = RecordedStatus::kUnknown;
    running = true;
  } else {
    return false;
  }
  return true;
}
const char* const kPaiStatuses = "Terminated, Failed, Interrupted, Running, Waiting";

// Alibaba PAI 2020 pai_job_table (headerless), read whole into a hash map from job_name
// so that the task table, which is not sorted by job, can look up any task's job. Each
// entry holds the job name (24 characters in the trace, so on the heap), the index of its
// user in a table of distinct user names, its status and its line (for the duplicate
// message): about 130 bytes per job with the map's node and bucket (docs/traces.md).
const std::vector<std::string> kPaiJobColumns{"job_name", "inst_id", "user", "status", "start_time", "end_time"};

class PaiJobTable {
 public:
  struct Job {
    std::int64_t line;
    std::uint32_t user;
    RecordedStatus status;
  };

  // Reads every row. A bad row throws BadRowError naming this file and line (kError) or
  // is passed to `skipped` with its reason prefixed by "job_table_" (kSkip).
  // `poll_interrupt` (may be empty) is called with the path every 4096 rows, as the trace
  // reader does: the table has a million rows and is read before the first task.
  PaiJobTable(const std::string& path, BadRowMode mode, const std::function<void(const std::string&)>& skipped,
              const std::function<void(const std::string&)>& poll_interrupt)
      : path_(path) {
    CsvTable t(path, "pai-tasks job table", kPaiJobColumns);
    std::unordered_map<std::string, std::uint32_t> user_index;
    std::string name;
    for (std::uint64_t rows = 1;; ++rows) {
      if (poll_interrupt && (rows & 4095) == 0) poll_interrupt(path);
      try {
        if (!t.next_row()) break;
        name.assign(t.text(0));
        if (name.empty()) t.fail(0, "the job name is empty", "missing_value");
        Job job{t.line(), 0, RecordedStatus::kUnknown};
        bool running = false;
        if (!pai_status(t.text(3), job.status, running)) {
          if (t.empty(3)) t.fail(3, std::string("the status is empty; allowed: ") + kPaiStatuses, "missing_value");
          t.fail(3, "unknown status " + t.quoted(3) + "; allowed: " + kPaiStatuses, "bad_value");
        }
        const std::string user(t.text(2));
        const auto u = user_index.emplace(user, static_cast<std::uint32_t>(users_.size()));
        if (u.second) users_.push_back(user);
        job.user = u.first->second;
        const auto j = jobs_.emplace(name, job);
        if (!j.second) {
          t.fail(0, "job '" + name + "' appears again (first at line " + std::to_string(j.first->second.line) + "); each job_name must have one row",
                 "duplicate_job");
        }
      } catch (const BadRowError& e) {
        if (mode == BadRowMode::kError) throw;
        skipped("job_table_" + e.reason());
      }
    }
  }

  // The job called `name`, or null.
  const Job* find(std::string_view name) const {
    key_.assign(name);
    const auto it = jobs_.find(key_);
    return it == jobs_.end() ? nullptr : &it->second;
  }
  const std::string& user(const Job& job) const { return users_[job.user]; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unordered_map<std::string, Job> jobs_;
  std::vector<std::string> users_;  // distinct user names, in order of first appearance
  mutable std::string key_;
};

// Alibaba PAI 2020 pai_task_table (headerless): one task = inst_num instances, each with
// plan_gpu percent of a GPU (100 = one GPU). With a job table, each kept task takes its
// job's user and status.
const std::vector<std::string> kPaiTaskColumns{"job_name", "task_name", "inst_num", "status",   "start_time",
                                               "end_time", "plan_cpu",  "plan_mem", "plan_gpu", "gpu_type"};

class PaiTasksReader : public TraceReader {
 public:
  PaiTasksReader(const std::string& path, const TraceOptions& o) : TraceReader(o.on_bad_row), t_(path, "pai-tasks", kPaiTaskColumns) {
    if (!o.job_table_path.empty()) {
      jobs_ = std::make_unique<PaiJobTable>(
          o.job_table_path, o.on_bad_row, [this](const std::string& reason) { filtered(reason); }, o.poll_interrupt);
    }
  }

 protected:
  bool read(JobSpec& out) override {
    while (t_.next_row()) {
      out.id.assign(t_.text(0));
      if (out.id.empty()) t_.fail(0, "the job name is empty", "missing_value");
      out.id += '/';
      out.id.append(t_.text(1));
      bool running = false;
      if (!pai_status(t_.text(3), out.recorded_status, running)) {
        t_.fail(3, "unknown status " + t_.quoted(3) + "; allowed: " + kPaiStatuses, "bad_value");
      }
      if (running) {
        filtered("still_running");
        continue;
      }
      if (t_.empty(8) || t_.number(8) == 0) {
        filtered("cpu_only");
        continue;
      }
      const double plan_gpu = t_.number(8);
      if (plan_gpu < 0) t_.fail(8, "must be >= 0 percent of a GPU, got " + t_.quoted(8), "out_of_range");
      const double inst = t_.number(2);
      if (!(inst >= 1) || inst != std::floor(inst) || inst > 1e6) t_.fail(2, "expected a whole number of instances >= 1, got " + t_.quoted(2), "out_of_range");
      if (t_.empty(4) || t_.number(4) == 0) {
        filtered("never_started");
        continue;
      }
      if (t_.empty(5) || t_.number(5) == 0) {
        filtered("still_running");
        continue;
      }
      set_submit(t_, 4, t_.number(4), out);
      const double duration = t_.number(5) - t_.number(4);
      if (duration == 0) {
        filtered("zero_duration");
        continue;
      }
      set_duration(t_, 5, duration, out);
      // Below one GPU: a fractional share per instance. From one GPU up: whole GPUs per
      // instance, rounded up (plan_gpu 150 asks for 2 GPUs).
      const double per_instance = plan_gpu < 100 ? 1.0 : std::ceil(plan_gpu / 100.0 - 1e-9);
      if (inst * per_instance > 1e6) t_.fail(8, "the task asks for more than 1000000 GPUs", "out_of_range");
      out.num_gpus = static_cast<int>(inst * per_instance);
      out.gpu_milli = plan_gpu < 100 ? std::max(1, static_cast<int>(std::lround(plan_gpu * 10))) : 1000;
      out.gpu_type.assign(t_.text(9));
      if (jobs_) {
        const PaiJobTable::Job* job = jobs_->find(t_.text(0));
        if (!job) {
          t_.fail(0, "job '" + std::string(t_.text(0)) + "' is not in the job table " + jobs_->path() + " (or its row there was skipped as bad)",
                  "job_not_in_job_table");
        }
        out.user = jobs_->user(*job);
        out.recorded_status = job->status;  // the job's outcome wins over the task's
      }
      out.source_line = t_.line();
      return true;
    }
    return false;
  }

 private:
  CsvTable t_;
  std::unique_ptr<PaiJobTable> jobs_;  // null without a job table
};

}  // namespace

std::unique_ptr<TraceReader> make_helios_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<SlurmLogReader>(path, o.on_bad_row, "helios", TimeZone::fixed_hours(8));
}
std::unique_ptr<TraceReader> make_acme_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<SlurmLogReader>(path, o.on_bad_row, "acme", TimeZone::fixed_hours(8));
}
std::unique_ptr<TraceReader> make_openb_pods_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<OpenbPodsReader>(path, o.on_bad_row);
}
std::unique_ptr<TraceReader> make_pai_tasks_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<PaiTasksReader>(path, o);
}

}  // namespace schedsim
