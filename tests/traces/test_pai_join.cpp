// The PAI 2020 task table joined with its job table (workload.trace.job_table,
// --job-table): user and job status per task, missing jobs, bad job-table rows, the
// option on other formats, and a round trip through `trace convert`.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "app/trace_inspect.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/temp_files.hpp"
#include "traces/trace_source.hpp"
#include "traces/workload_config.hpp"

using namespace schedsim;
using schedsim::test::read_trace;
using schedsim::test::read_trace_error;
using schedsim::test::TempDir;

namespace {

// Tasks in no particular job order: j2's task comes between j1's two.
const std::string kTasks =
    "j1,worker,2,Terminated,1000,4600,600,29.3,50,T4\n"
    "j2,tensorflow,1,Terminated,2000,2100,600,29.3,100,V100\n"
    "j1,ps,1,Terminated,1000,4600,600,29.3,100,T4\n"
    "j3,worker,1,Failed,3000,3500,600,29.3,200,P100\n";

// Job table in another order than the tasks; j2's job failed although its task ended.
const std::string kJobs =
    "j3,inst3,carol,Failed,2990,3500\n"
    "j1,inst1,alice,Terminated,990,4600\n"
    "j2,inst2,bob,Failed,1990,2100\n";

TraceOptions with_job_table(const std::string& path, BadRowMode mode = BadRowMode::kError) {
  TraceOptions o;
  o.on_bad_row = mode;
  o.job_table_path = path;
  return o;
}

}  // namespace

TEST_CASE("PAI job table join fills user and prefers the job status", "[traces][pai][join]") {
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks);
  const std::string jobs = dir.write("pai_job_table.csv", kJobs);
  const auto r = read_trace(tasks, "pai-tasks", with_job_table(jobs));
  REQUIRE(r.jobs.size() == 4);
  CHECK(r.jobs[0].id == "j1/worker");
  CHECK(r.jobs[0].user == "alice");
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kCompleted);
  CHECK(r.jobs[0].num_gpus == 2);
  CHECK(r.jobs[0].gpu_milli == 500);
  CHECK(r.jobs[0].submit == Tick::from_seconds(1000));  // still the task's start_time
  CHECK(r.jobs[1].id == "j2/tensorflow");
  CHECK(r.jobs[1].user == "bob");
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kFailed);  // task Terminated, job Failed
  CHECK(r.jobs[2].id == "j1/ps");
  CHECK(r.jobs[2].user == "alice");
  CHECK(r.jobs[3].user == "carol");
  CHECK(r.jobs[3].recorded_status == RecordedStatus::kFailed);
  CHECK(r.skipped.empty());

  // Without the job table: no user and the task's own status.
  const auto plain = read_trace(tasks, "pai-tasks");
  REQUIRE(plain.jobs.size() == 4);
  CHECK(plain.jobs[1].user.empty());
  CHECK(plain.jobs[1].recorded_status == RecordedStatus::kCompleted);
}

TEST_CASE("PAI job statuses map like task statuses and running jobs are unknown", "[traces][pai][join]") {
  TempDir dir;
  const std::string tasks = dir.write("t.csv",
                                      "a,w,1,Terminated,10,20,0,0,100,\n"
                                      "b,w,1,Terminated,10,20,0,0,100,\n"
                                      "c,w,1,Failed,10,20,0,0,100,\n"
                                      "d,w,1,Terminated,10,20,0,0,100,\n"
                                      "e,w,1,Running,10,,0,0,100,\n");
  const std::string jobs = dir.write("j.csv",
                                     "a,i,u1,Interrupted,1,2\n"
                                     "b,i,u2,Running,1,\n"
                                     "c,i,u3,terminated,1,2\n"
                                     "d,i,,Waiting,1,\n"
                                     "e,i,u5,Terminated,1,2\n");
  const auto r = read_trace(tasks, "pai-tasks", with_job_table(jobs));
  REQUIRE(r.jobs.size() == 4);
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kKilled);
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kUnknown);  // job still running at the trace's end
  CHECK(r.jobs[2].recorded_status == RecordedStatus::kCompleted);  // case-insensitive
  CHECK(r.jobs[2].user == "u3");
  CHECK(r.jobs[3].user.empty());  // an empty user stays unknown
  CHECK(r.jobs[3].recorded_status == RecordedStatus::kUnknown);
  CHECK(r.skipped == RowSkips{{"still_running", 1}});  // the task's own status still filters
}

