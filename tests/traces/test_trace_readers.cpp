#include <catch2/catch.hpp>

#include <sstream>

#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_source.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {

std::vector<JobSpec> read_all(const std::string& path, const std::string& format) {
  auto reader = open_trace_reader(path, format);
  std::vector<JobSpec> jobs;
  JobSpec j;
  while (reader->next(j)) jobs.push_back(j);
  return jobs;
}

std::string read_error(const std::string& content, const std::string& format = "schedsim") {
  TempDir dir;
  const std::string path = dir.write("t.csv", content);
  try {
    std::vector<std::string> warnings;
    TraceJobSource source(path, format, warnings);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    return msg.substr(msg.find("t.csv"));  // drop the temp folder
  }
  return "no error";
}

}  // namespace

TEST_CASE("schedsim traces read with optional estimates, quotes, CRLF and a BOM", "[traces]") {
  TempDir dir;
  const std::string path = dir.write("jobs.csv",
                                     "\xEF\xBB\xBFjob_id,submit_time_s,num_gpus,duration_s,estimate_s\r\n"
                                     "a,0,1,10.5,12\r\n"
                                     "\"b,quoted\",2.25,8,100,\r\n"
                                     "\r\n"
                                     "c , 3 , 2 , 7 , 6\r\n");
  const auto jobs = read_all(path, "schedsim");
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].id == "a");
  CHECK(jobs[0].duration_s == 10.5);
  CHECK(jobs[0].estimate_s == 12);
  CHECK(jobs[1].id == "b,quoted");
  CHECK(jobs[1].submit == Tick::from_us(2'250'000));
  CHECK(jobs[1].num_gpus == 8);
  CHECK_FALSE(jobs[1].has_estimate());
  CHECK(jobs[2].id == "c");
  CHECK(jobs[2].source_line == 5);
}

TEST_CASE("columns are found by name, in any order", "[traces]") {
  TempDir dir;
  const auto jobs = read_all(dir.write("j.csv", "duration_s,num_gpus,job_id,submit_time_s\n5,2,x,1\n"), "schedsim");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].duration_s == 5);
  CHECK(jobs[0].num_gpus == 2);
  CHECK(jobs[0].id == "x");
}

TEST_CASE("ITP traces read their four columns and ignore extra ones", "[traces]") {
  TempDir dir;
  const auto jobs = read_all(dir.write("itp.csv",
                                       "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
                                       "5dc7,2266647,6503,bert,2267101,128,16,604\n"),
                             "itp");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].num_gpus == 16);
  CHECK(jobs[0].duration_s == 604);
  CHECK(jobs[0].submit == Tick::from_seconds(2266647));
  CHECK(detect_trace_format(dir.path("itp.csv")) == "itp");
}

TEST_CASE("write then read gives the same jobs (round trip)", "[traces]") {
  std::vector<JobSpec> jobs;
  JobSpec j;
  j.id = "odd \"id\", with comma";
  j.submit = Tick::from_us(123'456'789);
  j.num_gpus = 4;
  j.duration_s = 1.0 / 3.0;
  j.estimate_s = 2.5;
  jobs.push_back(j);
  j.id = "plain";
  j.estimate_s = std::nan("");
  j.duration_s = 1e7;
  jobs.push_back(j);
  TempDir dir;
  std::ostringstream out;
  write_schedsim_trace_header(out, true);
  for (const auto& job : jobs) write_schedsim_trace_row(out, job, true);
  const auto back = read_all(dir.write("rt.csv", out.str()), "schedsim");
  REQUIRE(back.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(back[i].id == jobs[i].id);
    CHECK(back[i].submit == jobs[i].submit);
    CHECK(back[i].num_gpus == jobs[i].num_gpus);
    CHECK(back[i].duration_s == jobs[i].duration_s);  // exact: written with 17 digits
    CHECK(back[i].has_estimate() == jobs[i].has_estimate());
  }
  CHECK(back[0].estimate_s == 2.5);
}

