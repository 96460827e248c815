// Ctrl-C and SIGTERM stop a long `schedsim run` cleanly: the child process exits with
// 128 + the signal, says where the partial per-job records are, and leaves no file that
// looks like a finished result (no results.json, no jobs.csv, no temporary file). A
// SIGKILL leaves only a temporary file whose name says it is partial.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_support.hpp"

namespace fs = std::filesystem;
using schedsim::test::TempDir;

namespace {

struct Child {
  pid_t pid = -1;
  std::string out_dir, stderr_path;
};

// Starts a run of 10^7 synthetic jobs (minutes of work) writing into `dir`.
Child start_long_run(const TempDir& dir) {
  Child c{-1, dir.path("out"), dir.path("stderr.txt")};
  c.pid = ::fork();
  if (c.pid == 0) {
    const int fd = ::open(c.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::execl(SCHEDSIM_EXE, SCHEDSIM_EXE, "run", "--quiet", "--set", "workload.synthetic.num_jobs=10000000", "--out", c.out_dir.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return c;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Waits until the run is simulating: its temporary jobs file exists and has rows.
bool wait_until_simulating(const Child& c) {
  for (int i = 0; i < 600; ++i) {
    if (fs::exists(c.out_dir)) {
      for (const auto& e : fs::directory_iterator(c.out_dir)) {
        std::error_code ec;
        if (e.path().filename().string().rfind("jobs.csv.partial-", 0) == 0 && fs::file_size(e.path(), ec) > 4096) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 600; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  FAIL("the run did not stop within 60 s of the signal");
  return status;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM stop a run and keep only clearly partial results", "[experiments][interrupt]") {
  for (const int sig : {SIGINT, SIGTERM}) {
    INFO("signal " << sig);
    TempDir dir;
    const Child c = start_long_run(dir);
    REQUIRE(c.pid > 0);
    REQUIRE(wait_until_simulating(c));
    ::kill(c.pid, sig);
    const int status = wait_for_exit(c.pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + sig);
    CHECK(files_in(c.out_dir) == std::vector<std::string>{"jobs.csv.interrupted"});
    const std::string err = read_file(c.stderr_path);
    CHECK_THAT(err, Catch::StartsWith(std::string("schedsim: interrupted by ") + (sig == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM") +
                                      " at simulated time "));
    CHECK_THAT(err, Catch::Contains("jobs that ended so far are in " + c.out_dir + "/jobs.csv.interrupted; no results.json or jobs.csv was written"));
    // The partial file holds whole rows: the header's 20 fields on every line, and a
    // final newline; as many rows as the message says.
    const std::string rows = read_file(c.out_dir + "/jobs.csv.interrupted");
    REQUIRE(!rows.empty());
    CHECK(rows.back() == '\n');
    std::istringstream lines(rows);
    std::string line;
    std::size_t n = 0;
    while (std::getline(lines, line)) {
      CHECK(std::count(line.begin(), line.end(), ',') == 19);
      ++n;
    }
    CHECK(n > 10);
    const auto jobs = err.find(" jobs that ended so far");
    REQUIRE(jobs != std::string::npos);
    const auto the = err.rfind("the ", jobs) + 4;
    CHECK(err.substr(the, jobs - the) == std::to_string(n - 1));
  }
}

TEST_CASE("a SIGKILLed run leaves no file that looks complete", "[experiments][interrupt]") {
  TempDir dir;
  const Child c = start_long_run(dir);
  REQUIRE(c.pid > 0);
  REQUIRE(wait_until_simulating(c));
  ::kill(c.pid, SIGKILL);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  const auto names = files_in(c.out_dir);
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "jobs.csv.partial-" + std::to_string(c.pid));
}
