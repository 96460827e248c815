// Inputs the fuzzers (tests/fuzz) found crashing or leaking, kept as ordinary tests with
// the behaviour they must have now. The raw inputs are also replayed from
// tests/fuzz/regressions/.
#include <catch2/catch.hpp>

#include <filesystem>

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

TEST_CASE("fuzz regression: a Philly file not starting with '[' is closed again", "[traces][philly][fuzz-regression]") {
  // trace-philly, LeakSanitizer: the reader's constructor threw after opening the file, so
  // its destructor never closed it (one file descriptor and zlib state per attempt).
  TempDir dir;
  const std::string path = dir.write("bad.json", std::string("+[\n[2\x02\"", 7));
  CHECK(read_trace_error(path, "philly") == "bad.json:1: expected a JSON array of jobs ('[' first)");
  const std::size_t before = open_files();
  for (int i = 0; i < 100; ++i) read_trace_error(path, "philly");
  CHECK(open_files() == before);
}