TEST_CASE("PAI task whose job is missing from the job table", "[traces][pai][join][bad-input]") {
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks + "j9,worker,1,Terminated,5000,5100,600,29.3,100,T4\n" + kTasks);
  const std::string jobs = dir.write("pai_job_table.csv", kJobs);
  CHECK(read_trace_error(tasks, "pai-tasks", with_job_table(jobs)) ==
        "pai_task_table.csv:5: job_name: job 'j9' is not in the job table " + jobs + " (or its row there was skipped as bad)");

  const auto r = read_trace(tasks, "pai-tasks", with_job_table(jobs, BadRowMode::kSkip));
  CHECK(r.jobs.size() == 8);
  CHECK(r.skipped == RowSkips{{"job_not_in_job_table", 1}});
  CHECK(r.jobs[4].id == "j1/worker");
  CHECK(r.jobs[4].user == "alice");

  // Rows the format leaves out by design need no job: a CPU-only task of an unknown job
  // is counted as cpu_only, not as a missing job.
  const std::string cpu = dir.write("cpu.csv", "j1,worker,1,Terminated,10,20,0,0,100,\nzz,ps,1,Terminated,10,20,600,29.3,,\n");
  const auto c = read_trace(cpu, "pai-tasks", with_job_table(jobs));
  CHECK(c.jobs.size() == 1);
  CHECK(c.skipped == RowSkips{{"cpu_only", 1}});
}

TEST_CASE("PAI job table bad rows name the job table file and line", "[traces][pai][join][bad-input]") {
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks);
  struct Case {
    std::string bad_row;
    std::string error;
    std::string reason;
  };
  const std::vector<Case> cases{
      {"j4,inst4,dave,Exploded,1,2\n", "pai_job_table.csv:2: status: unknown status 'Exploded'; allowed: Terminated, Failed, Interrupted, Running, Waiting",
       "job_table_bad_value"},
      {"j4,inst4,dave,,1,2\n", "pai_job_table.csv:2: status: the status is empty; allowed: Terminated, Failed, Interrupted, Running, Waiting",
       "job_table_missing_value"},
      {",inst4,dave,Terminated,1,2\n", "pai_job_table.csv:2: job_name: the job name is empty", "job_table_missing_value"},
      {"j4,inst4,dave,Terminated\n", "pai_job_table.csv:2: expected 6 fields like the header, got 4", "job_table_malformed_row"},
      {"j3,inst9,mallory,Terminated,1,2\n", "pai_job_table.csv:2: job_name: job 'j3' appears again (first at line 1); each job_name must have one row",
       "job_table_duplicate_job"},
  };
  for (const auto& c : cases) {
    INFO("bad row " << c.bad_row);
    const std::string jobs = dir.write("pai_job_table.csv", "j3,inst3,carol,Failed,2990,3500\n" + c.bad_row + "j1,inst1,alice,Terminated,990,4600\nj2,inst2,bob,Failed,1990,2100\n");
    CHECK(read_trace_error(tasks, "pai-tasks", with_job_table(jobs)) == c.error);
    const auto r = read_trace(tasks, "pai-tasks", with_job_table(jobs, BadRowMode::kSkip));
    CHECK(r.jobs.size() == 4);
    CHECK(r.skipped == RowSkips{{c.reason, 1}});
    REQUIRE(r.jobs.size() == 4);
    CHECK(r.jobs[3].user == "carol");  // a duplicate keeps the first row
  }

  // A skipped job-table row leaves its tasks without a job.
  const std::string jobs = dir.write("short.csv", "j1,inst1,alice,Terminated,990,4600\nj2,inst2,bob,Failed\nj3,inst3,carol,Failed,2990,3500\n");
  const auto r = read_trace(tasks, "pai-tasks", with_job_table(jobs, BadRowMode::kSkip));
  CHECK(r.jobs.size() == 3);
  CHECK(r.skipped == RowSkips{{"job_table_malformed_row", 1}, {"job_not_in_job_table", 1}});

  CHECK_THROWS_WITH(read_trace(tasks, "pai-tasks", with_job_table(dir.path("nope.csv"))), Catch::Contains("nope.csv"));
}

