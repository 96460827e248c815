// schedsim init's starter files, the progress reporter and the train bar's formatting
// (issue 29, "Progress and CLI").
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "experiments/init_command.hpp"
#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "experiments/sweep.hpp"
#include "sim/error.hpp"
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
