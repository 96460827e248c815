// schedsim init's starter files, the progress reporter and the train bar's formatting
// (issue 29, "Progress and CLI").
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "app/init_command.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "app/sweep.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("init writes every starter file, each loadable as written", "[init]") {
  TempDir tmp;
  const std::string data = schedsim::test::shared_data_dir();
  const std::string dir = tmp.path("scenarios");
  const InitOutcome o = write_starter_files(dir, data.empty() ? "../shared/data" : data);
  REQUIRE(o.written == std::vector<std::string>{dir + "/synthetic.yaml", dir + "/trace.yaml", dir + "/heterogeneous.yaml", dir + "/sweep.yaml"});
  CHECK(o.next_command == "schedsim run " + dir + "/synthetic.yaml --out results/synthetic");
  const PolicyRegistry registry = builtin_policies();

  // Every key line has a comment, at its end or on the line above (the promise: what
  // it is, its unit and default).
  for (const auto& path : o.written) {
    std::ifstream in(path);
    std::string line;
    bool comment_above = false;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      const bool comment_line = std::regex_search(line, std::regex("^\\s*#"));
      const bool key_line = std::regex_search(line, std::regex("^\\s*(- )?[A-Za-z_.]+:"));
      if (key_line) {
        INFO(path << ":" << n << ": " << line);
        CHECK((line.find('#') != std::string::npos || comment_above));
      }
      comment_above = comment_line;
    }
  }

  load_scenario(dir + "/synthetic.yaml", {}, std::nullopt, registry);
  load_scenario(dir + "/heterogeneous.yaml", {}, std::nullopt, registry);
  if (!data.empty()) {
    const ScenarioConfig trace = load_scenario(dir + "/trace.yaml", {}, std::nullopt, registry);
    const RunResult r = run_scenario(trace, registry, RunOptions{});
    CHECK(r.summary.jobs_completed == 3629);
  } else {
    WARN("../shared/data is absent: trace.yaml is not loaded");
  }
  // The grid, and every run of it applied to its base scenario (what sweep checks first).
  const SweepGrid grid = SweepGrid::load_file(dir + "/sweep.yaml");
  CHECK(grid.scenario_path == dir + "/synthetic.yaml");
  const auto runs = grid.runs();
  CHECK(runs.size() == 3 * 2 * 3);
  for (const auto& run : runs) {
    std::vector<std::string> overrides;
    for (std::size_t i = 0; i < grid.parameters.size(); ++i) overrides.push_back(grid.parameters[i].path + "=" + run.values[i]);
    overrides.push_back("policy=" + run.policy_yaml);
    load_scenario(grid.scenario_path, overrides, run.seed, registry);
  }

  // `run` on the synthetic one writes its results.
  const ScenarioConfig synthetic = load_scenario(dir + "/synthetic.yaml", {}, std::nullopt, registry);
  const RunResult r = run_scenario(synthetic, registry, RunOptions{tmp.path("out")});
  CHECK(r.summary.jobs_completed == 500);
  CHECK(fs::exists(tmp.path("out/results.json")));
}

TEST_CASE("init's trace path is relative to the written files' folder", "[init]") {
  const auto files = starter_files("../../shared/data/");
  REQUIRE(files.size() == 4);
  CHECK(files[1].name == "trace.yaml");
  CHECK(files[1].text.find("    path: ../../shared/data/itp/cluster05.csv\n") != std::string::npos);
  CHECK(files[1].text.find("@DATA@") == std::string::npos);

  TempDir tmp;
  const fs::path cwd = fs::current_path();
  fs::current_path(tmp.path());
  write_starter_files("a/b", "../shared/data");
  fs::current_path(cwd);
  std::ifstream in(tmp.path("a/b/trace.yaml"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("    path: ../../../shared/data/itp/cluster05.csv\n") != std::string::npos);
}

TEST_CASE("init refuses to overwrite, naming the file, and writes nothing", "[init]") {
  TempDir tmp;
  const std::string dir = tmp.path("s");
  fs::create_directories(dir);
  tmp.write("s/heterogeneous.yaml", "mine\n");
  try {
    write_starter_files(dir, "../shared/data");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == dir + "/heterogeneous.yaml: already exists; schedsim init never overwrites a file (remove it, or give another folder: schedsim init DIR)");
  }
  CHECK_FALSE(fs::exists(dir + "/synthetic.yaml"));  // nothing written before the check
  CHECK(schedsim::test::read_file(dir + "/heterogeneous.yaml") == "mine\n");
}

namespace {
std::vector<std::string> lines_of(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::vector<std::string> out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) {
    std::string l = buf;
    if (!l.empty() && l.back() == '\n') l.pop_back();
    out.push_back(l);
  }
  return out;
}
}  // namespace

TEST_CASE("progress text: percentage, counts, elapsed and a clamped ETA", "[progress]") {
  CHECK(progress_text(1200, 5000, "jobs", 12) == " 24%  1200/5000 jobs  elapsed 0m12s  ETA 0m38s");
  CHECK(progress_text(0, 5000, "jobs", 3) == "  0%  0/5000 jobs  elapsed 0m03s  ETA ?");
  CHECK(progress_text(6000, 5000, "jobs", 3725) == "100%  5000/5000 jobs  elapsed 1h02m  ETA 0m00s");
  CHECK(progress_text(7, 0, "jobs", 1) == "7 jobs  elapsed 0m01s");  // total unknown
  CHECK(format_duration_s(-4) == "0m00s");
}

