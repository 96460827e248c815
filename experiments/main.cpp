// The `schedsim` command line. Every command reads the same YAML scenarios and exits
// non-zero with one clear message on bad input, leaving no partial result files.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "experiments/bench.hpp"
#include "experiments/compare.hpp"
#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "experiments/trace_inspect.hpp"
#include "sim/error.hpp"
#include "traces/trace_reader.hpp"

using namespace schedsim;

namespace {

struct ScenarioArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::optional<std::uint64_t> seed;
  std::string out;
  bool quiet = false;
  bool check_invariants = false;
};

void add_scenario_args(CLI::App* cmd, ScenarioArgs& a, const std::string& default_out) {
  a.out = default_out;
  cmd->add_option("config", a.config, "scenario YAML file (default: the built-in default scenario)");
  cmd->add_option("--set", a.overrides, "override a config key, e.g. --set workload.synthetic.num_jobs=500 (repeatable)");
  cmd->add_option("--seed", a.seed, "random seed (overrides the config's seed)");
  cmd->add_option("--out", a.out, "output folder")->capture_default_str();
  cmd->add_flag("--quiet,-q", a.quiet, "no progress line and no table");
  cmd->add_flag("--check-invariants", a.check_invariants, "verify the kernel's invariants after every event (slow; for debugging)");
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "schedsim: warning: %s\n", w.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedsim: a fast, reproducible simulator for scheduling AI compute"};
  app.set_version_flag("--version", std::string("schedsim ") + SCHEDSIM_VERSION);
  app.require_subcommand(1);

  ScenarioArgs run_args;
  auto* run = app.add_subcommand("run", "run one scenario under its policy; writes OUT/results.json and OUT/jobs.csv");
  add_scenario_args(run, run_args, "results");

  ScenarioArgs cmp_args;
  std::vector<std::string> cmp_policies;
  auto* compare = app.add_subcommand("compare", "run one scenario under every registered policy and print a comparison table");
  add_scenario_args(compare, cmp_args, "results/compare");
  compare->add_option("--policies", cmp_policies, "policy names to compare, comma-separated (default: all registered)")->delimiter(',');
  compare->add_option("--policy", cmp_policies, "one policy to compare, a name or a YAML map such as '{name: fifo, placement: packed}' (repeatable)");

  auto* policies = app.add_subcommand("policies", "list the registered policies with their options");

  auto* trace = app.add_subcommand("trace", "work with trace files");
  trace->require_subcommand(1);
  std::string inspect_path, inspect_format = "auto";
  bool inspect_json = false;
  auto* inspect = trace->add_subcommand("inspect", "jobs, time span, GPU demand and durations of a trace");
  inspect->add_option("file", inspect_path, "trace file")->required();
  inspect->add_option("--format", inspect_format, "trace format: auto, schedsim, itp")->capture_default_str();
  inspect->add_flag("--json", inspect_json, "print JSON instead of text");
  auto* formats = trace->add_subcommand("formats", "list the trace formats");

  std::vector<std::string> bench_cases;
  BenchOptions bench_options;
  std::string bench_json_path;
  auto* bench = app.add_subcommand("bench", "measure simulation speed on fixed workloads (events/s, wall time, peak RSS)");
  bench->add_option("name", bench_cases, "benchmarks to run (default: kernel)");
  bench->add_option("--jobs", bench_options.jobs, "jobs per run")->capture_default_str();
  bench->add_option("--gpus", bench_options.gpus, "GPUs in the cluster (multiple of 8)")->capture_default_str();
  bench->add_option("--policies", bench_options.policies, "policies to run")->delimiter(',');
  bench->add_option("--json", bench_json_path, "also write the results as JSON to this file");

  auto* default_config = app.add_subcommand("default-config", "print the built-in default scenario (YAML)");

  CLI11_PARSE(app, argc, argv);

  try {
    const PolicyRegistry registry = builtin_policies();
    if (*run) {
      const ScenarioConfig scenario = load_scenario(run_args.config, run_args.overrides, run_args.seed, registry);
      const RunResult r = run_scenario(scenario, registry, RunOptions{run_args.out, !run_args.quiet, run_args.check_invariants});
      print_warnings(r.warnings);
      if (!run_args.quiet) {
        std::cout << summary_table(r);
        std::cout << "  results in " << run_args.out << "/results.json and jobs.csv\n";
      }
    } else if (*compare) {
      const ScenarioConfig scenario = load_scenario(cmp_args.config, cmp_args.overrides, cmp_args.seed, registry);
      const auto runs = compare_policies(scenario, registry, cmp_policies, RunOptions{cmp_args.out, !cmp_args.quiet, cmp_args.check_invariants});
      if (!runs.empty()) print_warnings(runs.front().warnings);
      if (!cmp_args.quiet) {
        std::cout << "scenario: " << (scenario.name.empty() ? scenario.source : scenario.name) << ", seed " << scenario.seed << ", "
                  << scenario.num_devices() << " GPUs\n\n";
        std::cout << comparison_table(runs, false);
        std::cout << "\nper-policy results in " << cmp_args.out << "/<policy>/, table in " << cmp_args.out << "/comparison.csv\n";
      }
    } else if (*policies) {
      for (const auto& p : registry.all()) {
        std::cout << p.name << "\n    " << p.description << '\n';
        for (const auto& o : p.options) std::cout << "    option " << o.name << " (default " << o.default_value << "): " << o.description << '\n';
      }
    } else if (*inspect) {
      const TraceInspection t = inspect_trace(inspect_path, inspect_format);
      if (inspect_json) std::cout << inspection_json(t).dump(2) << '\n';
      else std::cout << inspection_text(t);
    } else if (*formats) {
      for (const auto& f : trace_formats()) std::cout << f.name << "\n    " << f.description << '\n';
    } else if (*bench) {
      if (bench_cases.empty()) bench_cases = bench_names();
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const auto& name : bench_cases) {
        for (const auto& r : run_bench(name, bench_options, registry)) {
          std::printf("%-8s %-6s jobs=%llu gpus=%d  events=%llu  wall=%.3f s  %.2f M events/s  peak RSS %.0f MiB\n", r.name.c_str(),
                      r.policy.c_str(), static_cast<unsigned long long>(r.jobs), r.gpus, static_cast<unsigned long long>(r.events), r.wall_s,
                      r.events_per_s / 1e6, r.peak_rss_mib);
          std::fflush(stdout);
          all.push_back(bench_json(r));
        }
      }
      if (!bench_json_path.empty()) write_file_atomically(bench_json_path, all.dump(2) + "\n");
    } else if (*default_config) {
      std::cout << default_scenario_yaml();
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "schedsim: error: %s\n", e.what());
    return 1;
  } catch (const PolicyError& e) {
    std::fprintf(stderr, "schedsim: policy error: %s\n", e.what());
    return 1;
  } catch (const InvariantError& e) {
    std::fprintf(stderr, "schedsim: internal error (please report it): %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "schedsim: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
