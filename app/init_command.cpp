#include "app/init_command.hpp"

#include <filesystem>
#include <system_error>

#include "run/runner.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace fs = std::filesystem;

namespace {

// Wording of the comments follows docs/config.md; "default" is the value used when the
// key is left out. Times are seconds throughout.
constexpr const char* kSynthetic = R"(# A generated (synthetic) workload on a small cluster of one device type: the quickest
# way to try policies. Every key and its default: docs/config.md. Times are in seconds.
#   schedsim run synthetic.yaml --out results/synthetic
#   schedsim compare synthetic.yaml --policies fifo,sjf,las --out results/compare
name: synthetic                # a label, shown in the compare header; default: none
seed: 1                        # seeds every random stream, 0..2^63-1; default 1 (--seed overrides it)
cluster:                       # the devices; required
  nodes:                       # node groups (at least one); devices are numbered in this order
    - count: 4                 # identical nodes in the group, positive integer; default 1
      type: A100-80GB          # device type; only a label without physics:; required
      devices_per_node: 8      # GPUs per node, positive integer; required
workload:                      # the jobs: exactly one of synthetic or trace; required
  synthetic:                   # a generated workload (docs/config.md#workloadsynthetic)
    num_jobs: 500              # jobs to generate; default 1000
    arrival:                   # when jobs are submitted
      process: poisson         # poisson (exponential gaps), fixed (constant gap) or bursty; default poisson
      mean_interarrival_s: 300 # mean gap between submissions, s; default 60 (about 85% load here)
    # run time at full speed, s: a number or {dist: ...} (docs/config.md#distributions);
    # default {dist: exponential, mean: 3600}
    duration_s: {dist: lognormal, median: 1800, sigma: 1.2}
    gpus: {1: 0.6, 2: 0.2, 4: 0.1, 8: 0.1}  # GPUs per job: a count, or {count: probability} summing to 1; default 1
    estimate_error_sigma: 0.5  # runtime estimates = duration x exp(N(0, sigma)), used by sjf and co.; default unset (no estimates)
  oversized: error             # a job larger than the cluster: error stops, drop skips and counts it; default error
# What schedulers may know about run times (docs/config.md#information): oracle (the true
# durations), estimates (the estimates above, minus the service already received) or
# none; default estimates when the workload has them, else none.
information: estimates
policy: fifo                   # a name or {name: ..., option: value}; `schedsim policies` lists them; default fifo
)";

constexpr const char* kTrace = R"(# A real trace: Microsoft's ITP cluster05 (3,629 jobs over about 59 days, MIT licence),
# replayed on 16 GPUs. Every key and its default: docs/config.md and docs/traces.md.
#   schedsim run trace.yaml --out results/trace
#   schedsim trace inspect @DATA@/itp/cluster05.csv --format itp
name: itp-cluster05            # a label; default: none
seed: 1                        # seeds every random stream, 0..2^63-1; default 1
cluster:                       # the devices; required
  nodes:                       # node groups (at least one)
    - count: 2                 # identical nodes, positive integer; default 1
      type: V100               # device type (a label without physics:); required
      devices_per_node: 8      # GPUs per node; required
workload:                      # the jobs: exactly one of synthetic or trace; required
  trace:                       # a trace file: a path, or this map (docs/config.md#workload)
    # The trace file, plain or gzip; required. A relative path is resolved from THIS
    # file's folder, not from the current folder: change it if your data lives elsewhere
    # (`schedsim init --data-dir PATH` writes another one).
    path: @DATA@/itp/cluster05.csv
    format: itp                # schedsim, itp, philly, helios, pai-tasks, csv, ... (docs/traces.md); default schedsim
    on_bad_row: error          # error stops at the first bad row; skip skips and counts bad rows; default error
  oversized: drop              # a job larger than the cluster: error stops, drop skips and counts it; default error
# What schedulers may know about run times (docs/config.md#information): oracle (the true
# durations), estimates (a trace's estimate column, or noisy ones) or none; default none
# for a trace. ITP has no estimates, so duration-based policies (sjf, srtf...) refuse.
information: none
policy: las                    # least attained service: needs no durations; `schedsim policies` lists them; default fifo
)";

constexpr const char* kHeterogeneous = R"(# A heterogeneous cluster with the hardware model (physics), energy metering and a
# carbon/price signal: job speed depends on the device type and placement, and results
# carry energy (kWh), cost (USD) and emissions (kgCO2). Keys: docs/config.md,
# docs/physics.md, docs/energy.md.
#   schedsim run heterogeneous.yaml --out results/heterogeneous
#   schedsim compare heterogeneous.yaml --policy fifo --policy '{name: fifo, placement: fastest_type}'
name: heterogeneous            # a label; default: none
seed: 1                        # seeds every random stream, 0..2^63-1; default 1
cluster:                       # the devices; required
  nodes:                       # with physics: every type must be in the catalogue (docs/physics.md#accelerators)
    - {count: 1, type: H100-SXM, devices_per_node: 8}   # count: nodes, default 1; devices_per_node: GPUs, required
    - {count: 2, type: A100-80GB, devices_per_node: 8}
    - {count: 2, type: V100, devices_per_node: 8}
  topology:                    # used by physics; every key has a default (docs/physics.md#topology)
    nodes_per_rack: 2          # nodes behind one leaf switch; default 32
    nic_bandwidth_gbps: 100    # Gb/s (gigabits) per NIC, each direction; default 400
    oversubscription: 2.0      # rack NIC bandwidth / uplink bandwidth, >= 1; default 1 (non-blocking)
