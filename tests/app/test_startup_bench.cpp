// `schedsim bench startup` (experiments/startup_bench.hpp): what it starts and what it
// reports, not how fast (wall-clock numbers are never asserted).
#include <catch2/catch.hpp>

#include "app/startup_bench.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

TEST_CASE("median_of: the middle value, or the mean of the middle two", "[bench][startup]") {
  CHECK(median_of({}) == 0);
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 3, 2}) == 2.5);
}

TEST_CASE("bench startup starts the CLI N times per command line and reports each start's medians", "[bench][startup]") {
  TempDir dir;
  StartupBenchOptions options;
  options.executable = SCHEDSIM_EXE;
  options.runs = 3;
  options.work_dir = dir.path("work");
  const auto results = run_startup_bench(options);
  REQUIRE(results.size() == 2);  // no agent: no LibTorch-loading call
  CHECK(results[0].label == "--version");
  CHECK(results[0].command == "schedsim --version");
  CHECK(results[1].label == "run");
  CHECK(results[1].command == "schedsim run --quiet --out OUT");
  for (const auto& r : results) {
    INFO(r.label);
    CHECK(r.runs == 3);
    CHECK_FALSE(r.loads_libtorch);
    CHECK(r.min_wall_s > 0);
    CHECK(r.min_wall_s <= r.median_wall_s);
    CHECK(r.median_wall_s <= r.max_wall_s);
    CHECK(r.median_peak_rss_mib > 0);
    CHECK(r.median_peak_rss_mib <= r.max_peak_rss_mib);
    CHECK(r.libtorch_ratio == 0);
    const auto j = startup_bench_json(r);
    CHECK(j["name"] == "startup");
    CHECK(j["case"] == r.label);
    CHECK(j["runs"] == 3);
  }
  // The runs wrote where they were told.
  CHECK(std::filesystem::exists(dir.path("work/out/results.json")));
  const std::vector<StartupCase> with_agent = startup_cases("a.pt");
  REQUIRE(with_agent.size() == 3);
  CHECK(with_agent[2].label == "run rl");
  CHECK(with_agent[2].loads_libtorch);
  CHECK(with_agent[2].args == std::vector<std::string>{"run", "--quiet", "--set", "workload.synthetic.num_jobs=1", "--set", "policy=rl:a.pt", "--out", "{OUT}"});
}

TEST_CASE("bench startup: a failing start names the command and what it said, and bad options are refused", "[bench][startup]") {
  TempDir dir;
  StartupBenchOptions options;
  options.executable = SCHEDSIM_EXE;
  options.runs = 1;
  options.work_dir = dir.path("work");
  options.agent = dir.write("bad.pt", "not a checkpoint\n");
  // The first two calls succeed; the rl one fails (not a checkpoint, or no rl policy in a
  // build without LibTorch), with the CLI's own first line of error.
  CHECK_THROWS_WITH(run_startup_bench(options), Catch::StartsWith("bench startup: `schedsim run --quiet --set workload.synthetic.num_jobs=1 --set policy=rl:" +
                                                                    options.agent + " --out " + dir.path("work") +
                                                                    "/out` exited with status 1: schedsim: error: "));
  options.runs = 0;
  CHECK_THROWS_MATCHES(run_startup_bench(options), InputError, Catch::Message("--startup-runs: must be at least 1, got 0"));
  options.runs = 1;
  options.agent = "/nonexistent/agent.pt";
  CHECK_THROWS_MATCHES(run_startup_bench(options), InputError, Catch::Message("--startup-agent: no checkpoint file '/nonexistent/agent.pt'"));
}
