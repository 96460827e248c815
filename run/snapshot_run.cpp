#include "run/snapshot_run.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "sim/interrupt.hpp"
#include "run/runner.hpp"
#include "base/sha256.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace fs = std::filesystem;

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the snapshot (does it exist?)");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw InputError(path, "read error");
  return s.str();
}

// FNV-1a of bytes [from, to) of `path`, continuing from `h`; false when the file is shorter.
bool hash_file_range(const std::string& path, std::uint64_t from, std::uint64_t to, std::uint64_t& h) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(static_cast<std::streamoff>(from));
  std::vector<char> buf(1 << 20);
  for (std::uint64_t left = to - from; left > 0;) {
    const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buf.size()));
    if (!in.read(buf.data(), n)) return false;
    h = fnv1a64(buf.data(), static_cast<std::size_t>(n), h);
    left -= static_cast<std::uint64_t>(n);
  }
  return true;
}

const std::string kMacLead = "schedsim-snapshot-mac hmac-sha256 ";
constexpr std::size_t kMacHexChars = 64;
const std::size_t kTrailerBytes = kMacLead.size() + kMacHexChars + 1;

bool starts_like_snapshot(const std::string& bytes) { return bytes.rfind("schedsim-snapshot\n", 0) == 0; }

bool has_mac_trailer(const std::string& bytes) {
  return bytes.size() >= kTrailerBytes && bytes.back() == '\n' && bytes.compare(bytes.size() - kTrailerBytes, kMacLead.size(), kMacLead) == 0;
}

// Compares every character, so the time taken does not tell how much of a MAC was right.
bool same_mac(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

}  // namespace

std::string seal_snapshot(const std::string& file_bytes, const std::string& key) {
  return file_bytes + kMacLead + hmac_sha256_hex(key, file_bytes) + "\n";
}

std::string open_snapshot(const std::string& file_bytes, const std::string& where, const std::optional<std::string>& key) {
  if (!starts_like_snapshot(file_bytes)) return file_bytes;
  const bool keyed = has_mac_trailer(file_bytes);
  if (keyed && !key) {
    throw InputError(where, "the snapshot is keyed (HMAC-SHA256): resume it with its key (--snapshot-key-file FILE or SCHEDSIM_SNAPSHOT_KEY)");
  }
  if (!keyed && key) {
    throw InputError(where, "a snapshot key was given but the snapshot is not keyed: it was written without a key, or its MAC was removed");
  }
  if (!keyed) return file_bytes;
  std::string body = file_bytes.substr(0, file_bytes.size() - kTrailerBytes);
  const std::string given = file_bytes.substr(file_bytes.size() - kTrailerBytes + kMacLead.size(), kMacHexChars);
  // The expected MAC is not printed: it would hand out a valid MAC for the edited file.
  if (!same_mac(given, hmac_sha256_hex(*key, body))) {
    throw InputError(where, "the snapshot's MAC does not match the key: it was changed or written with another key");
  }
  return body;
}

Tick parse_snapshot_period(const std::string& text, const std::string& option) {
  const auto bad = [&]() -> InputError {
    return InputError(option, "'" + text + "' is not a period of simulated time; give seconds (3600) or a number with s, m, h or d (90s, 30m, 6h, 2d), more than 0");
  };
  if (text.empty()) throw bad();
  double unit_s = 1.0;
  std::string number = text;
  switch (text.back()) {
    case 's': unit_s = 1.0; number.pop_back(); break;
    case 'm': unit_s = 60.0; number.pop_back(); break;
    case 'h': unit_s = 3600.0; number.pop_back(); break;
    case 'd': unit_s = 86400.0; number.pop_back(); break;
    default: break;
  }
  std::size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != number.size() || !std::isfinite(v) || !(v > 0.0) || v * unit_s > 1e12) throw bad();
  const Tick t = Tick::from_seconds(v * unit_s);
  if (t <= Tick()) throw bad();
  return t;
}

RunSnapshots::RunSnapshots(SnapshotOptions options, const std::string& config_text, std::string out_dir)
    : options_(std::move(options)), config_hash_(snapshot_config_hash(config_text)), out_dir_(std::move(out_dir)) {
  if (out_dir_.empty()) throw InputError("--snapshot-every / --resume", "needs an output folder (--out)");
  if (options_.path.empty()) options_.path = (fs::path(out_dir_) / "snapshot.bin").string();
}

void RunSnapshots::add(std::string label, std::function<void(SnapshotArchive&)> snapshot) {
  components_.push_back(Component{std::move(label), std::move(snapshot)});
}

void RunSnapshots::add_stream(std::ofstream& out, std::string temp_path, std::string final_name) {
  streams_.push_back(Stream{&out, std::move(temp_path), std::move(final_name)});
}

