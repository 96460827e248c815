// The `schedsim` command line. Every command reads the same YAML scenarios and exits
// non-zero with one clear message on bad input, leaving no partial result files.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "app/advise_command.hpp"
#include "app/plan_command.hpp"
#include "app/serve_command.hpp"
#include "app/bench.hpp"
#include "app/cli_errors.hpp"
#include "rl/env/env_bench.hpp"
#include "rl/env/scheduling_env.hpp"
#include "app/compare.hpp"
#include "app/completion.hpp"
#include "app/error_report.hpp"
#include "app/init_command.hpp"
#include "sim/interrupt.hpp"
#include "run/ledger.hpp"
#include "app/report.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "app/startup_bench.hpp"
#include "app/sweep.hpp"
#include "app/trace_inspect.hpp"
#include "base/error.hpp"
#include "traces/cluster_inventory.hpp"
#include "traces/trace_reader.hpp"
#ifdef SCHEDSIM_HAS_TORCH
// LibTorch is a plugin, loaded only by the commands that need it (rl/rl_plugin.hpp).
#include "rl/dist_launch.hpp"
#include "rl/rl_plugin.hpp"
#endif

using namespace schedsim;

namespace {

struct ScenarioArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::optional<std::uint64_t> seed;
  std::string out;
  bool quiet = false;
  bool check_invariants = false;
  bool timeline = false;
};

// Seeds are 0..2^63-1 (sim/config_node.hpp), checked on the text before CLI11 converts it
// (which would wrap -1 and 2^64 to 2^64-1, and read 010 as octal 8).
CLI::Validator seed_range() {
  return CLI::Validator([](std::string& text) { std::uint64_t seed = 0; return parse_seed(text, seed); }, "0..2^63-1", "SEED");
}

void add_scenario_args(CLI::App* cmd, ScenarioArgs& a, const std::string& default_out) {
  a.out = default_out;
  cmd->add_option("config", a.config, "scenario YAML file (default: the built-in default scenario)");
  cmd->add_option("--set", a.overrides, "override a config key, e.g. --set workload.synthetic.num_jobs=500 (repeatable)");
  cmd->add_option("--seed", a.seed, "random seed (overrides the config's seed)")->check(seed_range());
  cmd->add_option("--out", a.out, "output folder")->capture_default_str();
  cmd->add_flag("--quiet,-q", a.quiet, "no progress line and no table");
  cmd->add_flag("--timeline", a.timeline, "also write timeline.csv (queue length, busy devices over time) and allocations.csv (which job ran on which devices)");
  cmd->add_flag("--check-invariants", a.check_invariants, "verify the kernel's invariants after every event (slow; for debugging)");
}

// The data folder of `$SCHEDSIM_DATA/` paths (docs/config.md#data-folder), for the
// commands that load scenarios. It sets SCHEDSIM_DATA, so sweep workers see it too.
void add_data_dir_option(CLI::App* cmd, std::optional<std::string>& data_dir) {
  cmd->add_option("--data-dir", data_dir, "folder of the shared data sets that `$SCHEDSIM_DATA/...` paths in the scenario refer to (default: $SCHEDSIM_DATA, else ../shared/data beside the checkout)");
}

// Reader options shared by the trace subcommands.
struct TraceArgs {
  std::string path;
  std::string format = "auto";
  std::string on_bad_row = "error";
  std::string throughputs;
  std::string reference_device = "v100";
  std::string mapping;
  std::string job_table;

  TraceOptions options() const {
    TraceOptions o;
    o.on_bad_row = on_bad_row == "skip" ? BadRowMode::kSkip : BadRowMode::kError;
    o.throughputs_path = throughputs;
    o.reference_device = reference_device;
    if (!mapping.empty()) o.mapping = CsvMapping::load_file(mapping);
    o.job_table_path = job_table;
    return o;
  }
};

void add_trace_args(CLI::App* cmd, TraceArgs& a) {
  cmd->add_option("file", a.path, "trace file (plain or gzip)")->required();
  std::string names = "auto";
  for (const auto& n : trace_format_names()) names += ", " + n;
  cmd->add_option("--format", a.format, "trace format: " + names)->capture_default_str();
  cmd->add_option("--on-bad-row", a.on_bad_row, "error: stop at the first bad row; skip: skip bad rows and count them by reason")
      ->check(one_of({"error", "skip"}))
      ->capture_default_str();
  cmd->add_option("--throughputs", a.throughputs, "gavel: Gavel's simulation_throughputs.json");
  cmd->add_option("--reference-device", a.reference_device, "gavel: device type whose throughput sets durations")->capture_default_str();
  cmd->add_option("--mapping", a.mapping, "csv: YAML file with the column mapping");
  cmd->add_option("--job-table", a.job_table, "pai-tasks: pai_job_table file to join by job_name (adds user and the job's status)");
}

// Writes to `out_path`, or to stdout when it is empty.
void write_output(const std::string& out_path, const std::function<void(std::ostream&)>& write) {
  if (out_path.empty()) {
    write(std::cout);
    std::cout.flush();
  } else {
    write_streamed_file(out_path, write);
  }
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "schedsim: warning: %s\n", terminal_safe(w).c_str());
}

// Every policy name of `compare` is checked before the first run, so that a typo in the
// last one does not leave the first ones' results behind.
void check_policy_names(const PolicyRegistry& registry, const std::vector<std::string>& specs, const std::string& option) {
  for (const auto& spec : specs) {
    if (spec == "all") continue;
    const ConfigNode node = ConfigNode::load_string(spec, option);
    if (!node.is_scalar() && !(node.is_map() && node.has("name") && node.child("name").is_scalar())) continue;  // create() says what is wrong
    const std::string name = node.is_map() ? node.child("name").as_string() : node.as_string();
    if (!registry.knows(name)) throw InputError(option, registry.unknown_policy_message(name));
  }
}

