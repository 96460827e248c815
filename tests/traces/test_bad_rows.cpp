// Bad rows: strict mode stops at the first one with file, line and field; lenient mode
// (on_bad_row: skip) skips each and counts it under its reason.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "app/trace_inspect.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/signal_files.hpp"
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
       "p.json:3:38: the job is not valid JSON: unexpected string literal in an object; expected ',' or '}'",
       "malformed_row"},
      {"philly", "p.json", "[" + kPhillyGood + ",\n{\"status\": \"Pass\", \"jobid\": \"\xff\xfe\", \"submitted_time\": \"2017-10-07 01:11:39\"},\n" + kPhillyGood + "]",
       "p.json:3:30: the job is not valid JSON: invalid string: ill-formed UTF-8 byte (at '\"\\xff')",
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

TEST_CASE("a Philly job that is not JSON names the file's line and column and what was expected", "[traces][philly][bad-input]") {
  // Before: "p.json:2: the job is not valid JSON: [json.exception.parse_error.101] parse
  // error at line 2, column 17: syntax error while parsing value - invalid literal; last
  // read: '\"status\": tru}'": the library's tag, and a line and column within the job.
  TempDir dir;
  CHECK(read_trace_error(dir.write("p.json", "[\n  {\"jobid\": \"a\",\n   \"status\": tru}\n]"), "philly") ==
        "p.json:3:17: the job is not valid JSON: invalid literal 'tru}'; expected a value (an object, array, string, number, true, false or null)");
  // A job on the line of the '[': the column counts from the line's start.
  CHECK(read_trace_error(dir.write("p.json", "[{\"jobid\": x}]"), "philly") ==
        "p.json:1:12: the job is not valid JSON: invalid literal 'x'; expected a value (an object, array, string, number, true, false or null)");
  CHECK(read_trace_error(dir.write("p.json", "[\n{\"jobid\": \"a\", }\n]"), "philly") ==
        "p.json:2:16: the job is not valid JSON: unexpected '}' in an object; expected a string in double quotes (the key)");
  CHECK(read_trace_error(dir.write("p.json", "[\n{\"jobid\": [1 2]}\n]"), "philly") ==
        "p.json:2:14: the job is not valid JSON: unexpected number literal in an array; expected ',' or ']'");
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

TEST_CASE("a gavel throughput matrix from a named pipe is read once, through a temporary copy", "[traces][gavel][pipe]") {
  // Each opening of a gavel trace loads its matrix: from a pipe the second opening blocked.
  TempDir dir;
  const std::string matrix = R"J({"v100": {"('LM (batch size 5)', 1)": {"null": 40.0}}})J";
  const std::string fifo = dir.path("m.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto serve = [&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    for (std::size_t done = 0; done < matrix.size();) {
      const ssize_t n = ::write(fd, matrix.data() + done, matrix.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  };
  TraceOptions o;
  o.throughputs_path = fifo;
  const std::string good = dir.write("g.trace", "LM (batch size 5)\tcmd\t--steps\t1\t400\t0\t1\nLM (batch size 5)\tcmd\t--steps\t1\t800\t3\t1\n");
  {
    std::thread writer(serve);
    std::vector<std::string> warnings;
    TraceJobSource source(good, "gavel", o, warnings);
    writer.join();
    JobSpec job;
    std::size_t n = 0;
    while (source.next(job)) ++n;
    CHECK(n == 2);
  }
  const std::string bad = dir.write("b.trace", "LM (batch size 5)\tcmd\t--steps\t1\t400\t0\t1\nCycleGAN\tcmd\t--steps\t1\t400\t1\t8\n");
  std::thread writer(serve);
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH(TraceJobSource(bad, "gavel", o, warnings),
                    bad + ":2: job_type: job type 'CycleGAN' at 8 GPUs has no isolated throughput on v100 in " + fifo + " (field 1: 'CycleGAN')");
  writer.join();
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

// ---- Damaged compressed files, duplicated columns, pipes, interruption (issue 22) ----

namespace {

std::string rows_csv(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += "j" + std::to_string(i) + "," + std::to_string(i) + ",1,10\n";
  return s;
}

// A gzip file of `parts`, with a full flush after each but the last: the compressed
// size at each flush is a cut that decompresses to exactly the parts before it.
std::vector<std::size_t> write_gzip_parts(const std::string& path, const std::vector<std::string>& parts) {
  std::vector<std::size_t> cuts;
  gzFile f = gzopen(path.c_str(), "wb");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    gzwrite(f, parts[i].data(), static_cast<unsigned>(parts[i].size()));
    if (i + 1 < parts.size()) {
      gzflush(f, Z_FULL_FLUSH);
      cuts.push_back(static_cast<std::size_t>(std::filesystem::file_size(path)));
    }
  }
  gzclose(f);
  return cuts;
}

std::string gzip_damage(const std::string& file, std::int64_t line, const std::string& zlib) {
  return file + ": the gzip stream is truncated or damaged after line " + std::to_string(line) + " (zlib: " + zlib +
         "); the file is incomplete or corrupt (gzip -t tests it)";
}

}  // namespace

TEST_CASE("a truncated or damaged gzip trace is an error naming the file and the last good line", "[traces][gzip][bad-input]") {
  TempDir dir;
  const std::string header = "job_id,submit_time_s,num_gpus,duration_s\n";
  // Parts: header and rows 0..999 | "j1000,10" (half a row) | the rest of that row and 2000 more.
  const std::string whole = dir.path("whole.csv.gz");
  const auto cuts = write_gzip_parts(whole, {header + rows_csv(0, 1000), "j1000,10", "00,1,10\n" + rows_csv(1001, 3000)});
  const std::string bytes = schedsim::test::read_file(whole);
  REQUIRE(read_trace(whole, "schedsim").jobs.size() == 3000);
  TraceOptions lenient;
  lenient.on_bad_row = BadRowMode::kSkip;

  SECTION("cut at a row boundary") {
    const std::string path = dir.write("t.csv.gz", bytes.substr(0, cuts[0]));
    CHECK(read_trace_error(path, "schedsim") == gzip_damage("t.csv.gz", 1001, "unexpected end of file"));
    CHECK(read_trace_error(path, "schedsim", lenient) == gzip_damage("t.csv.gz", 1001, "unexpected end of file"));
    std::vector<std::string> warnings;
    CHECK_THROWS_WITH(TraceJobSource(path, "auto", TraceOptions{}, warnings), gzip_damage(path, 1001, "unexpected end of file"));
    CHECK_THROWS_WITH(inspect_trace(path, "auto"), gzip_damage(path, 1001, "unexpected end of file"));
  }
  SECTION("cut in the middle of a row") {
    const std::string path = dir.write("t.csv.gz", bytes.substr(0, cuts[1]));
    CHECK(read_trace_error(path, "schedsim") == gzip_damage("t.csv.gz", 1001, "unexpected end of file"));
    CHECK(read_trace_error(path, "schedsim", lenient) == gzip_damage("t.csv.gz", 1001, "unexpected end of file"));
    std::ostringstream out;
    CHECK_THROWS_WITH(convert_trace(path, "auto", TraceOptions{}, out), gzip_damage(path, 1001, "unexpected end of file"));
  }
  SECTION("only the checksum trailer is missing") {
    const std::string path = dir.write("t.csv.gz", bytes.substr(0, bytes.size() - 8));
    CHECK(read_trace_error(path, "schedsim") == gzip_damage("t.csv.gz", 3001, "unexpected end of file"));
  }
  SECTION("flipped bytes: the damage, not the garbage rows it decodes to") {
    std::string damaged = bytes;
    for (std::size_t i = cuts[0] + 40; i < cuts[0] + 48; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5A);
    const std::string path = dir.write("t.csv.gz", damaged);
    const std::string strict = read_trace_error(path, "schedsim");
    CHECK_THAT(strict, Catch::StartsWith("t.csv.gz: the gzip stream is truncated or damaged after line ") && Catch::Contains(" (zlib: ") &&
                           Catch::EndsWith("); the file is incomplete or corrupt (gzip -t tests it)"));
    CHECK(read_trace_error(path, "schedsim", lenient) == strict);
    std::string last = bytes;  // in the checksum itself: every row decodes, the check fails at the end
    last[last.size() - 6] = static_cast<char>(last[last.size() - 6] ^ 0x01);
    CHECK(read_trace_error(dir.write("c.csv.gz", last), "schedsim") == gzip_damage("c.csv.gz", 3001, "incorrect data check"));
  }
  SECTION("every gzip reader: philly, swf, signal files") {
    const std::string philly = dir.path("p.json.gz");
    schedsim::test::write_gzip(philly, "[" + kPhillyGood + ",\n" + kPhillyGood + "]\n");
    const std::string p = schedsim::test::read_file(philly);
    CHECK(read_trace_error(dir.write("p.json.gz", p.substr(0, p.size() - 8)), "philly") == gzip_damage("p.json.gz", 4, "unexpected end of file"));
    const std::string swf = dir.path("s.swf.gz");
    schedsim::test::write_gzip(swf, "; header\n" + kSwfGood + kSwfGood);
    const std::string w = schedsim::test::read_file(swf);
    CHECK(read_trace_error(dir.write("s.swf.gz", w.substr(0, w.size() - 8)), "swf") == gzip_damage("s.swf.gz", 3, "unexpected end of file"));
    const std::string price = dir.path("price.csv.gz");
    schedsim::test::write_gzip(price, "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\n2023-01-01 01:00:00,2\n");
    const std::string c = schedsim::test::read_file(price);
    const std::string cut = dir.write("price.csv.gz", c.substr(0, c.size() - 8));
    CHECK_THROWS_WITH(load_signal_csv(cut, SignalKind::kPrice, {}, "p"), gzip_damage(cut, 3, "unexpected end of file"));
  }
}

TEST_CASE("a column named twice in a header is an error naming the file, line 1 and the column", "[traces][bad-input]") {
  TempDir dir;
  CHECK(read_trace_error(dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s,num_gpus\nj,0,1,5,2\n"), "schedsim") ==
        "t.csv:1: column 'num_gpus' appears twice in the header (columns 3 and 5); each column may appear once in a schedsim trace");
  CHECK(read_trace_error(dir.write("i.csv", "job_id,submission_time,duration,num_gpu,duration\nj,0,5,1,6\n"), "itp") ==
        "i.csv:1: column 'duration' appears twice in the header (columns 3 and 5); each column may appear once in a itp trace");
  CHECK(read_trace_error(dir.write("h.csv", kHelios.substr(0, kHelios.size() - 1) + ",user\n" + kHeliosGood.substr(0, kHeliosGood.size() - 1) + ",x\n"),
                         "helios") == "h.csv:1: column 'user' appears twice in the header (columns 2 and 13); each column may appear once in a helios trace");
  CHECK(read_trace_error(dir.write("t2.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval,job_id\n"), "tiresias") ==
        "t2.csv:1: column 'job_id' appears twice in the header (columns 1 and 8); each column may appear once in a tiresias trace");
  TraceOptions mapped;
  mapped.mapping = CsvMapping{{{"job_id", "id"}, {"submit_time", "t"}, {"duration", "d"}, {"num_gpus", "g"}}, 1.0, ','};
  CHECK(read_trace_error(dir.write("g.csv", "id,t,d,g,t\n"), "csv", mapped) ==
        "g.csv:1: column 't' appears twice in the header (columns 2 and 5); each column may appear once in a csv trace");
  // Unnamed columns (trailing commas) cannot be looked up and may repeat.
  CHECK(read_trace(dir.write("e.csv", "job_id,submission_time,duration,num_gpu,,\nj,0,5,1,,\n"), "itp").jobs.size() == 1);
  const std::string price = dir.write("p.csv", "Datetime (UTC),Price (USD/MWh),Datetime (UTC)\n2023-01-01 00:00:00,1,x\n");
  CHECK_THROWS_WITH(load_signal_csv(price, SignalKind::kPrice, {}, "p"),
                    price + ":1: column 'Datetime (UTC)' appears twice in the header (columns 1 and 3); each column may appear once in the price series");
}

TEST_CASE("a trace from a named pipe or a pipe is read once, through a temporary copy", "[traces][pipe]") {
  TempDir dir;
  const std::string trace = "job_id,submit_time_s,num_gpus,duration_s\n" + rows_csv(0, 5000);
  const std::string spool_prefix = "schedsim-spool-" + std::to_string(::getpid()) + "-";
  const auto spools_left = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(temp_folder())) n += e.path().filename().string().rfind(spool_prefix, 0) == 0;
    return n;
  };
  const std::size_t spools_before = spools_left();
  const auto write_all = [](int fd, const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  };

  SECTION("mkfifo, detected format, and the error names the FIFO") {
    const std::string fifo = dir.path("trace.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] { write_all(::open(fifo.c_str(), O_WRONLY), trace); });
    {
      std::vector<std::string> warnings;
      TraceJobSource source(fifo, "auto", TraceOptions{}, warnings);
      writer.join();
      CHECK(source.format() == "schedsim");
      CHECK(source.describe() == fifo);
      CHECK(source.expected_jobs() == 5000);
      JobSpec job;
      std::size_t n = 0;
      while (source.next(job)) ++n;
      CHECK(n == 5000);
      CHECK(spools_left() == spools_before + 1);
    }
    CHECK(spools_left() == spools_before);  // the copy goes with the source
    std::thread bad_writer([&] { write_all(::open(fifo.c_str(), O_WRONLY), "job_id,submit_time_s,num_gpus,duration_s\nj,0,1,x\n"); });
    std::vector<std::string> warnings;
    CHECK_THROWS_WITH(TraceJobSource(fifo, "schedsim", TraceOptions{}, warnings), fifo + ":2: duration_s: expected a number, got 'x'");
    bad_writer.join();
    CHECK(spools_left() == spools_before);
  }
  SECTION("a pipe's /dev/fd/N path, as process substitution gives") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] { write_all(fds[1], trace); });
    const std::string path = "/dev/fd/" + std::to_string(fds[0]);
    const TraceInspection t = inspect_trace(path, "auto");
    writer.join();
    ::close(fds[0]);
    CHECK(t.format == "schedsim");
    CHECK(t.jobs == 5000);
    CHECK(t.path == path);
    CHECK(spools_left() == spools_before);
  }
  SECTION("copies left by a killed process are removed by the next one") {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);  // a process id that is gone
    const std::string stale = (std::filesystem::path(temp_folder()) / ("schedsim-spool-" + std::to_string(child) + "-0")).string();
    { std::ofstream(stale) << "left by a killed run"; }
    const std::string mine = (std::filesystem::path(temp_folder()) / (spool_prefix + "999")).string();
    { std::ofstream(mine) << "this process's"; }
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] { write_all(fds[1], trace); });
    const TraceInspection t = inspect_trace("/dev/fd/" + std::to_string(fds[0]), "schedsim");
    writer.join();
    ::close(fds[0]);
    CHECK(t.jobs == 5000);
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(std::filesystem::exists(mine));  // a live process's copy stays
    std::filesystem::remove(mine);
  }
}