TEST_CASE("a long PAI job table read stops promptly when the interruption poll throws", "[traces][pai][join][interrupt]") {
  // The job table is read whole before the first task: 10^6 rows in the published trace.
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks);
  std::string rows = kJobs;
  for (int i = 0; i < 10000; ++i) rows += "x" + std::to_string(i) + ",i,u,Terminated,1,2\n";
  const std::string jobs = dir.write("pai_job_table.csv", rows);
  struct Stop {
    std::string path;
  };
  bool interrupted = true;  // the flag a signal handler would set
  std::uint64_t polls = 0;
  TraceOptions options = with_job_table(jobs);
  options.poll_interrupt = [&](const std::string& p) {
    ++polls;
    if (interrupted) throw Stop{p};
  };
  std::vector<std::string> warnings;
  try {
    TraceJobSource source(tasks, "pai-tasks", options, warnings);
    FAIL("the read was not stopped");
  } catch (const Stop& s) {
    CHECK(s.path == jobs);  // before: the table was read to its end, the signal unseen
  }
  CHECK(polls == 1);  // within 4096 rows
  interrupted = false;
  polls = 0;
  CHECK(read_trace(tasks, "pai-tasks", options).jobs.size() == 4);
  CHECK(polls == 10003 / 4096);
}

TEST_CASE("a PAI job table from a named pipe or a pipe is read once, through a temporary copy", "[traces][pai][join][pipe]") {
  // The task reader is opened up to three times (validation, the run), and each opening
  // reads the job table: from a pipe the second reading blocked (or found it empty).
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks);
  const auto write_all = [](int fd, const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  };
  const auto read_all = [](TraceJobSource& source) {
    std::vector<JobSpec> out;
    JobSpec job;
    while (source.next(job)) out.push_back(job);
    return out;
  };
  SECTION("mkfifo; an error names the FIFO, not the copy") {
    const std::string fifo = dir.path("jobs.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] { write_all(::open(fifo.c_str(), O_WRONLY), kJobs); });
    {
      std::vector<std::string> warnings;
      TraceJobSource source(tasks, "pai-tasks", with_job_table(fifo), warnings);
      writer.join();
      const std::vector<JobSpec> jobs = read_all(source);
      REQUIRE(jobs.size() == 4);
      CHECK(jobs[0].user == "alice");  // sorted by submit time: j1/worker, j1/ps, j2, j3
      CHECK(jobs[2].user == "bob");
      CHECK(jobs[3].user == "carol");
    }
    const std::string more = dir.write("more_tasks.csv", kTasks + "j9,worker,1,Terminated,5000,5100,600,29.3,100,T4\n");
    std::thread bad_writer([&] { write_all(::open(fifo.c_str(), O_WRONLY), kJobs); });
    std::vector<std::string> warnings;
    CHECK_THROWS_WITH(TraceJobSource(more, "pai-tasks", with_job_table(fifo), warnings),
                      more + ":5: job_name: job 'j9' is not in the job table " + fifo + " (or its row there was skipped as bad)");
    bad_writer.join();
  }
  SECTION("a pipe's /dev/fd/N path, as process substitution gives") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] { write_all(fds[1], kJobs); });
    const std::string path = "/dev/fd/" + std::to_string(fds[0]);
    std::vector<std::string> warnings;
    TraceJobSource source(tasks, "auto", with_job_table(path), warnings);
    writer.join();
    ::close(fds[0]);
    CHECK(source.format() == "pai-tasks");
    CHECK(read_all(source).size() == 4);
  }
}