TEST_CASE("every bad row is an error naming file, line and column", "[traces][bad-input]") {
  const std::string h = "job_id,submit_time_s,num_gpus,duration_s\n";
  CHECK(read_error(h + "a,0,1,10\nb,1,1,-3\n") == "t.csv:3: duration_s: must be > 0 seconds, got '-3'");
  CHECK(read_error(h + "a,0,1,0\n") == "t.csv:2: duration_s: must be > 0 seconds, got '0'");
  CHECK(read_error(h + "a,0,1,nan\n") == "t.csv:2: duration_s: expected a finite number, got 'nan'");
  CHECK(read_error(h + "a,0,1,inf\n") == "t.csv:2: duration_s: expected a finite number, got 'inf'");
  CHECK(read_error(h + "a,0,1,ten\n") == "t.csv:2: duration_s: expected a number, got 'ten'");
  CHECK(read_error(h + "a,0,two,10\n") == "t.csv:2: num_gpus: expected an integer GPU count, got 'two'");
  CHECK(read_error(h + "a,0,1.5,10\n") == "t.csv:2: num_gpus: expected an integer GPU count, got '1.5'");
  CHECK(read_error(h + "a,0,0,10\n") == "t.csv:2: num_gpus: must be between 1 and 1000000 GPUs, got '0'");
  CHECK(read_error(h + "a,-5,1,10\n") == "t.csv:2: submit_time_s: must be >= 0 seconds, got '-5'");
  CHECK(read_error(h + "a,1e300,1,10\n") == "t.csv:2: submit_time_s: the value '1e300' is out of range (over 10^12 seconds)");
  CHECK(read_error(h + ",0,1,10\n") == "t.csv:2: job_id: the job id is empty");
  CHECK(read_error(h + "a,0,1\n") == "t.csv:2: expected 4 fields like the header, got 3");
  CHECK(read_error("job_id,submit_time_s,num_gpus\na,0,1\n") ==
        "t.csv:1: missing column 'duration_s' for the schedsim format (header has: job_id, submit_time_s, num_gpus)");
  CHECK(read_error("job_id,submit_time_s,num_gpus,duration_s,estimate\n") ==
        "t.csv:1: unknown column 'estimate' in a schedsim trace; known columns: job_id, submit_time_s, num_gpus, duration_s, estimate_s, user, group, model, gpu_type, gpu_milli, "
        "iterations, deadline_s, priority, status, name, min_gpus, max_gpus, region, allowed_regions");
  CHECK(read_error(h) == "t.csv: the trace has a header but no jobs");
  CHECK(read_error("") == "t.csv: the trace is empty (no header line)");
  CHECK(read_error(h + "a,0,1,1\0x\n") == "no error");  // the literal stops at \0: a valid file
  CHECK(read_error(h + std::string("a,0,1,1\n\0\n", 11)) == "t.csv:3: the line contains a NUL byte; is this a binary file?");
  CHECK(read_error(h + "\"a,0,1,1\n") == "t.csv:2: unterminated quoted field (quoted fields may not span lines)");
  CHECK(read_error("job_id,submission_time,duration\na,0,5\n", "itp") ==
        "t.csv:1: missing column 'num_gpu' for the itp format (header has: job_id, submission_time, duration)");
  CHECK(read_error(h + "a,0,1,1\n", "parquet") == "t.csv: unknown trace format 'parquet'; known formats: schedsim, itp, tiresias, philly, helios, acme, pai-tasks, openb-pods, swf, "
        "gavel, csv");
}