TEST_CASE("sorting runs of an unsorted trace leave no file behind, even while open", "[traces][streaming]") {
  TempDir dir;
  std::string csv = "job_id,submit_time_s,num_gpus,duration_s\n";
  for (int i = 0; i < 1000; ++i) csv += "j" + std::to_string(i) + "," + std::to_string(1000 - i) + ",1,5\n";
  TraceOptions small;
  small.sort_memory_jobs = 100;
  std::vector<std::string> warnings;
  TraceJobSource source(dir.write("u.csv", csv), "schedsim", small, warnings);
  REQUIRE(source.sort_runs() == 10);
  const std::string prefix = "schedsim-sort-" + std::to_string(::getpid()) + "-";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(temp_folder())) files += e.path().filename().string().rfind(prefix, 0) == 0;
  CHECK(files == 0);  // unlinked as soon as they were open: a SIGKILL cannot leave them
  JobSpec job;
  std::size_t n = 0;
  double last = -1;
  while (source.next(job)) {
    CHECK(job.submit.seconds() >= last);
    last = job.submit.seconds();
    ++n;
  }
  CHECK(n == 1000);
}

TEST_CASE("a long trace read stops promptly when the interruption poll throws", "[traces][interrupt]") {
  TempDir dir;
  const std::string path = dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s\n" + rows_csv(0, 100000));
  struct Stop {
    std::string path;
  };
  std::atomic<bool> interrupted{true};  // the flag a signal handler would set
  std::uint64_t polls = 0;
  TraceOptions options;
  options.poll_interrupt = [&](const std::string& p) {
    ++polls;
    if (interrupted) throw Stop{p};
  };
  std::vector<std::string> warnings;
  try {
    TraceJobSource source(path, "schedsim", options, warnings);
    FAIL("the read was not stopped");
  } catch (const Stop& s) {
    CHECK(s.path == path);
  }
  CHECK(polls == 1);  // at the first poll: within 4096 rows
  // Rows left out by design (CPU-only jobs) are polled too, not only rows returned.
  std::string helios = kHelios;
  for (int i = 0; i < 20000; ++i) helios += "1,u,v,0,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n";
  polls = 0;
  CHECK_THROWS_AS(read_trace(dir.write("h.csv", helios), "helios", options), Stop);
  CHECK(polls == 1);
  interrupted = false;
  polls = 0;
  CHECK(read_trace(path, "schedsim", options).jobs.size() == 100000);
  CHECK(polls == 100001 / 4096);
}

TEST_CASE("trace convert and sample remove the partial file a killed earlier command left", "[traces][convert][out-folder]") {
  TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a process id that is gone
  const std::string stale = dir.write("out.csv.partial-" + std::to_string(child), "half a trace");
  const std::string other = dir.write("other.csv.partial-" + std::to_string(child), "another file's");
  write_streamed_file(dir.path("out.csv"), [](std::ostream& out) { out << "done\n"; });
  CHECK(schedsim::test::read_file(dir.path("out.csv")) == "done\n");
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(other));  // only the file being written is cleaned up
}