workload:                      # the jobs; required
  synthetic:                   # a generated workload
    num_jobs: 300              # jobs to generate; default 1000
    arrival: {process: poisson, mean_interarrival_s: 150}  # mean gap, s; default poisson, 60
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}  # run time on the reference device, s; default {dist: exponential, mean: 3600}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}  # GPUs per job; default 1
    # each job trains one of these catalogue workload profiles (docs/physics.md#workload-profiles),
    # which set its speed, communication and memory; default unset; requires physics
    models: {ResNet-50: 0.4, BERT-large: 0.4, GPT-2-1.5B: 0.2}
physics:                       # the hardware model; physics: {} takes every default; default off
  reference_device: V100       # durations are run times on this type; default: the first node group's type
  mixed_types: slowest         # a job spanning types runs at the slowest one's speed, or forbid; default slowest
  checkpoint:                  # what preempting or moving a job costs
    storage_bandwidth_gbps: 2  # GB/s to and from checkpoint storage (preemptions, moves); default 2
energy:                        # meters device power between events; energy: {} takes every default; default off
  pue: 1.2                     # facility power / IT power, in [1, 10]; default 1.0
signals:                       # step functions of UTC time, seen by policies and the energy meter; default none
  origin_utc: 2023-06-01T00:00:00Z  # the UTC instant of simulated time 0; default 2023-01-01T00:00:00Z
  # carbon intensity, gCO2/kWh: a number, {diurnal: ...} or {file: CSV} (docs/config.md#signals); default none
  carbon: {diurnal: {mean: 350, amplitude: 150, peak_hour_utc: 19}}
  price: {diurnal: {mean: 90, amplitude: 40, peak_hour_utc: 18}}  # electricity price, USD/MWh; default none
policy: {name: fifo, placement: fastest_type}  # place each job on the fastest free type; default fifo
)";

constexpr const char* kSweep = R"(# A sweep grid: parameter values x policies x seeds, each run a `schedsim run` of the
# base scenario with --set. Keys: docs/experiments.md.
#   schedsim sweep sweep.yaml --out results/sweep --jobs 2
#   schedsim report results/sweep
scenario: synthetic.yaml       # the base scenario, relative to this file's folder (or an inline map); required
parameters:                    # --set key paths -> lists of values; default none
  workload.synthetic.arrival.mean_interarrival_s: [250, 300, 400]   # s: about 100%, 85% and 64% load
policies: [fifo, sjf]          # names or {name: ..., option: value} maps; default: the scenario's policy
seeds: 3                       # a count (seeds 1..3) or a list such as [1, 7, 42]; required
)";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::vector<StarterFile> starter_files(const std::string& data_dir_from_files) {
  std::string data = data_dir_from_files.empty() ? "." : data_dir_from_files;
  while (data.size() > 1 && data.back() == '/') data.pop_back();
  return {{"synthetic.yaml", kSynthetic},
          {"trace.yaml", replace_all(kTrace, "@DATA@", data)},
          {"heterogeneous.yaml", kHeterogeneous},
          {"sweep.yaml", kSweep}};
}

InitOutcome write_starter_files(const std::string& dir, const std::string& data_dir) {
  const fs::path folder = dir.empty() ? fs::path(".") : fs::path(dir);
  // The trace path as seen from the written files' folder.
  fs::path data = fs::path(data_dir).lexically_normal();
  if (data.is_relative()) {
    const fs::path rel = fs::absolute(data).lexically_normal().lexically_relative(fs::absolute(folder).lexically_normal());
    if (!rel.empty()) data = rel;
  }
  const std::vector<StarterFile> files = starter_files(data.generic_string());
  // All or nothing: every name is checked before the first file is written.
  for (const auto& f : files) {
    const fs::path p = folder / f.name;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(p, ec)))
      throw InputError(p.string(), "already exists; schedsim init never overwrites a file (remove it, or give another folder: schedsim init DIR)");
  }
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw InputError(folder.string(), "cannot create the folder: " + ec.message());
  InitOutcome outcome;
  for (const auto& f : files) {
    const std::string p = (folder / f.name).string();
    write_file_atomically(p, f.text);
    outcome.written.push_back(p);
  }
  outcome.next_command = "schedsim run " + (folder / "synthetic.yaml").string() + " --out results/synthetic";
  return outcome;
}

}  // namespace schedsim