// "schedsim: error: ..." and the hint line; returns the usage exit status.
int print_error(const UsageError& e) {
  const ErrorReport r = report_error(std::make_exception_ptr(e), "parsing the command line");
  std::fputs(r.text.c_str(), stderr);
  return r.status;
}

constexpr bool have_torch() {
#ifdef SCHEDSIM_HAS_TORCH
  return true;
#else
  return false;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedsim: a fast, reproducible simulator for scheduling AI compute"};
  app.set_version_flag("--version", std::string("schedsim ") + SCHEDSIM_VERSION);
  app.require_subcommand(1);

  ScenarioArgs run_args;
  auto* run = app.add_subcommand("run", "run one scenario under its policy; writes OUT/results.json and OUT/jobs.csv");
  std::optional<std::string> data_dir;
  add_scenario_args(run, run_args, "results");
  add_data_dir_option(run, data_dir);
  std::string snapshot_every, snapshot_path, resume_path;
  run->add_option("--snapshot-every", snapshot_every,
                  "write a snapshot of the whole simulation every PERIOD of simulated time (3600, 90s, 30m, 6h, 2d), at the first instant after each period");
  run->add_option("--snapshot", snapshot_path, "snapshot file (default: OUT/snapshot.bin)");
  run->add_option("--resume", resume_path, "continue the run from this snapshot (same config and options; --out the interrupted run's folder)");
  std::string snapshot_key_file;
  run->add_option("--snapshot-key-file", snapshot_key_file,
                  "MAC the snapshots (HMAC-SHA256) with the key in this file, and resume only a snapshot whose MAC verifies; default: $SCHEDSIM_SNAPSHOT_KEY, else unkeyed");
  std::string run_ledger_key_file;
  run->add_option("--ledger-key-file", run_ledger_key_file, "key the settlement ledger's chain (HMAC-SHA256) with the key in this file; default: $SCHEDSIM_LEDGER_KEY, else unkeyed");

  ScenarioArgs cmp_args;
  std::vector<std::string> cmp_policies, cmp_policy_maps;  // --policies, then --policy
  std::string cmp_baseline;
  auto* compare = app.add_subcommand("compare", "run one scenario under every registered policy and print a comparison table");
  add_scenario_args(compare, cmp_args, "results/compare");
  add_data_dir_option(compare, data_dir);
  compare->add_option("--policies", cmp_policies, "policy names to compare, comma-separated (default: all registered)")->delimiter(',');
  compare->add_option("--policy", cmp_policy_maps, "one policy to compare, a name or a YAML map such as '{name: fifo, placement: packed}' (repeatable; added after --policies)");
  compare->add_option("--baseline", cmp_baseline, "the policy (its label in the table) that the others are paired with (default: the first)");

  auto* policies = app.add_subcommand("policies", "list the registered policies with their options");

  auto* trace = app.add_subcommand("trace", "work with trace files");
  trace->require_subcommand(1);
  TraceArgs inspect_args;
  bool inspect_json = false;
  auto* inspect = trace->add_subcommand("inspect", "jobs, time span, GPU demand, durations, statuses and skipped rows of a trace");
  add_trace_args(inspect, inspect_args);
  inspect->add_flag("--json", inspect_json, "print JSON instead of text");

  TraceArgs convert_args;
  std::string convert_to, convert_out;
  auto* convert = trace->add_subcommand("convert", "rewrite a trace in schedsim's CSV format, sorted by submit time");
  add_trace_args(convert, convert_args);
  convert->add_option("--to", convert_to, "output format (schedsim)")->required()->check(one_of({"schedsim"}));
  convert->add_option("--out", convert_out, "output file (default: stdout)");

  TraceArgs sample_args;
  SampleOptions sample_options;
  std::string sample_out;
  auto* sample = trace->add_subcommand("sample", "a time window, a seeded subsample, compressed inter-arrival times or a shifted start of a trace");
  add_trace_args(sample, sample_args);
  sample->add_option("--from", sample_options.from_s, "keep jobs submitted at or after this time (s)");
  sample->add_option("--to", sample_options.to_s, "keep jobs submitted before this time (s)");
  sample->add_option("--fraction", sample_options.fraction, "keep each job with this probability")->capture_default_str();
  sample->add_option("--seed", sample_options.seed, "seed of the subsample")->capture_default_str()->check(seed_range());
  sample->add_option("--load-scale", sample_options.load_scale, "divide the gaps between submissions by this (2 = twice the load)")->capture_default_str();
  sample->add_option("--shift-to", sample_options.shift_to_s, "submit the first kept job at this time (s)");
  sample->add_option("--out", sample_out, "output file (default: stdout)");

  std::string inventory_path, inventory_format;
  auto* cluster_from = trace->add_subcommand("cluster-from", "print a cluster: YAML section from a machine inventory");
  cluster_from->add_option("file", inventory_path, "inventory file")->required();
  cluster_from->add_option("--format", inventory_format, "pai-machines or openb-nodes")->required()->check(one_of({"pai-machines", "openb-nodes"}));

  auto* formats = trace->add_subcommand("formats", "list the trace formats");

  std::vector<std::string> bench_cases;
  BenchOptions bench_options;
  std::string bench_json_path;
  auto* bench = app.add_subcommand("bench", "measure simulation speed on fixed workloads (events/s, wall time, peak RSS)");
  bench->add_option("name", bench_cases, "benchmarks to run: kernel, full, policies, trace, env, ppo, startup, physics, gavel, gavel-trace, las, serving, llm (default: all but physics, gavel, gavel-trace, las, serving and llm)");
  bench->add_option("--jobs", bench_options.jobs, "jobs per run (default: 1,000,000; policies: 100,000)")->check(whole_number(0, UINT64_MAX));
  bench->add_option("--gpus", bench_options.gpus, "GPUs in the cluster (multiple of 8)")->capture_default_str();
  bench->add_option("--policies", bench_options.policies, "policies to run")->delimiter(',');
  bench->add_option("--throughputs", bench_options.throughputs, "gavel: Gavel's simulation_throughputs.json")->capture_default_str();
  bench->add_option("--json", bench_json_path, "also write the results as JSON to this file");
  add_data_dir_option(bench, data_dir);  // gavel-trace reads Gavel's trace and matrix from the data folder
  rl::EnvBenchOptions env_bench_options;
  std::string env_bench_config;
  bench->add_option("--env-config", env_bench_config, "env: the scenario (default: the built-in rl_default.yaml)");
  bench->add_option("--env-steps", env_bench_options.steps, "env: vector steps to take")->capture_default_str()->check(whole_number(0, UINT64_MAX));
  bench->add_option("--env-count", env_bench_options.num_envs, "env: environments in the vector")->capture_default_str();
  bench->add_option("--threads", env_bench_options.threads, "env: threads stepping them")->capture_default_str();
  StartupBenchOptions startup_options;
  std::string startup_agent;
  bench->add_option("--startup-runs", startup_options.runs, "startup: starts of the CLI per command line")->capture_default_str();
  bench->add_option("--startup-exe", startup_options.executable, "startup: the schedsim to start (default: this one), e.g. another build's for a before/after");
  bench->add_option("--startup-agent", startup_agent, "startup: the checkpoint of the LibTorch-loading call (default: the source tree's experiments/agents/default.pt)");
#ifdef SCHEDSIM_HAS_TORCH
  rl::PpoBenchOptions ppo_bench_options;
  bench->add_option("--ppo-steps", ppo_bench_options.steps, "ppo: agent steps to train for")->capture_default_str();
  bench->add_option("--ppo-threads", ppo_bench_options.threads, "ppo: LibTorch intra-op threads")->capture_default_str();
  bench->add_option("--ppo-epochs", ppo_bench_options.epochs, "ppo: PPO passes over each batch")->capture_default_str();
  bench->add_option("--ppo-minibatch", ppo_bench_options.minibatch, "ppo: samples per gradient step")->capture_default_str();
  bench->add_option("--ppo-env-threads", ppo_bench_options.env_threads, "ppo: threads stepping the environments")->capture_default_str();
#endif

  std::string sweep_grid;
  SweepOptions sweep_options;
  auto* sweep = app.add_subcommand("sweep", "run a grid of parameter values x policies x seeds on worker processes (resumable); see docs/experiments.md");
  sweep->add_option("grid", sweep_grid, "sweep grid YAML file")->required();
  sweep->add_option("--out", sweep_options.out_dir, "output folder")->capture_default_str();
  add_data_dir_option(sweep, data_dir);
  sweep->add_option("--jobs,-j", sweep_options.workers, "runs at a time (default: number of cores; with --address: the cluster's CPUs)")->check(whole_number(0, INT_MAX, "NONNEGATIVE"));
  sweep->add_option("--backend", sweep_options.backend, "local: worker processes here; ray: one Ray task per run (pip install 'schedsim[ray]')")
      ->capture_default_str()
      ->check(one_of({"local", "ray"}));
  sweep->add_option("--address", sweep_options.ray_address, "with --backend ray: the address of a running Ray cluster (default: start a local one)");
  sweep->add_option("--shard", sweep_options.shard, "I/N: run only the runs at positions I, I+N, I+2N... of the grid (e.g. one Slurm array task each)");
  bool sweep_quiet = false;
  sweep->add_flag("--quiet,-q", sweep_quiet, "no progress lines on stderr (the last line, on stdout, stays)");

  std::string report_dir, report_out;
  auto* report = app.add_subcommand("report", "draw PNG figures and report.md for a run, compare or sweep folder (Python: matplotlib, pandas)");
  report->add_option("dir", report_dir, "results folder")->required();
  report->add_option("--out", report_out, "output folder (default: DIR/report)");
  ReportSelection report_selection;
  report->add_option("--policies", report_selection.policies, "only these policies' runs, in this order (comma-separated labels, e.g. fifo,sjf,gavel)");
  report->add_option("--highlight", report_selection.highlight, "draw these policies bold and the others faded (comma-separated labels)");

  auto* default_config = app.add_subcommand("default-config", "print the built-in default scenario (YAML)");

  ScenarioArgs train_args;
  bool train_resume = false;
  auto* train = app.add_subcommand("train", "train a learned scheduler (the scenario's train: map) on the scenario's RL environment");
  add_scenario_args(train, train_args, "results/train");
  add_data_dir_option(train, data_dir);
  train->add_flag("--resume", train_resume, "continue from OUT/checkpoint.pt");
  int train_nproc = 1;
  train->add_option("--nproc", train_nproc, "train with N local processes that all-reduce gradients (train.num_envs divisible by N)")
      ->check(whole_number(1, 1024, "INT in [1 - 1024]"));

  // issue 25: train S seeds per setting on training windows, evaluate on test windows
  // against the same-information heuristics (rl/rl_bench.hpp).
  std::string rl_bench_config, rl_bench_out = "results/rl_bench", rl_bench_train_one;
  bool rl_bench_quiet = false;
  int rl_bench_jobs = 0;
  auto* rl_bench = app.add_subcommand("rl-bench", "benchmark learned schedulers: train several seeds, evaluate on held-out test windows against every heuristic of the same information level");
  rl_bench->add_option("config", rl_bench_config, "the benchmark file (e.g. experiments/configs/rl_bench/tiny.yaml)")->required();
  rl_bench->add_option("--out", rl_bench_out, "output folder")->capture_default_str();
  rl_bench->add_option("--jobs,-j", rl_bench_jobs, "trainings at a time, as child processes (default: the benchmark file's jobs, else 1)")
      ->check(whole_number(1, 1024, "INT in [1 - 1024]"));
  rl_bench->add_flag("-q,--quiet", rl_bench_quiet, "no progress on stderr");
  // Hidden (no group): what each child process of --jobs N runs.
  rl_bench->add_option("--train-one", rl_bench_train_one, "train only SETTING/SEED into OUT/SETTING/seed_SEED/")->group("");
  add_data_dir_option(rl_bench, data_dir);

  ScenarioArgs eval_args;
  std::string eval_policy;
  auto* eval = app.add_subcommand("eval", "run one scenario under a given policy, e.g. a trained agent (--policy rl:PATH)");
  add_scenario_args(eval, eval_args, "results/eval");
  add_data_dir_option(eval, data_dir);
  eval->add_option("--policy", eval_policy, "the policy: rl:CHECKPOINT, a registered name, or a YAML map")->required();

  std::string ledger_path;
  auto* ledger = app.add_subcommand("ledger", "work with settlement ledgers (a run's ledger.csv with a market: map)");
  ledger->require_subcommand(1);
  auto* ledger_verify = ledger->add_subcommand("verify", "recompute a ledger's hash chain: OK with its row count and totals, or the first edited row");
  ledger_verify->add_option("file", ledger_path, "the ledger.csv")->required();
  std::string verify_key_file;
  ledger_verify->add_option("--key-file", verify_key_file, "the key of a keyed ledger (default: $SCHEDSIM_LEDGER_KEY)");
  // The ledger key: from a file, else from the environment (docs/market.md#settlement-ledger).
  const auto secret_key = [](const std::string& file, const char* kind, const char* env_name) -> std::optional<std::string> {
    if (!file.empty()) return read_key_file(file, kind);
    const char* env = std::getenv(env_name);
    if (env && *env) return std::string(env);
    return std::nullopt;
  };
  const auto ledger_key = [&](const std::string& file) { return secret_key(file, "ledger", "SCHEDSIM_LEDGER_KEY"); };

  AdviseCliOptions advise_options;
  auto* advise_cmd = app.add_subcommand("advise", "rank plans (region x device type x count x start x offer kind, and moves between regions) for one training job; see docs/market.md");
  advise_cmd->add_option("job", advise_options.job, "job YAML file (scenario, job, search)")->required();
  advise_cmd->add_option("--objective", advise_options.objective, "rank by cost, finish or emissions")->capture_default_str()->check(one_of({"cost", "finish", "emissions"}));
  advise_cmd->add_option("--top", advise_options.top, "rows of the table (0 = all)")->capture_default_str()->check(whole_number(0, SIZE_MAX));
  advise_cmd->add_option("--out", advise_options.out, "output folder: plans.csv (every feasible plan, with a pareto column)")->capture_default_str();
  advise_cmd->add_flag("--plot", advise_options.plot, "also draw the Pareto front (cost vs finish, colored by emissions) to OUT/pareto.svg");
  advise_cmd->add_flag("--quiet,-q", advise_options.quiet, "no table");
  add_data_dir_option(advise_cmd, data_dir);

  // Issue 26: the parallelism planner (docs/parallelism.md).
  PlanCliOptions plan_options;
  auto* plan_cmd = app.add_subcommand("plan", "the fastest parallelism plan (TP, PP, DP, EP, ZeRO, recomputation) that fits, for an LLM on N devices; see docs/parallelism.md");
  plan_cmd->add_option("model", plan_options.model, "catalogued model (LLaMA-2-7B/13B/70B, LLaMA-3-8B/70B/405B, GPT-3-175B, Mixtral-8x7B) or a model YAML file (docs/parallelism.md)")->required();
  plan_cmd->add_option("--device", plan_options.device, "device type (accelerator catalogue name)")->capture_default_str();
  plan_cmd->add_option("--devices", plan_options.devices, "device counts, one row each (e.g. 8,64,512)")->required()->delimiter(',')->check(CLI::Range(1, 1 << 24));
  plan_cmd->add_option("--batch", plan_options.global_batch, "global batch in sequences (default 1024)")->check(CLI::Range(1, 1 << 30));
  plan_cmd->add_option("--seq", plan_options.seq_length, "sequence length (default: the model's)")->check(CLI::Range(1, 1 << 24));
  plan_cmd->add_option("--nic-gbps", plan_options.nic_gbps, "network bandwidth per NIC (one NIC per device), Gb/s")->capture_default_str()->check(CLI::PositiveNumber);
  plan_cmd->add_option("--devices-per-node", plan_options.devices_per_node, "devices per node")->capture_default_str()->check(CLI::Range(1, 1024));
  plan_cmd->add_option("--nodes-per-nvlink-domain", plan_options.nodes_per_nvlink_domain, "nodes joined by one NVLink fabric (9: an NVL72 rack of 8-GPU nodes)")->capture_default_str()->check(CLI::Range(1, 1024));

  // Issue 26: request-level LLM serving (docs/serving.md#schedsim-serve).
  ServeCliOptions serve_options;
  auto* serve_cmd = app.add_subcommand("serve", "serve a request stream (Azure LLM trace or synthetic) with replicas of one LLM deployment: TTFT, TPOT, SLO attainment; see docs/serving.md");
  serve_cmd->add_option("config", serve_options.config, "serve config YAML (requests, deployment, replicas, slo; docs/config.md#schedsim-serve)")->required();
  serve_cmd->add_option("--out", serve_options.out, "output folder: requests.csv and results.json")->capture_default_str();
  serve_cmd->add_flag("--quiet,-q", serve_options.quiet, "no table");
  add_data_dir_option(serve_cmd, data_dir);

  std::string init_dir = "scenarios", init_data_dir = "../shared/data";
  auto* init = app.add_subcommand("init", "write commented starter scenarios (synthetic, a real trace, heterogeneous with physics, energy and carbon) and a sweep grid");
  init->add_option("dir", init_dir, "folder to write them to (created if needed; existing files are never overwritten)")->capture_default_str();
  init->add_option("--data-dir", init_data_dir, "the shared data folder (relative to the current folder), which trace.yaml reads from")->capture_default_str();

  std::string completion_shell;
  auto* completion = app.add_subcommand("completion", "print a shell completion script for bash or zsh, generated from these commands and options (install: README.md)");
  completion->add_option("shell", completion_shell, "bash or zsh")->required()->check(one_of({"bash", "zsh"}));

  // One or two examples at the end of every subcommand's --help (tests/cli/help_examples.sh).
  const auto examples = [](CLI::App* cmd, const std::string& lines) { cmd->footer("Examples:\n" + lines); };
  examples(run, "  schedsim run experiments/configs/default.yaml --out results/run\n"
                "  schedsim run scenarios/synthetic.yaml --set workload.synthetic.num_jobs=2000 --seed 2 --timeline");
  examples(compare, "  schedsim compare experiments/configs/default.yaml --policies fifo,sjf,las --out results/compare\n"
                    "  schedsim compare scenarios/heterogeneous.yaml --policy fifo --policy '{name: fifo, placement: fastest_type}'");
  examples(policies, "  schedsim policies");
  examples(trace, "  schedsim trace inspect ../shared/data/itp/cluster05.csv --format itp\n  schedsim trace formats");
  examples(inspect, "  schedsim trace inspect ../shared/data/itp/cluster05.csv --format itp\n"
                    "  schedsim trace inspect jobs.csv.gz --on-bad-row skip --json");
  examples(convert, "  schedsim trace convert ../shared/data/itp/cluster05.csv --format itp --to schedsim --out cluster05.csv");
  examples(sample, "  schedsim trace sample trace.csv --from 0 --to 604800 --out week1.csv\n"
                   "  schedsim trace sample trace.csv --fraction 0.1 --seed 3 --load-scale 2 --out denser.csv");
  examples(cluster_from, "  schedsim trace cluster-from machines.csv --format pai-machines");
  examples(formats, "  schedsim trace formats");
  examples(bench, "  schedsim bench kernel --jobs 100000\n  schedsim bench policies --policies fifo,sjf --json bench.json");
  examples(sweep, "  schedsim sweep scenarios/sweep.yaml --out results/sweep --jobs 2\n"
                  "  schedsim sweep grid.yaml --out results/sweep --shard 0/4");
  examples(report, "  schedsim report results/compare\n  schedsim report results/sweep --out figures");
  examples(default_config, "  schedsim default-config > my_scenario.yaml");
  examples(train, "  schedsim train experiments/configs/rl_train.yaml --out results/train\n"
                  "  schedsim train experiments/configs/rl_train.yaml --out results/train --resume");
  examples(rl_bench, "  schedsim rl-bench experiments/configs/rl_bench/tiny.yaml --out results/rl_bench_tiny\n"
                     "  schedsim rl-bench experiments/configs/rl_bench/itp.yaml --out results/rl_bench_itp --jobs 4");
  examples(eval, "  schedsim eval experiments/configs/rl_default.yaml --policy rl:results/train/checkpoint.pt");
  examples(ledger, "  schedsim ledger verify results/run/ledger.csv");
  examples(ledger_verify, "  schedsim ledger verify results/run/ledger.csv --key-file ledger.key");
  examples(advise_cmd, "  schedsim advise experiments/configs/advise/advise_512gpu_2weeks.yaml --objective cost --top 10 --plot");
  examples(serve_cmd, "  schedsim serve experiments/configs/serve/serve_azure_conv.yaml --out results/serve");
  examples(plan_cmd, "  schedsim plan LLaMA-2-70B --device H100 --devices 64,128,256\n"
                     "  schedsim plan LLaMA-2-7B --device A100-80GB --devices 8 --batch 512");
  examples(completion, "  source <(schedsim completion bash)\n  schedsim completion zsh > ~/.zsh/completions/_schedsim");
  examples(init, "  schedsim init\n  schedsim init my-study --data-dir /data/shared");

  reject_leading_zeros(app);
  // Command-line errors in the house style, all with exit status 2 (docs/errors.md).
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    // Only these may be given more than once; CLI11 would keep the last of any other.
    check_repeated_options(app, args, {"--set", "compare --policy"});
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return print_error(usage_error(app, e, args));
  } catch (const UsageError& e) {
    return print_error(e);
  }

  // What the command is doing, for the messages of errors that do not say it themselves
  // (out of memory, a file-system error).
  std::string phase = "starting";
  try {
    // An empty --out (an unset shell variable in --out "$OUT") would write nothing, or to
    // stdout where a file was meant: refused for every command (docs/reliability.md).
    std::function<void(const CLI::App&)> reject_empty_out = [&](const CLI::App& cmd) {
      for (const CLI::App* sub : cmd.get_subcommands()) {
        const CLI::Option* out = sub->get_option_no_throw("--out");
        if (out && out->count() > 0 && (out->results().empty() || out->results().front().empty())) check_output_path("", "--out");
        reject_empty_out(*sub);
      }
    };
    reject_empty_out(app);
    if (data_dir) {
      if (data_dir->empty()) throw InputError("--data-dir", "expected a folder, got an empty string");
      ::setenv("SCHEDSIM_DATA", data_dir->c_str(), 1);
    }
    PolicyRegistry registry = builtin_policies();
#ifdef SCHEDSIM_HAS_TORCH
    std::error_code no_proc;  // no /proc: only $SCHEDSIM_RL_PLUGIN is tried
    const auto rl_plugin = std::make_shared<rl::RlPlugin>(
        rl::rl_plugin_search_paths(std::filesystem::read_symlink("/proc/self/exe", no_proc).string(), std::getenv(rl::kRlPluginEnv)));
    rl::register_rl_policy_plugin(registry, rl_plugin);
#endif
    if ((*train || *eval || *rl_bench) && !have_torch()) {
      throw InputError(*train ? "schedsim train" : *rl_bench ? "schedsim rl-bench" : "schedsim eval",
                       "this build has no LibTorch (configured with SCHEDSIM_WITH_TORCH=OFF or LibTorch not found); "
                       "install libtorch-dev and rebuild to train or evaluate learned schedulers");
    }
    // Ctrl-C / SIGTERM stop a simulation at the next event and keep what is done
    // (docs/reliability.md); other commands keep the default (immediate) behaviour.
    std::optional<InterruptGuard> interrupt_guard;
    if (*run || *compare || *eval) interrupt_guard.emplace();
    if (*run) {
      phase = "loading the scenario";
      const ScenarioConfig scenario = load_scenario(run_args.config, run_args.overrides, run_args.seed, registry);
      rl::EnvConfig::from_scenario(scenario);  // the env: map is checked (strictly) even where it is not used
      RunOptions options{run_args.out, !run_args.quiet, run_args.check_invariants, run_args.timeline};
      if (!snapshot_every.empty()) options.snapshot.every = parse_snapshot_period(snapshot_every, "--snapshot-every");
      if (!snapshot_path.empty() && snapshot_every.empty())
        throw UsageError("--snapshot", "applies only with --snapshot-every", "run 'schedsim run --help' for the options");
      options.snapshot.path = snapshot_path;
      options.snapshot.resume_from = resume_path;
      if (!snapshot_key_file.empty() && !options.snapshot.enabled())
        throw UsageError("--snapshot-key-file", "applies only with --snapshot-every or --resume", "run 'schedsim run --help' for the options");
      if (options.snapshot.enabled()) options.snapshot.key = secret_key(snapshot_key_file, "snapshot", "SCHEDSIM_SNAPSHOT_KEY");
      phase = "running the simulation";
      options.ledger_key = ledger_key(run_ledger_key_file);
      const RunResult r = run_scenario(scenario, registry, options);
      print_warnings(r.warnings);
      if (!run_args.quiet) {
        std::cout << summary_table(r);
        std::cout << "  results in " << run_args.out << "/results.json and jobs.csv\n";
      }
    } else if (*compare) {
      phase = "loading the scenario";
      const ScenarioConfig scenario = load_scenario(cmp_args.config, cmp_args.overrides, cmp_args.seed, registry);
      rl::EnvConfig::from_scenario(scenario);  // the env: map is checked (strictly) even where it is not used
      // Both options may be given: the --policies list first, then each --policy.
      check_policy_names(registry, cmp_policies, "--policies");
      check_policy_names(registry, cmp_policy_maps, "--policy");
      cmp_policies.insert(cmp_policies.end(), cmp_policy_maps.begin(), cmp_policy_maps.end());
      phase = "running the simulations";
      const auto runs = compare_policies(scenario, registry, cmp_policies, RunOptions{cmp_args.out, !cmp_args.quiet, cmp_args.check_invariants, cmp_args.timeline}, cmp_baseline);
      if (!runs.empty()) print_warnings(runs.front().warnings);
      if (!cmp_args.quiet) {
        std::cout << "scenario: " << terminal_safe(scenario.name.empty() ? scenario.source : scenario.name) << ", seed " << scenario.seed << ", "
                  << scenario.num_devices() << " GPUs\n";
        std::cout << comparison_header(runs, scenario.num_devices()) << '\n';
        std::cout << comparison_table(runs, false);
        std::vector<std::string> labels;
        for (const auto& r : runs) labels.push_back(r.policy_name);
        if (runs.size() > 1) std::cout << '\n' << paired_table(runs, baseline_index(labels, cmp_baseline), false);
        std::cout << "\nper-policy results in " << cmp_args.out << "/<policy>/, table in " << cmp_args.out << "/comparison.csv\n";
      }
    } else if (*policies) {
      for (const auto& p : registry.all()) {
        std::cout << p.name << "\n    " << p.description << '\n';
        for (const auto& o : p.options) std::cout << "    option " << o.name << " (default " << o.default_value << "): " << o.description << '\n';
      }
    } else if (*inspect) {
      phase = "reading the trace";
      const TraceInspection t = inspect_trace(inspect_args.path, inspect_args.format, inspect_args.options());
      if (inspect_json) std::cout << inspection_json(t).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
      else std::cout << inspection_text(t);
    } else if (*convert) {
      phase = "converting the trace";
      const TraceOptions options = convert_args.options();
      write_output(convert_out, [&](std::ostream& out) { convert_trace(convert_args.path, convert_args.format, options, out); });
    } else if (*sample) {
      phase = "sampling the trace";
      const TraceOptions options = sample_args.options();
      check_sample_options(sample_options);
      write_output(sample_out, [&](std::ostream& out) { sample_trace(sample_args.path, sample_args.format, options, sample_options, out); });
    } else if (*cluster_from) {
      std::cout << inventory_yaml(read_inventory(inventory_path, inventory_format));
    } else if (*formats) {
      for (const auto& f : trace_formats()) std::cout << f.name << "\n    " << f.description << '\n';
    } else if (*bench) {
      phase = "running the benchmarks";
      if (bench_cases.empty()) bench_cases = bench_suite();
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const auto& name : bench_cases) {
        if (name == "env") {  // the RL environment: agent steps per second
          const ScenarioConfig scenario = rl::load_rl_scenario(env_bench_config, {}, registry);
          const auto j = run_in_child([&] { return rl::env_bench_json(rl::run_env_bench(scenario, env_bench_options)); });
          std::printf("env      envs=%d threads=%d  env steps=%llu  episodes=%llu (%.0f steps each)  wall=%.3f s  %.0f env steps/s  peak RSS %.0f MiB\n",
                      j["num_envs"].get<int>(), j["threads"].get<int>(), j["env_steps"].get<unsigned long long>(),
                      j["episodes"].get<unsigned long long>(), j["mean_episode_steps"].get<double>(), j["wall_s"].get<double>(),
                      j["env_steps_per_s"].get<double>(), j["peak_rss_mib"].get<double>());
          std::fflush(stdout);
          all.push_back(j);
          continue;
        }
        if (name == "startup") {  // what a CLI call costs before it does anything
          if (startup_options.executable.empty()) startup_options.executable = std::filesystem::read_symlink("/proc/self/exe").string();
          startup_options.agent = startup_agent;
          if (startup_agent.empty() && registry.find("rl") && std::filesystem::is_regular_file(SCHEDSIM_SOURCE_AGENT)) startup_options.agent = SCHEDSIM_SOURCE_AGENT;
          for (const auto& r : run_startup_bench(startup_options)) {
            std::printf("%s\n", startup_bench_line(r).c_str());
            std::fflush(stdout);
            all.push_back(startup_bench_json(r));
          }
          if (startup_options.agent.empty())
            std::printf("startup  run rl     skipped: %s\n", registry.find("rl") ? "no agent (--startup-agent)" : "this build has no LibTorch");
          continue;
        }
        if (name == "ppo") {  // training throughput, rollouts and updates together
#ifdef SCHEDSIM_HAS_TORCH
          const ScenarioConfig scenario = rl::load_rl_scenario(env_bench_config, {}, registry);
          const rl::RlPluginApi& torch = rl_plugin->api("schedsim bench ppo", "this benchmark");
          const auto j = run_in_child([&] { return torch.ppo_bench(scenario, ppo_bench_options); });
          std::printf("ppo      envs=%d threads=%d+%d  env steps=%lld  updates=%lld  wall=%.3f s  %.0f env steps/s  peak RSS %.0f MiB\n",
                      j["num_envs"].get<int>(), j["threads"].get<int>(), j["env_threads"].get<int>(), j["env_steps"].get<long long>(), j["updates"].get<long long>(),
                      j["wall_s"].get<double>(), j["env_steps_per_s"].get<double>(), j["peak_rss_mib"].get<double>());
          std::printf("         cpu=%.3f s  of which env %.3f s  rollout policy %.3f s  learn %.3f s\n", j["cpu_s"].get<double>(),
                      j["env_s"].get<double>(), j["policy_s"].get<double>(), j["learn_s"].get<double>());
          std::fflush(stdout);
          all.push_back(j);
#else
          std::printf("ppo      skipped: this build has no LibTorch\n");
#endif
          continue;
        }
        for (const auto& r : run_bench(name, bench_options, registry)) {
          std::printf("%s\n", bench_line(r).c_str());
          std::fflush(stdout);
          all.push_back(bench_json(r));
        }
      }
      if (!bench_json_path.empty()) write_file_atomically(bench_json_path, all.dump(2) + "\n");
    } else if (*eval) {
      phase = "evaluating the policy";
      const ScenarioConfig scenario = load_scenario(eval_args.config, eval_args.overrides, eval_args.seed, registry);
      const ConfigNode policy = ConfigNode::load_string(eval_policy, "--policy");
      const RunResult r = run_scenario(scenario, registry, RunOptions{eval_args.out, !eval_args.quiet, eval_args.check_invariants}, &policy.yaml());
      print_warnings(r.warnings);
      if (!eval_args.quiet) {
        std::cout << summary_table(r);
        std::cout << "  results in " << eval_args.out << "/results.json and jobs.csv\n";
      }
    } else if (*train) {
#ifdef SCHEDSIM_HAS_TORCH
      const ScenarioConfig scenario = load_scenario(train_args.config, train_args.overrides, train_args.seed, registry);
      if (!scenario.train_yaml.IsDefined() || scenario.train_yaml.IsNull())
        throw InputError(scenario.source, "the scenario has no train: map (see docs/config.md#train); e.g. experiments/configs/rl_train.yaml");
      const rl::DistConfig dist = rl::dist_config_from_environment();
      if (train_nproc > 1 && !dist.from_environment) {
        // The launcher: the ranks are copies of this command (which then find RANK set).
        rl::launch_local_ranks(train_nproc, std::vector<std::string>(argv, argv + argc));
        return exit_status::kSuccess;
      }
      if (train_nproc > 1 && dist.world_size != train_nproc)
        throw InputError("--nproc " + std::to_string(train_nproc),
                         "conflicts with WORLD_SIZE=" + std::to_string(dist.world_size) + " in the environment (drop --nproc under torchrun or srun)");
      const rl::TrainOutcome o =
          rl_plugin->api("schedsim train", "training").train_agent(scenario, rl::TrainOptions{train_args.out, train_resume, !train_args.quiet, dist});
      if (dist.rank != 0) return exit_status::kSuccess;  // rank 0 draws and reports
      // The PNG learning curve is drawn by report.py (matplotlib); without Python the CSV,
      // JSONL and SVG curves are still there, so a failure here is only a warning.
      bool png = false;
      try {
        png = run_report(train_args.out, train_args.out, std::filesystem::read_symlink("/proc/self/exe").string()) == 0;
      } catch (const InputError& e) {
        std::fprintf(stderr, "schedsim train: warning: no learning_curve.png: %s\n", e.what());
      }
      if (!png) std::fprintf(stderr, "schedsim train: warning: learning_curve.png not drawn (needs python3 with matplotlib and pandas)\n");
      if (!train_args.quiet) {
        std::printf("trained %lld steps in %lld updates (%.1f s)", static_cast<long long>(o.steps), static_cast<long long>(o.updates), o.wall_s);
        // A trace workload is the same jobs whatever the seed: its evaluation is not held out.
        const char* eval_kind = o.eval_held_out ? "held-out" : "training-trace (not held out)";
        if (o.eval_mean_jct_s) std::printf(", %s mean JCT %.4f h", eval_kind, *o.eval_mean_jct_s / 3600);
        if (o.best_eval_mean_jct_s) std::printf("; best %.4f h at step %lld", *o.best_eval_mean_jct_s / 3600, static_cast<long long>(o.best_eval_step));
        if (o.best_heuristic_mean_jct_s && o.best_eval_mean_jct_s)
          std::printf("; best same-information heuristic %s %.4f h (best/heuristic %.3f)", o.best_heuristic.c_str(), *o.best_heuristic_mean_jct_s / 3600,
                      *o.best_eval_mean_jct_s / *o.best_heuristic_mean_jct_s);
        if (!o.early_stop.empty()) std::printf("; %s", o.early_stop.c_str());
        std::printf("\n  checkpoint %s/checkpoint.pt (last), %s/best.pt (best evaluation), TorchScript %s/policy.ts, learning curve %s/learning_curve.{csv,jsonl,svg%s}\n",
                    train_args.out.c_str(), train_args.out.c_str(), train_args.out.c_str(), train_args.out.c_str(), png ? ",png" : "");
      }
#endif
    } else if (*rl_bench) {
#ifdef SCHEDSIM_HAS_TORCH
      rl_plugin->api("schedsim rl-bench", "the benchmark").rl_bench(rl::RlBenchRequest{rl_bench_config, rl_bench_out, rl_bench_quiet, rl_bench_jobs, rl_bench_train_one});
#endif
    } else if (*sweep) {
      phase = "running the sweep";
      sweep_options.executable = std::filesystem::read_symlink("/proc/self/exe").string();
      sweep_options.progress = !sweep_quiet;
      const SweepOutcome o = run_sweep(SweepGrid::load_file(sweep_grid), registry, sweep_options);
      std::cout << "sweep: " << o.runs_total << " runs (" << o.runs_executed << " run now, " << o.runs_skipped << " already done";
      if (!sweep_options.shard.empty()) std::cout << ", " << o.runs_other_shards << " in other shards";
      if (o.tables_written) std::cout << "); tables in " << sweep_options.out_dir << "/sweep.csv and summary.csv\n";
      else std::cout << "); other shards' runs are not all done yet: tables not written (the last shard, or a sweep without --shard, writes them)\n";
    } else if (*report) {
      return run_report(report_dir, report_out, std::filesystem::read_symlink("/proc/self/exe").string(), report_selection);
    } else if (*ledger_verify) {
      const LedgerCheck c = verify_ledger_file(ledger_path, ledger_key(verify_key_file));
      if (!c.ok) {
        std::fprintf(stderr, "schedsim: ledger verification failed: %s\n", terminal_safe(c.problem).c_str());
        return exit_status::kInputError;
      }
      const LedgerTotals& t = c.totals;
      std::printf("OK: %zu rows; device_hours=%.17g energy_kwh=%.17g electricity_usd=%.17g compute_usd=%.17g co2_kg=%.17g\n", t.rows, t.device_h,
                  t.energy_kwh, t.electricity_usd, t.compute_usd, t.co2_kg);
    } else if (*advise_cmd) {
      phase = "ranking the plans";
      run_advise_cli(advise_options, std::cout);
    } else if (*serve_cmd) {
      phase = "serving the requests";
      run_serve_cli(serve_options, std::cout);
    } else if (*plan_cmd) {
      phase = "planning";
      run_plan_cli(plan_options, std::cout);
    } else if (*init) {
      phase = "writing the starter files";
      const InitOutcome o = write_starter_files(init_dir, init_data_dir);
      for (const auto& path : o.written) std::cout << "wrote " << path << '\n';
      std::cout << "next: " << o.next_command << "\n  (each file says what it is for and how to run it; keys: docs/config.md)\n";
    } else if (*completion) {
      std::cout << completion_script(app, completion_shell);
    } else if (*default_config) {
      std::cout << default_scenario_yaml();
    }
  } catch (...) {
    const ErrorReport r = report_error(std::current_exception(), phase);
    std::fputs(r.text.c_str(), stderr);
    return r.status;
  }
  return exit_status::kSuccess;
}
