// Memory stays bounded by the jobs in flight, not by the trace's length: the peak RSS
// growth of a child process that streams a 10x longer trace stays within a small bound,
// while sorting an unsorted trace in memory visibly grows, and sorting it through
// temporary runs does not.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/trace_source.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {

// Peak RSS growth, in KiB, of a forked child that reads the whole trace through a
// TraceJobSource (validation pass plus the stream); -1 when reading failed.
long rss_growth_kib(const std::string& path, const std::string& format, const TraceOptions& options = {}) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    long growth = -1;
    try {
      rusage before{}, after{};
      ::getrusage(RUSAGE_SELF, &before);
      std::vector<std::string> warnings;
      TraceJobSource source(path, format, options, warnings);
      JobSpec j;
      std::uint64_t n = 0;
      while (source.next(j)) ++n;
      ::getrusage(RUSAGE_SELF, &after);
      if (n == source.expected_jobs()) growth = after.ru_maxrss - before.ru_maxrss;
    } catch (...) {
    }
    const ssize_t written = ::write(fds[1], &growth, sizeof growth);
    ::_exit(written == sizeof growth ? 0 : 1);
  }
  ::close(fds[1]);
  long growth = -2;
  const ssize_t got = ::read(fds[0], &growth, sizeof growth);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(got == sizeof growth);
  return growth;
}

std::string schedsim_trace(std::size_t jobs, bool sorted) {
  std::string s = "job_id,submit_time_s,num_gpus,duration_s,user,model\n";
  for (std::size_t i = 0; i < jobs; ++i) {
    const std::size_t t = sorted ? i : jobs - i;
    s += "job-" + std::to_string(i) + "," + std::to_string(t) + ",1," + std::to_string(100 + i % 977) + ",user-" + std::to_string(i % 97) +
         ",a-model-name-that-takes-space\n";
  }
  return s;
}

std::string swf_trace(std::size_t jobs) {
  std::string s = "; Version: 2.2\n";
  for (std::size_t i = 0; i < jobs; ++i) s += std::to_string(i + 1) + " " + std::to_string(i) + " 0 100 4 -1 -1 4 200 -1 1 3 7 -1 -1 1 -1 -1\n";
  return s;
}

std::string philly_trace(std::size_t jobs) {
  std::string s = "[\n";
  for (std::size_t i = 0; i < jobs; ++i) {
    const int minute = static_cast<int>(i / 60 % 60), second = static_cast<int>(i % 60), hour = static_cast<int>(i / 3600 % 24);
    char t[32];
    std::snprintf(t, sizeof t, "2017-10-%02d %02d:%02d:%02d", static_cast<int>(1 + i / 86400), hour, minute, second);
    s += std::string(i ? "," : "") + "{\"status\": \"Pass\", \"jobid\": \"application_" + std::to_string(i) + "\", \"user\": \"u\", \"vc\": \"v\", \"submitted_time\": \"" + t +
         "\", \"attempts\": [{\"start_time\": \"" + t + "\", \"end_time\": \"2017-10-30 00:00:00\", \"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\", \"gpu1\"]}]}]}\n";
  }
  return s + "]\n";
}

}  // namespace

TEST_CASE("streamed traces use memory independent of their length", "[traces][streaming]") {
  TempDir dir;
  constexpr std::size_t kSmall = 20'000, kLarge = 200'000;
  // 4 MiB: far below the ~40 MiB that holding 200,000 JobSpecs takes (shown below).
  constexpr long kBoundKib = 4 * 1024;
  struct Case {
    const char* format;
    std::string small, large;
  };
  const std::vector<Case> cases{
      {"schedsim", schedsim_trace(kSmall, true), schedsim_trace(kLarge, true)},
      {"swf", swf_trace(kSmall), swf_trace(kLarge)},
      {"philly", philly_trace(kSmall / 4), philly_trace(kLarge / 4)},
  };
  for (const auto& c : cases) {
    INFO("format " << c.format);
    const long small = rss_growth_kib(dir.write(std::string("small.") + c.format, c.small), c.format);
    const long large = rss_growth_kib(dir.write(std::string("large.") + c.format, c.large), c.format);
    REQUIRE(small >= 0);
    REQUIRE(large >= 0);
    CHECK(large <= small + kBoundKib);
    std::vector<std::string> warnings;
    TraceJobSource source(dir.path(std::string("large.") + c.format), c.format, warnings);
    CHECK(source.sorted());
    CHECK(source.jobs_buffered() == 0);
  }
  // The check can fail: an unsorted trace sorted in memory shows its growth.
  TraceOptions in_memory;
  in_memory.sort_memory_jobs = kLarge;
  const long unsorted = rss_growth_kib(dir.write("unsorted.csv", schedsim_trace(kLarge, false)), "schedsim", in_memory);
  CHECK(unsorted > 8 * kBoundKib);
  std::vector<std::string> warnings;
  TraceJobSource source(dir.path("unsorted.csv"), "schedsim", in_memory, warnings);
  CHECK(source.jobs_buffered() == kLarge);
}

TEST_CASE("unsorted traces longer than the in-memory limit are sorted through temporary runs", "[traces][streaming]") {
  TempDir dir;
  // Submit times in blocks that go backwards, with ties: a stable sort must keep file order.
  // Elastic limits and user ride along, so every field must survive the temporary runs.
  std::string csv = "job_id,submit_time_s,num_gpus,duration_s,user,min_gpus,max_gpus\n";
  for (int i = 0; i < 2500; ++i) {
    csv += "j" + std::to_string(i) + "," + std::to_string((7 - i % 8) * 100 + (i / 8) % 5) + ",2,5,u" + std::to_string(i) + ",1," +
           std::to_string(2 + i % 3) + "\n";
  }
  const std::string path = dir.write("u.csv", csv);
  std::vector<std::string> w1, w2;
  TraceJobSource in_memory(path, "schedsim", w1);
  TraceOptions small;
  small.sort_memory_jobs = 300;
  TraceJobSource spilled(path, "schedsim", small, w2);
  CHECK(in_memory.sort_runs() == 0);
  CHECK(spilled.sort_runs() == 9);  // ceil(2500 / 300)
  CHECK(spilled.jobs_buffered() == 9);
  REQUIRE(w2.size() == 2);
  CHECK_THAT(w2[1], Catch::Contains("the trace has 2500 jobs, more than the 300 sorted in memory; it was sorted in 9 runs"));
  JobSpec a, b;
  std::size_t n = 0;
  while (in_memory.next(a)) {
    REQUIRE(spilled.next(b));
    CHECK(a.id == b.id);
    CHECK(a.submit == b.submit);
    CHECK(a.user == b.user);
    CHECK(a.source_line == b.source_line);
    CHECK(b.min_gpus == 1);
    CHECK(a.max_gpus == b.max_gpus);
    CHECK(b.max_gpus >= 2);
    ++n;
  }
  CHECK_FALSE(spilled.next(b));
  CHECK(n == 2500);

  constexpr std::size_t kLarge = 200'000;
  TraceOptions bounded;
  bounded.sort_memory_jobs = 10'000;
  const long growth = rss_growth_kib(dir.write("unsorted.csv", schedsim_trace(kLarge, false)), "schedsim", bounded);
  REQUIRE(growth >= 0);
  CHECK(growth < 8 * 1024);  // vs > 32 MiB when the same trace is sorted in memory
}
