#include "sim/snapshot_archive.hpp"

#include <limits>

#include "sim/simulator.hpp"

namespace schedsim {
namespace {

const char kMagic[] = "schedsim-snapshot\n";
constexpr std::size_t kMagicLen = sizeof kMagic - 1;
constexpr std::size_t kHeaderLen = kMagicLen + 4 + 8 + 8 + 8;

template <typename T>
void append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T read_at(const std::string& in, std::size_t pos) {
  T v;
  std::memcpy(&v, in.data() + pos, sizeof v);
  return v;
}

}  // namespace

std::uint64_t fnv1a64(const char* data, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t snapshot_config_hash(const std::string& resolved_config_text) {
  return fnv1a64(resolved_config_text.data(), resolved_config_text.size());
}

void SnapshotArchive::raw(void* p, std::size_t n) {
  if (!loading_) {
    bytes_.append(static_cast<const char*>(p), n);
    return;
  }
  if (n > bytes_.size() - pos_) corrupt("it ends in the middle of the simulation state");
  std::memcpy(p, bytes_.data() + pos_, n);
  pos_ += n;
}

void SnapshotArchive::check_count(std::uint64_t n, std::size_t min_bytes_each) const {
  if (n > (bytes_.size() - pos_) / min_bytes_each) corrupt("a list length (" + std::to_string(n) + ") exceeds the data left");
}

void SnapshotArchive::corrupt(const std::string& what) const { reject(what); }

void SnapshotArchive::reject(const std::string& what) const { throw InputError(where_, "snapshot is not a state of this scenario: " + what); }

void SnapshotArchive::check_job_slot(std::int64_t slot, const std::string& what) const {
  if (restored_ && (slot < 0 || slot > std::numeric_limits<JobSlot>::max() || !restored_->is_live(static_cast<JobSlot>(slot)))) {
    reject(what + " names job slot " + std::to_string(slot) + ", which holds no job");
  }
}

void SnapshotArchive::check_device(std::int64_t device, const std::string& what) const {
  if (restored_ && (device < 0 || device >= restored_->cluster_state().spec().num_devices())) {
    reject(what + " names device " + std::to_string(device) + ", which this cluster (" + std::to_string(restored_->cluster_state().spec().num_devices()) +
           " devices) does not have");
  }
}

void SnapshotArchive::io_value(std::string& s) {
  std::uint64_t n = s.size();
  raw(&n, sizeof n);
  if (loading_) {
    check_count(n, 1);
    s.resize(n);
  }
  if (n) raw(s.data(), n);
}

void SnapshotArchive::section(const char* name) {
  std::string s = name;
  io(s);
  if (loading_ && s != name) corrupt(std::string("expected the section '") + name + "', found '" + s.substr(0, 40) + "'");
}

void SnapshotArchive::expect_end() const {
  if (pos_ != bytes_.size()) corrupt(std::to_string(bytes_.size() - pos_) + " bytes left after the simulation state");
}

namespace {
// The checksum: the header before it (magic, version, config hash, size), then the payload.
std::uint64_t snapshot_checksum(const char* header, const char* payload, std::size_t payload_size) {
  return fnv1a64(payload, payload_size, fnv1a64(header, kHeaderLen - 8));
}
}  // namespace

std::string encode_snapshot_file(std::uint64_t config_hash, const std::string& payload) {
  std::string out(kMagic, kMagicLen);
  append(out, kSnapshotFormatVersion);
  append(out, config_hash);
  append(out, static_cast<std::uint64_t>(payload.size()));
  append(out, snapshot_checksum(out.data(), payload.data(), payload.size()));
  out += payload;
  return out;
}

std::string decode_snapshot_file(const std::string& in, const std::string& where, std::uint64_t config_hash) {
  if (in.size() < kMagicLen || in.compare(0, kMagicLen, kMagic) != 0) {
    throw InputError(where, "not a schedsim snapshot (it does not start with 'schedsim-snapshot')");
  }
  if (in.size() < kHeaderLen) throw InputError(where, "the snapshot is truncated (" + std::to_string(in.size()) + " bytes, shorter than its header)");
  const auto version = read_at<std::uint32_t>(in, kMagicLen);
  if (version != kSnapshotFormatVersion) {
    throw InputError(where, "snapshot format version " + std::to_string(version) + "; this schedsim reads version " +
                                std::to_string(kSnapshotFormatVersion) + " (resume with the schedsim that wrote it)");
  }
  const auto hash = read_at<std::uint64_t>(in, kMagicLen + 4);
  const auto size = read_at<std::uint64_t>(in, kMagicLen + 12);
  const auto checksum = read_at<std::uint64_t>(in, kMagicLen + 20);
  if (in.size() - kHeaderLen != size) {
    throw InputError(where, "the snapshot is truncated or damaged: its header announces " + std::to_string(size) + " bytes of state, the file holds " +
                                std::to_string(in.size() - kHeaderLen) + " (was the copy interrupted?)");
  }
  if (snapshot_checksum(in.data(), in.data() + kHeaderLen, size) != checksum) throw InputError(where, "the snapshot is corrupted (its checksum does not match its contents)");
  if (hash != config_hash) {
    throw InputError(where, "the snapshot was written by a run with a different configuration (scenario, --set values, policy or seed); "
                            "resume with exactly the options of the run that wrote it");
  }
  return in.substr(kHeaderLen);
}

}  // namespace schedsim