TEST_CASE("unsorted traces are sorted by submit time with a warning and ties keep file order", "[traces]") {
  TempDir dir;
  const std::string path = dir.write("u.csv", "job_id,submit_time_s,num_gpus,duration_s\na,20,1,1\nb,10,1,1\nc,20,1,1\nd,5,1,1\n");
  std::vector<std::string> warnings;
  TraceJobSource source(path, "schedsim", warnings);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::EndsWith("u.csv:3: submit times are not in order; the trace was sorted by submit time (ties keep file order)"));
  std::string order;
  JobSpec j;
  while (source.next(j)) order += j.id;
  CHECK(order == "dbac");
  CHECK(source.expected_jobs() == 4);

  std::vector<std::string> none;
  TraceJobSource sorted(dir.write("s.csv", "job_id,submit_time_s,num_gpus,duration_s\na,1,1,1\nb,1,1,1\n"), "schedsim", none);
  CHECK(none.empty());
}

TEST_CASE("the real ITP traces read completely", "[traces][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const std::vector<std::pair<std::string, std::uint64_t>> files{
      {"cluster01.csv", 1595}, {"cluster05.csv", 3629}, {"cluster06.csv", 2396}, {"cluster10.csv", 260}};
  for (const auto& [file, jobs] : files) {
    std::vector<std::string> warnings;
    TraceJobSource source(data + "/itp/" + file, "itp", warnings);
    CHECK(source.expected_jobs() == jobs);
    CHECK(warnings.empty());  // the publisher sorted them
    CHECK(detect_trace_format(data + "/itp/" + file) == "itp");
  }
  // ElasticFlow's files carry the same job columns plus model, deadline and batch size.
  std::vector<std::string> warnings;
  TraceJobSource ef(data + "/elasticflow/cluster10.csv", "itp", warnings);
  CHECK(ef.expected_jobs() == 260);
}

TEST_CASE("schedsim traces carry elastic limits and the writer round-trips them", "[traces][elastic]") {
  TempDir dir;
  const std::string path = dir.write("jobs.csv",
                                     "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\n"
                                     "a,0,4,100,2,8\n"
                                     "b,5,2,50,,\n"
                                     "c,7,3,20,3,3\n");
  const auto jobs = read_all(path, "schedsim");
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].is_elastic());
  CHECK(jobs[0].min_gpus == 2);
  CHECK(jobs[0].max_gpus == 8);
  CHECK_FALSE(jobs[1].is_elastic());
  CHECK(jobs[1].min_gpus == 0);
  CHECK(jobs[2].min_gpus == 3);
  CHECK(jobs[2].max_gpus == 3);
  std::ostringstream out;
  const SchedsimColumns columns{false, false, true};
  write_schedsim_trace_header(out, columns);
  for (const auto& job : jobs) write_schedsim_trace_row(out, job, columns);
  CHECK(out.str() == "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\na,0,4,100,2,8\nb,5,2,50,,\nc,7,3,20,3,3\n");
  const auto again = read_all(dir.write("again.csv", out.str()), "schedsim");
  REQUIRE(again.size() == 3);
  CHECK(again[0].max_gpus == 8);
  CHECK_FALSE(again[1].is_elastic());
}

TEST_CASE("bad elastic limits in schedsim traces are located errors", "[traces][elastic][bad-input]") {
  const std::string h = "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\n";
  CHECK(read_error(h + "a,0,4,10,5,8\n") == "t.csv:2: min_gpus: must be between 1 and 4, got '5'");
  CHECK(read_error(h + "a,0,4,10,0,8\n") == "t.csv:2: min_gpus: must be between 1 and 4, got '0'");
  CHECK(read_error(h + "a,0,4,10,2,3\n") == "t.csv:2: max_gpus: must be between 4 and 1000000, got '3'");
  CHECK(read_error(h + "a,0,4,10,2,\n") == "t.csv:2: max_gpus: is empty but min_gpus is set; give both (elastic) or neither (rigid)");
  CHECK(read_error(h + "a,0,4,10,,8\n") == "t.csv:2: min_gpus: is empty but max_gpus is set; give both (elastic) or neither (rigid)");
  CHECK(read_error("job_id,submit_time_s,num_gpus,duration_s,min_gpus\na,0,4,10,2\n") ==
        "t.csv:1: a schedsim trace with elastic jobs needs both columns min_gpus and max_gpus");
}
