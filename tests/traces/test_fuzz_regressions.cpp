// Inputs the fuzzers (tests/fuzz) found crashing or leaking, kept as ordinary tests with
// the behaviour they must have now. The raw inputs are also replayed from
// tests/fuzz/regressions/.
#include <catch2/catch.hpp>

#include <filesystem>

#include "world/physics/throughput_matrix.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"

using namespace schedsim;
using schedsim::test::read_trace_error;
using schedsim::test::TempDir;

namespace {
std::size_t open_files() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) n += e.is_symlink() ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("fuzz regression: a Philly file that is not a JSON array is closed again", "[traces][philly][fuzz-regression]") {
  // trace-philly, LeakSanitizer: the reader's constructor threw after opening the file, so
  // its destructor never closed it (one file descriptor and zlib state per attempt).
  TempDir dir;
  const std::string path = dir.write("bad.json", std::string("+[\n[2\x02\"", 7));
  CHECK(read_trace_error(path, "philly") == "bad.json:1: expected a JSON array of jobs ('[' first)");
  const std::size_t before = open_files();
  for (int i = 0; i < 100; ++i) read_trace_error(path, "philly");
  CHECK(open_files() == before);
}

TEST_CASE("fuzz regression: a number too large for a double is a JSON error naming the file", "[traces][fuzz-regression]") {
  // throughputs: nlohmann's out_of_range.406 ("number overflow") escaped the matrix and
  // Philly readers, which caught only parse errors: a message without file or line, and
  // in lenient mode the whole read stopped instead of skipping the row.
  CHECK_THROWS_WITH(ThroughputMatrix::parse(R"({"v100": 1e99999})", "m.json"),
                    "m.json:1:10: not valid JSON: the number 1e99999 is too large (beyond a double's range, about 1.8e308)");
  TempDir dir;
  const std::string good = R"({"status": "Pass", "jobid": "ok", "submitted_time": "2017-10-07 01:11:39",
 "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]})";
  const std::string path = dir.write("p.json", "[" + good + ",\n{\"jobid\": \"x\", \"n\": 1e99999},\n" + good + "]");
  CHECK(read_trace_error(path, "philly") == "p.json:3:21: the job is not valid JSON: the number 1e99999 is too large (beyond a double's range, about 1.8e308)");
  TraceOptions lenient;
  lenient.on_bad_row = BadRowMode::kSkip;
  const auto r = schedsim::test::read_trace(path, "philly", lenient);
  CHECK(r.jobs.size() == 2);
  CHECK(r.skipped == RowSkips{{"malformed_row", 1}});
}