TEST_CASE("the job table option is rejected for formats other than pai-tasks", "[traces][pai][join][bad-input]") {
  TempDir dir;
  const std::string jobs = dir.write("pai_job_table.csv", kJobs);
  const std::string sched = dir.write("s.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,1,10\n");
  CHECK(read_trace_error(sched, "schedsim", with_job_table(jobs)) ==
        "s.csv: the job table option (job_table / --job-table, here " + jobs + ") applies only to format pai-tasks; this trace has format schedsim");
  TraceInspection unused;
  CHECK_THROWS_WITH(unused = inspect_trace(sched, "auto", with_job_table(jobs)), Catch::Contains("applies only to format pai-tasks; this trace has format schedsim"));

  // The workload.trace key: resolved next to the config file, kept as written, and
  // refused for other formats.
  dir.write("pai_task_table.csv", kTasks);
  const std::string good = dir.write("good.yaml", "workload: {trace: {path: pai_task_table.csv, format: pai-tasks, job_table: pai_job_table.csv}}\n");
  const WorkloadConfig w = WorkloadConfig::parse(ConfigNode::load_file(good).child("workload"));
  REQUIRE(w.trace);
  CHECK(w.trace->job_table == "pai_job_table.csv");
  CHECK(w.trace->options.job_table_path == jobs);
  CHECK(w.to_yaml()["trace"]["job_table"].as<std::string>() == "pai_job_table.csv");
  std::vector<std::string> warnings;
  auto source = w.make_source(1, warnings);
  JobSpec j;
  REQUIRE(source->next(j));
  CHECK(j.id == "j1/worker");
  CHECK(j.user == "alice");

  const std::string bad = dir.write("bad.yaml", "workload: {trace: {path: s.csv, format: schedsim, job_table: pai_job_table.csv}}\n");
  CHECK_THROWS_WITH(WorkloadConfig::parse(ConfigNode::load_file(bad).child("workload")),
                    Catch::Contains("workload.trace.job_table: applies only to format: pai-tasks (this trace has format: schedsim)"));
  const WorkloadConfig plain = WorkloadConfig::parse(ConfigNode::load_file(dir.write("plain.yaml", "workload: {trace: {path: pai_task_table.csv, format: pai-tasks}}\n")).child("workload"));
  CHECK_FALSE(plain.to_yaml()["trace"]["job_table"]);
}

TEST_CASE("trace convert keeps the joined user and status", "[traces][pai][join][convert]") {
  TempDir dir;
  const std::string tasks = dir.write("pai_task_table.csv", kTasks);
  const std::string jobs = dir.write("pai_job_table.csv", kJobs);
  std::ostringstream converted;
  CHECK(convert_trace(tasks, "pai-tasks", with_job_table(jobs), converted) == 4);
  const std::string out = dir.write("converted.csv", converted.str());
  const auto back = read_trace(out, "schedsim");
  REQUIRE(back.jobs.size() == 4);
  // Sorted by submit time: j1's two tasks (1000), j2 (2000), j3 (3000).
  CHECK(back.jobs[0].id == "j1/worker");
  CHECK(back.jobs[0].user == "alice");
  CHECK(back.jobs[0].recorded_status == RecordedStatus::kCompleted);
  CHECK(back.jobs[1].id == "j1/ps");
  CHECK(back.jobs[2].id == "j2/tensorflow");
  CHECK(back.jobs[2].user == "bob");
  CHECK(back.jobs[2].recorded_status == RecordedStatus::kFailed);
  CHECK(back.jobs[2].gpu_type == "V100");
  CHECK(back.jobs[3].user == "carol");
  CHECK(back.jobs[3].num_gpus == 2);
}
