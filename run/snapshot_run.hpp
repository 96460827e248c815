// Snapshot and resume of one run (schedsim run --snapshot-every PERIOD --resume FILE):
// which components are saved, in which order, and how the streamed outputs (jobs.csv,
// timeline.csv, allocations.csv) continue. A snapshot is the run's whole state between
// two instants (sim/snapshot_archive.hpp), never a replay of the simulation; the rows
// already written are not copied into it: it records their length and hash, and a resumed
// run continues the rows the interrupted run left behind (its jobs.csv.partial-PID, or
// jobs.csv.interrupted after Ctrl-C).
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"
#include "base/tick.hpp"

namespace schedsim {

struct SnapshotOptions {
  Tick every;               // simulated time between snapshots; 0 = none
  std::string path;         // where snapshots are written ("" = OUT/snapshot.bin)
  std::string resume_from;  // a snapshot to continue from; "" = start at t = 0
  // A secret key (--snapshot-key-file or SCHEDSIM_SNAPSHOT_KEY): snapshots written carry
  // an HMAC-SHA256 under it, and a resumed snapshot must carry a MAC that verifies.
  std::optional<std::string> key;
  bool enabled() const { return every > Tick() || !resume_from.empty(); }
};

// "3600" (seconds), "90s", "30m", "6h" or "2d" of simulated time; throws InputError
// naming `option` for anything else (zero, negative, other units).
Tick parse_snapshot_period(const std::string& text, const std::string& option);

// Keyed snapshots: the unkeyed file (encode_snapshot_file, byte for byte) followed by a
// trailer line "schedsim-snapshot-mac hmac-sha256 <64 hex>\n", the HMAC-SHA256 under `key`
// of every byte before it (header and state). The FNV checksum only detects damage
// (anyone can recompute it); the MAC detects edits by anyone without the key.
std::string seal_snapshot(const std::string& file_bytes, const std::string& key);
// The unkeyed file inside `file_bytes`, for decode_snapshot_file. Throws InputError naming
// `where` when a key is given and the MAC does not verify or is missing, or when the
// snapshot is keyed and no key is given. Bytes that are not a snapshot pass through (the
// decoder names what they are).
std::string open_snapshot(const std::string& file_bytes, const std::string& where, const std::optional<std::string>& key);

class RunSnapshots {
 public:
  // `config_text` identifies the run (resolved config, seed, output options): a snapshot
  // of another run is refused.
  RunSnapshots(SnapshotOptions options, const std::string& config_text, std::string out_dir);

  // Components, saved and loaded in the order added.
  void add(std::string label, std::function<void(SnapshotArchive&)> snapshot);
  // A streamed output: `temp_path` is what `out` writes, `final_name` the file it becomes.
  void add_stream(std::ofstream& out, std::string temp_path, std::string final_name);

  // Before the first event: resumes from the snapshot, if one was given, else checks that
  // every component can be saved (a trial snapshot, not written); then arms the periodic
  // snapshots on `sim`.
  void start(Simulator& sim);
  // Writes a snapshot now (atomically).
  void save();
  // Ctrl-C / SIGTERM: at the end of the current instant, write a snapshot and stop the
  // run (Interrupted), instead of stopping in the middle of the instant.
  void stop_at_next_boundary();
  // After the run finished: removes the partial outputs of the run that was resumed
  // (jobs.csv.partial-PID or jobs.csv.interrupted: the finished files supersede them).
  void finish();

  std::uint64_t written() const { return written_; }
  const std::string& path() const { return options_.path; }

 private:
  struct Component {
    std::string label;
    std::function<void(SnapshotArchive&)> snapshot;
  };
  struct Stream {
    std::ofstream* out;
    std::string temp_path, final_name;
    std::uint64_t hashed_bytes = 0;
    std::uint64_t hash = fnv1a64(nullptr, 0);
  };
  void run_components(SnapshotArchive& ar);
  void stream_position(SnapshotArchive& ar, Stream& s);
  void resume();

  SnapshotOptions options_;
  std::uint64_t config_hash_;
  std::string out_dir_;
  std::vector<Component> components_;
  std::vector<Stream> streams_;
  std::vector<std::string> resumed_partials_;
  std::uint64_t written_ = 0;
  Simulator* sim_ = nullptr;
  bool stopping_ = false;
};

}  // namespace schedsim
