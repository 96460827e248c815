// `schedsim bench startup`: what every CLI call costs before it does anything, as users
// feel it: the executable is started N times per command line, as a shell would (fork,
// exec, wait), and the median wall time and peak RSS are reported, with the ratio of the
// call that loads LibTorch (an rl policy) to each. docs/benchmarks.md#start-up.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace schedsim {

struct StartupBenchOptions {
  std::string executable;  // the `schedsim` to start (the CLI passes its own)
  int runs = 10;           // starts per command line
  // The checkpoint of the LibTorch-loading call; empty = skip that call (a build without
  // the rl policy). The CLI passes the source tree's experiments/agents/default.pt.
  std::string agent;
  std::string work_dir;  // where the runs write their --out folders (removed after); "" = a fresh temp folder
};

struct StartupCase {
  std::string label;              // "--version", "run", "run rl"
  std::vector<std::string> args;  // after the executable; {OUT} stands for a fresh folder
  bool loads_libtorch = false;
};

struct StartupResult {
  std::string label;
  std::string command;  // as a shell line, for the docs
  bool loads_libtorch = false;
  int runs = 0;
  double median_wall_s = 0, min_wall_s = 0, max_wall_s = 0;
  double median_peak_rss_mib = 0, max_peak_rss_mib = 0;  // each start's own peak (wait4's ru_maxrss)
  double libtorch_ratio = 0;  // median wall of the LibTorch-loading call / this one's; 0 without it
};

// --version; run (the built-in default scenario, --quiet); and, when `agent` is given,
// run rl (one job of the default scenario under rl:AGENT: the call that loads LibTorch).
std::vector<StartupCase> startup_cases(const std::string& agent);

// Starts options.executable options.runs times for each case (stdout and stderr go to a
// file, not the terminal). Throws Error naming the command, its exit status and the
// first line it wrote to stderr when a start fails; InputError for runs < 1.
std::vector<StartupResult> run_startup_bench(const StartupBenchOptions& options);

nlohmann::ordered_json startup_bench_json(const StartupResult& r);
// One line of the CLI's output.
std::string startup_bench_line(const StartupResult& r);

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median_of(std::vector<double> values);

}  // namespace schedsim