TEST_CASE("progress off a terminal: a plain line every interval, percent monotone and <= 100", "[progress]") {
  double now_s = 100;
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  {
    ProgressReporter p("run", "jobs", ProgressStyle{false, 10}, out, [&] { return now_s; });
    const double done[] = {0, 5, 40, 30, 90, 120, 120};  // a count that goes down or past the total is not shown so
    for (double d : done) {
      for (int i = 0; i < 4; ++i) {  // four updates 3 s apart: one line per 10 s at most
        now_s += 3;
        p.update(d, 100, "simulated 1.00 days");
      }
    }
  }
  const auto lines = lines_of(out);
  std::fclose(out);
  REQUIRE(lines.size() == 7);  // updates at 103..184 s: lines at 112, 124, ..., 184 (12 s apart: 10 s, rounded up to the next update)
  const std::regex shape("^run: +([0-9]+)%  [0-9]+/100 jobs  elapsed [0-9]+m[0-9]{2}s  ETA ([0-9]+m[0-9]{2}s|\\?)  simulated 1\\.00 days$");
  int last = -1;
  for (const auto& l : lines) {
    INFO(l);
    std::smatch m;
    REQUIRE(std::regex_match(l, m, shape));
    const int pct = std::stoi(m[1]);
    CHECK(pct >= last);
    CHECK(pct <= 100);
    last = pct;
  }
  CHECK(last == 100);
}

TEST_CASE("progress on a terminal rewrites one line and clears it; interval 0 prints nothing", "[progress]") {
  double now_s = 0;
  std::FILE* out = std::tmpfile();
  {
    ProgressReporter p("sweep", "runs", ProgressStyle{true, 10}, out, [&] { return now_s; });
    now_s = 0.5;
    p.update(1, 4);  // before the first second: nothing
    now_s = 2;
    p.update(2, 4);
  }
  std::fflush(out);
  std::rewind(out);
  std::string all;
  for (int c; (c = std::fgetc(out)) != EOF;) all += static_cast<char>(c);
  std::fclose(out);
  CHECK(all.rfind("\rsweep:  50%  2/4 runs  elapsed 0m02s  ETA 0m02s", 0) == 0);
  CHECK(all.find('\n') == std::string::npos);
  CHECK(all.substr(all.size() - 1) == "\r");

  out = std::tmpfile();
  {
    ProgressReporter p("run", "jobs", parse_progress_interval("0", false), out, [&] { return now_s += 100; });
    p.update(1, 2);
    CHECK_FALSE(p.enabled());
  }
  CHECK(lines_of(out).empty());
  std::fclose(out);
}

TEST_CASE("SCHEDSIM_PROGRESS_INTERVAL_S: seconds >= 0, anything else named in the error", "[progress]") {
  CHECK(parse_progress_interval(nullptr, true).interval_s == 10);
  CHECK(parse_progress_interval("2.5", false).interval_s == 2.5);
  for (const char* bad : {"-1", "ten", "5s", "nan"}) {
    try {
      parse_progress_interval(bad, false);
      FAIL("no error for " << bad);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == std::string("SCHEDSIM_PROGRESS_INTERVAL_S: must be a number of seconds >= 0 (0 turns progress off), got '") + bad + "'");
    }
  }
}

TEST_CASE("train bar: the last update's overshoot is clamped (not 23239/16000, ETA 0m-4s)", "[progress][train]") {
  // 8 environments of whole episodes per update: the last update ends past total_steps.
  CHECK(train_bar_text(23239, 16000, 10, 0, NAN) ==
        "[##############################] 100%  step 16000/16000  2324 steps/s  eval JCT - h  ETA 0m00s");
  CHECK(train_bar_text(8000, 16000, 20, 0, 4442.4) ==
        "[###############...............]  50%  step 8000/16000  400 steps/s  eval JCT 1.234 h  ETA 0m20s");
  CHECK(train_bar_text(0, 16000, 0, 0, NAN).find("ETA ?") != std::string::npos);
}

TEST_CASE("progress does not change a run's output files", "[progress]") {
  TempDir tmp;
  const std::string config = tmp.write("s.yaml", "seed: 3\ncluster: {nodes: [{count: 2, type: V100, devices_per_node: 8}]}\n"
                                                 "workload: {synthetic: {num_jobs: 20000, arrival: {process: poisson, mean_interarrival_s: 60}, gpus: {1: 0.5, 4: 0.5}}}\n");
  const PolicyRegistry registry = builtin_policies();
  const ScenarioConfig s = load_scenario(config, {}, std::nullopt, registry);
  ::setenv("SCHEDSIM_PROGRESS_INTERVAL_S", "0.000001", 1);  // a line every 4096 events, on stderr
  RunOptions with{tmp.path("with")};
  with.progress = true;
  run_scenario(s, registry, with);
  ::unsetenv("SCHEDSIM_PROGRESS_INTERVAL_S");
  run_scenario(s, registry, RunOptions{tmp.path("without")});
  for (const char* f : {"results.json", "jobs.csv"}) {
    INFO(f);
    CHECK(schedsim::test::read_file(tmp.path(std::string("with/") + f)) == schedsim::test::read_file(tmp.path(std::string("without/") + f)));
  }
}