void RunSnapshots::run_components(SnapshotArchive& ar) {
  // The run's identity again, inside the checksummed state: a header whose config hash
  // was rewritten (to pass another run's snapshot off as this one's) is refused.
  std::uint64_t identity = config_hash_;
  ar(identity);
  ar.check(identity == config_hash_, "it was written by a run with a different configuration (scenario, --set values, policy or seed), "
                                     "though its header names this one");
  for (Component& c : components_) {
    ar.section(c.label.c_str());
    c.snapshot(ar);
  }
  for (Stream& s : streams_) stream_position(ar, s);
  if (ar.loading()) ar.expect_end();
}

// Saving: the stream's length and the hash of everything written so far (hashed
// incrementally: each snapshot reads back only the rows since the previous one).
// Loading: finds the interrupted run's file with that prefix and copies it in.
void RunSnapshots::stream_position(SnapshotArchive& ar, Stream& s) {
  std::string name = fs::path(s.temp_path).filename().string();
  std::uint64_t bytes = 0, hash = 0;
  if (!ar.loading()) {
    s.out->flush();
    if (!*s.out) throw InputError(s.temp_path, "write failed (disk full?)");
    bytes = static_cast<std::uint64_t>(s.out->tellp());
    if (!hash_file_range(s.temp_path, s.hashed_bytes, bytes, s.hash)) throw InputError(s.temp_path, "cannot read back what was written");
    s.hashed_bytes = bytes;
    hash = s.hash;
  }
  ar(name, bytes, hash);
  if (!ar.loading()) return;
  // A file name in this folder, of this stream: never a path elsewhere.
  ar.check(name.rfind(s.final_name + ".", 0) == 0 && name.find_first_of("/\\") == std::string::npos && name.find('\0') == std::string::npos,
           "it continues the file '" + name.substr(0, 60) + "', which is not a " + s.final_name + " of this run");
  const std::vector<std::string> candidates = {(fs::path(out_dir_) / name).string(), (fs::path(out_dir_) / (s.final_name + ".interrupted")).string()};
  for (const std::string& c : candidates) {
    std::uint64_t h = fnv1a64(nullptr, 0);
    std::error_code ec;
    if (c == s.temp_path || !fs::is_regular_file(c, ec) || fs::file_size(c, ec) < bytes || !hash_file_range(c, 0, bytes, h) || h != hash) continue;
    // The rows before the snapshot replace what the writer has put in its new file (the
    // header, which they begin with).
    std::ifstream in(c, std::ios::binary);
    s.out->seekp(0);
    std::vector<char> buf(1 << 20);
    for (std::uint64_t left = bytes; left > 0;) {
      const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buf.size()));
      in.read(buf.data(), n);
      s.out->write(buf.data(), n);
      left -= static_cast<std::uint64_t>(n);
    }
    if (!in || !*s.out) throw InputError(c, "cannot copy the rows written before the snapshot");
    s.hashed_bytes = bytes;
    s.hash = hash;
    resumed_partials_.push_back(c);  // superseded once this run has finished
    return;
  }
  throw InputError(options_.resume_from, "the snapshot continues " + candidates[0] + " (the first " + std::to_string(bytes) + " bytes of " + s.final_name +
                                             ", written before the snapshot), which is missing or was changed (also looked for " + candidates[1] +
                                             "); resume with --out naming the folder of the interrupted run");
}

void RunSnapshots::resume() {
  const std::string& where = options_.resume_from;
  SnapshotArchive ar(decode_snapshot_file(open_snapshot(read_whole_file(where), where, options_.key), where, config_hash_), where);
  run_components(ar);
}

void RunSnapshots::save() {
  SnapshotArchive ar;
  run_components(ar);
  std::string file = encode_snapshot_file(config_hash_, ar.bytes());
  if (options_.key) file = seal_snapshot(file, *options_.key);
  write_file_atomically(options_.path, file);
  ++written_;
}

void RunSnapshots::start(Simulator& sim) {
  if (!options_.resume_from.empty()) {
    resume();
  } else if (options_.every > Tick()) {
    SnapshotArchive trial;  // refuses, naming it, a component that cannot be saved
    for (Component& c : components_) c.snapshot(trial);
  }
  sim_ = &sim;
  if (options_.every <= Tick()) return;
  sim.set_boundary_hook(options_.every, [this] {
    save();
    if (stopping_) {
      const int s = pending_interrupt();
      throw Interrupted(s, std::string("interrupted by ") + signal_name(s) + " at simulated time " + format_seconds(sim_->now()) +
                               " s, after a snapshot of that instant");
    }
  });
}

void RunSnapshots::stop_at_next_boundary() {
  stopping_ = true;
  sim_->request_boundary();
}

void RunSnapshots::finish() {
  for (const std::string& p : resumed_partials_) {
    std::error_code ec;
    fs::remove(p, ec);
  }
}

}  // namespace schedsim
