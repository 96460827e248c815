// Bad rows: strict mode stops at the first one with file, line and field; lenient mode
// (on_bad_row: skip) skips each and counts it under its reason.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "experiments/runner.hpp"
#include "experiments/trace_inspect.hpp"
#include "sim/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/trace_source.hpp"

using namespace schedsim;
using schedsim::test::read_trace;
using schedsim::test::read_trace_error;
using schedsim::test::TempDir;

namespace {

struct BadRowCase {
  std::string format;
  std::string file;     // fixture name
  std::string content;  // one good row before and after the bad one
  std::string strict_error;  // a trailing "..." compares only the part before it
  std::string reason;
};

const std::string kSched = "job_id,submit_time_s,num_gpus,duration_s,status\n";
const std::string kHelios = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
const std::string kHeliosGood = "1,u,v,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n";
const std::string kSwfGood = "1 0 0 100 4 -1 -1 4 200 -1 1 3 7 -1 -1 1 -1 -1\n";
const std::string kPhillyGood = R"J({"status": "Pass", "jobid": "ok", "submitted_time": "2017-10-07 01:11:39",
 "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]})J";

std::vector<BadRowCase> cases() {
  return {
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,1\nc,1,1,1,failed\n", "t.csv:3: expected 5 fields like the header, got 3", "malformed_row"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\n\"b,0,1,1,failed\nc,1,1,1,failed\n", "t.csv:3: unterminated quoted field (quoted fields may not span lines)", "malformed_row"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\n" + std::string("b,0,1,1\0,failed\n", 16) + "c,1,1,1,failed\n", "t.csv:3: the line contains a NUL byte; is this a binary file?", "malformed_row"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,1,ten,failed\nc,1,1,1,failed\n", "t.csv:3: duration_s: expected a number, got 'ten'", "not_a_number"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,1,nan,failed\nc,1,1,1,failed\n", "t.csv:3: duration_s: expected a finite number, got 'nan'", "not_a_number"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,99999999999999999999,1,failed\nc,1,1,1,failed\n", "t.csv:3: num_gpus: expected an integer GPU count, got '99999999999999999999'", "not_a_number"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,1e300,1,1,failed\nc,1,1,1,failed\n", "t.csv:3: submit_time_s: the value '1e300' is out of range (over 10^12 seconds)", "out_of_range"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,1,-5,failed\nc,1,1,1,failed\n", "t.csv:3: duration_s: must be > 0 seconds, got '-5'", "out_of_range"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\n,0,1,5,failed\nc,1,1,1,failed\n", "t.csv:3: job_id: the job id is empty", "missing_value"},
      {"schedsim", "t.csv", kSched + "a,0,1,10,completed\nb,0,1,5,exploded\nc,1,1,1,failed\n", "t.csv:3: status: unknown status 'exploded'; allowed: completed, failed, killed, unknown or empty", "bad_value"},
      {"helios", "h.csv", kHelios + kHeliosGood + "2,u,v,1,1,1,COMPLETED,2020-06-09 25:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n" + kHeliosGood,
       "h.csv:3: submit_time: expected a date-time like '2020-06-09 18:41:01' (optionally with '+08:00'), got '2020-06-09 25:41:01'", "bad_time"},
      {"swf", "l.swf", kSwfGood + "2 0 0 100 4.5 -1 -1 4 200 -1 1 3 7 -1 -1 1 -1 -1\n" + kSwfGood,
       "l.swf:2: field 5 (allocated_processors): expected a whole number, got '4.5'", "not_a_number"},
      {"swf", "l.swf", kSwfGood + "2 0 0 100 4 -1 -1 4 200 -1 9 3 7 -1 -1 1 -1 -1\n" + kSwfGood,
       "l.swf:2: field 11 (status): allowed statuses are 0 (failed), 1 (completed), 2-4 (partial executions), 5 (cancelled) and -1 (missing), got '9'", "bad_value"},
      {"swf", "l.swf", kSwfGood + "2 0 0 100 4\n" + kSwfGood, "l.swf:2: expected the 18 fields of the Standard Workload Format, got 5", "malformed_row"},
      {"philly", "p.json", "[" + kPhillyGood + ",\n{\"status\": \"Pass\", \"jobid\": \"x\", \"submitted_time\": \"yesterday\"},\n" + kPhillyGood + "]",
       "p.json:3: submitted_time: expected a date-time like '2017-10-07 01:12:09', got 'yesterday'", "bad_time"},
      {"philly", "p.json", "[" + kPhillyGood + ",\n{\"status\": \"Pass\", \"jobid\": \"x\" \"user\": 1},\n" + kPhillyGood + "]",
       "p.json:3: the job is not valid JSON: [json.exception.parse_error.101] parse error at line 1, column ...",
       "malformed_row"},
      {"philly", "p.json", "[" + kPhillyGood + ",\n{\"status\": \"Pass\", \"jobid\": \"\xff\xfe\", \"submitted_time\": \"2017-10-07 01:11:39\"},\n" + kPhillyGood + "]",
       "p.json:3: the job is not valid JSON: [json.exception.parse_error.101] parse error at line 1, column ...",
       "malformed_row"},
      {"philly", "p.json", "[" + kPhillyGood + ",\n{\"status\": \"Lost\", \"jobid\": \"x\", \"submitted_time\": \"2017-10-07 01:11:39\"},\n" + kPhillyGood + "]",
       "p.json:3: status: unknown status 'Lost'; allowed: Pass, Failed, Killed", "bad_value"},
  };
}

}  // namespace

