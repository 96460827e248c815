// libFuzzer target: resuming a run from a hostile snapshot (schedsim run --resume). The
// input is a snapshot's state (its payload); the harness wraps it in a header with the
// right config hash and a recomputed checksum, as someone editing a snapshot would, and
// resumes a small scenario (loss spikes, checkpoints, preemption, energy) from it with the
// invariant checker on. Only InputError may come out: a crash, an internal error
// (InvariantError) or any other exception is a bug.
//
// At start-up the harness runs the scenario itself and checks that its own snapshots
// resume to the uninterrupted run's bytes, so that validation never refuses a genuine
// state. `fuzz_snapshot --write-seeds DIR` writes those snapshots' states as seeds
// (tests/fuzz/corpus/snapshot holds a few made that way).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "sim/snapshot_archive.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace schedsim;
namespace fs = std::filesystem;

namespace {

// Two nodes, loss spikes, periodic checkpoints, a preemptive policy, energy with price
// and carbon: most of the kernel's saved state is in use. (No node failures: their events
// outlive the last job, so every file would hold the state after it.)
const char* kScenario = R"(name: fuzz-snapshot
seed: 7
cluster:
  nodes:
    - {count: 2, type: V100, devices_per_node: 4}
workload:
  synthetic:
    num_jobs: 24
    arrival: {process: poisson, mean_interarrival_s: 900}
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.25, 4: 0.25}
energy: {pue: 1.2}
signals: {price: {diurnal: {mean: 80, amplitude: 40}}, carbon: 300}
failures:
  loss_spikes: {rate_per_gpu_hour: 2.0e-3, restart_s: 60}
  checkpoint: {interval: fixed, interval_s: 1200, cost_s: 30}
policy: tiresias
)";

const char* kStreams[] = {"jobs.csv", "timeline.csv", "allocations.csv"};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out.flush()) {
    std::fprintf(stderr, "fuzz_snapshot: cannot write %s\n", p.c_str());
    std::abort();
  }
}

class Harness {
 public:
  Harness() : dir_(fuzz::scratch_path("snapshot")), registry_(builtin_policies()) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_ = (dir_ / "run.yaml").string();
    write_all(config_, kScenario);
    const double makespan_s = run("whole", {}).summary.makespan_s;
    for (int i = 0; i < 3; ++i) rows_[i] = read_all(dir_ / "whole" / kStreams[i]);
    results_ = read_all(dir_ / "whole" / "results.json");
    // Snapshots at a few instants (a file keeps the last one: at 0.55, 0.7, 0.85 and 0.9
    // of the run); each must resume to the whole run's bytes.
    for (const double fraction : {0.55, 0.7, 0.85, 0.3}) {
      const double every_s = std::floor(makespan_s * fraction);
      SnapshotOptions snap;
      snap.every = Tick::from_seconds(every_s);
      fs::remove_all(dir_ / "b");
      run("b", snap);
      const std::string file = read_all(dir_ / "b" / "snapshot.bin");
      if (file.size() < kHeaderBytes) continue;
      std::memcpy(&config_hash_, file.data() + 18 + 4, sizeof config_hash_);
      seeds_.push_back(file.substr(kHeaderBytes));
      const std::string error = resume(file);
      if (!error.empty() || read_all(dir_ / "r" / "results.json") != results_) {
        std::fprintf(stderr, "fuzz_snapshot: a genuine snapshot (every %g s) did not resume to the same results: %s\n", every_s, error.c_str());
        std::abort();
      }
    }
    if (seeds_.empty()) {
      std::fprintf(stderr, "fuzz_snapshot: the scenario wrote no snapshot\n");
      std::abort();
    }
  }
  ~Harness() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  const std::vector<std::string>& seeds() const { return seeds_; }

  // The resume's InputError message, "" when it was accepted (and ran to its end).
  std::string resume_payload(const std::string& payload) { return resume(encode_snapshot_file(config_hash_, payload)); }

 private:
  static constexpr std::size_t kHeaderBytes = 18 + 4 + 8 + 8 + 8;

  RunResult run(const std::string& out, const SnapshotOptions& snap) {
    RunOptions options{(dir_ / out).string()};
    options.timeline = true;
    options.check_invariants = true;
    options.snapshot = snap;
    return run_scenario(load_scenario(config_, {}, std::nullopt, registry_), registry_, options);
  }

  std::string resume(const std::string& file_bytes) {
    const fs::path r = dir_ / "r";
    fs::remove_all(r);
    fs::create_directories(r);
    for (int i = 0; i < 3; ++i) write_all(r / (std::string(kStreams[i]) + ".interrupted"), rows_[i]);
    write_all(dir_ / "s.bin", file_bytes);
    SnapshotOptions snap;
    snap.resume_from = (dir_ / "s.bin").string();
    try {
      run("r", snap);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
  PolicyRegistry registry_;
  std::string config_;
  std::string rows_[3];
  std::string results_;
  std::uint64_t config_hash_ = 0;
  std::vector<std::string> seeds_;
};

Harness& harness() {
  static Harness h;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // --write-seeds DIR: the genuine snapshots' states, as seed corpus files.
  for (int i = 1; i + 1 < *argc; ++i) {
    if (std::string((*argv)[i]) != "--write-seeds") continue;
    const fs::path out((*argv)[i + 1]);
    fs::create_directories(out);
    int n = 0;
    for (const std::string& s : harness().seeds()) write_all(out / ("seed-" + std::to_string(n++)), s);
    std::printf("wrote %d seeds to %s\n", n, out.c_str());
    std::exit(0);
  }
  (void)harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  fuzz::expect_input_errors_only([&] { harness().resume_payload(payload); });
  return 0;
}