TEST_CASE("each bad-row kind stops strict reading and is counted by reason in lenient reading", "[traces][bad-input]") {
  for (const auto& c : cases()) {
    INFO(c.format << ": " << c.strict_error);
    TempDir dir;
    const std::string path = dir.write(c.file, c.content);
    const std::string error = read_trace_error(path, c.format);
    if (c.strict_error.size() > 3 && c.strict_error.compare(c.strict_error.size() - 3, 3, "...") == 0) {
      CHECK_THAT(error, Catch::StartsWith(c.strict_error.substr(0, c.strict_error.size() - 3)));
    } else {
      CHECK(error == c.strict_error);
    }
    TraceOptions lenient;
    lenient.on_bad_row = BadRowMode::kSkip;
    const auto r = read_trace(path, c.format, lenient);
    CHECK(r.jobs.size() == 2);  // the good rows on both sides of the bad one
    CHECK(r.skipped == RowSkips{{c.reason, 1}});
  }
}

TEST_CASE("gavel rows with job types the matrix lacks are bad rows", "[traces][gavel][bad-input]") {
  TempDir dir;
  TraceOptions o;
  o.throughputs_path = dir.write("m.json", R"J({"v100": {"('LM (batch size 5)', 1)": {"null": 40.0}}})J");
  const std::string path = dir.write("g.trace",
                                     "LM (batch size 5)\tcmd\t--steps\t1\t400\t0\t1\n"
                                     "CycleGAN\tcmd\t--steps\t1\t400\t1\t8\n"
                                     "LM (batch size 5)\tcmd\t--steps\t1\t-3\t2\t1\n"
                                     "LM (batch size 5)\tcmd\t--steps\t1\t400\t3\t1\n");
  CHECK(read_trace_error(path, "gavel", o) == "g.trace:2: job_type: job type 'CycleGAN' at 8 GPUs has no isolated throughput on v100 in " +
                                                  o.throughputs_path + " (field 1: 'CycleGAN')");
  o.on_bad_row = BadRowMode::kSkip;
  const auto r = read_trace(path, "gavel", o);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[1].id == "3");  // ids count every job line, skipped or not
  CHECK(r.skipped == RowSkips{{"out_of_range", 1}, {"unknown_job_type", 1}});
}

TEST_CASE("lenient skips reach inspect and results.json and strict runs write nothing", "[traces][bad-input][experiments]") {
  TempDir dir;
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,1,10\nb,1,x,10\nc,2,1,-1\nd,3,1,10\ne,4,1,1e99\n");
  const std::string cluster = "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n";
  const PolicyRegistry reg = builtin_policies();
  const std::string lenient = dir.write("lenient.yaml", cluster + "workload: {trace: {path: jobs.csv, format: schedsim, on_bad_row: skip}}\n");
  const RunResult r = run_scenario(load_scenario(lenient, {}, std::nullopt, reg), reg, RunOptions{dir.path("out"), false});
  CHECK(r.summary.jobs_completed == 2);
  const auto j = nlohmann::json::parse(schedsim::test::read_file(dir.path("out/results.json")));
  CHECK(j["trace_rows_skipped"] == nlohmann::json{{"not_a_number", 1}, {"out_of_range", 2}});
  CHECK(j["config"]["workload"]["trace"]["on_bad_row"] == "skip");

  TraceOptions o;
  o.on_bad_row = BadRowMode::kSkip;
  const TraceInspection t = inspect_trace(dir.path("jobs.csv"), "auto", o);
  CHECK(t.jobs == 2);
  CHECK(t.rows_skipped == std::map<std::string, std::uint64_t>{{"not_a_number", 1}, {"out_of_range", 2}});
  CHECK(inspection_json(t)["rows_skipped"]["out_of_range"] == 2);

  const std::string strict = dir.write("strict.yaml", cluster + "workload: {trace: {path: jobs.csv, format: schedsim}}\n");
  try {
    run_scenario(load_scenario(strict, {}, std::nullopt, reg), reg, RunOptions{dir.path("strict_out"), false});
    FAIL("the strict run did not stop");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::EndsWith("jobs.csv:3: num_gpus: expected an integer GPU count, got 'x'"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.path("strict_out/results.json")));

  const std::string wrong = dir.write("wrong.yaml", cluster + "workload: {trace: {path: jobs.csv, on_bad_row: ignore}}\n");
  CHECK_THROWS_WITH(load_scenario(wrong, {}, std::nullopt, reg), Catch::Contains("workload.trace.on_bad_row: 'ignore' is not allowed; choose one of: error, skip"));
  const std::string misplaced = dir.write("misplaced.yaml", cluster + "workload: {trace: {path: jobs.csv, throughputs: m.json}}\n");
  CHECK_THROWS_WITH(load_scenario(misplaced, {}, std::nullopt, reg),
                    Catch::Contains("workload.trace.throughputs: applies only to format: gavel (this trace has format: schedsim)"));
}

TEST_CASE("a trace whose rows are all skipped is an error that lists the reasons", "[traces][bad-input]") {
  TempDir dir;
  const std::string path = dir.write("cpu.csv",
                                     "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                                     "1,u,v,0,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n");
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH(TraceJobSource(path, "helios", warnings), Catch::EndsWith("cpu.csv: every row of the trace was skipped (cpu_only 1); no jobs are left to simulate"));
}
