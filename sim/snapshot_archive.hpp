// A small binary archive for snapshots of a running simulation (schedsim run
// --snapshot-every / --resume). One type serves both directions: a component writes one
// method, `void snapshot(SnapshotArchive& ar)`, that passes each field of its state to
// ar.io(); when saving the field is appended, when loading it is overwritten. Saving and
// loading therefore cannot drift apart field by field.
//
// The encoding is the host's (little-endian x86-64 / arm64, IEEE doubles): a snapshot
// resumes on the machine type that wrote it. Doubles are stored bit for bit, so a resumed
// run continues from exactly the same numbers.
//
// A component that cannot be snapshotted throws SnapshotUnsupported naming itself; the
// CLI takes a trial snapshot before the first event, so such a run fails up front.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/tick.hpp"

namespace schedsim {

// A component whose state the snapshot format does not cover (the message names it).
class SnapshotUnsupported : public InputError {
 public:
  explicit SnapshotUnsupported(const std::string& component)
      : InputError("--snapshot-every: " + component + " cannot be saved in a snapshot; run without --snapshot-every") {}
};

class SnapshotArchive;
class Simulator;

template <typename T, typename = void>
struct has_snapshot_member : std::false_type {};
template <typename T>
struct has_snapshot_member<T, std::void_t<decltype(std::declval<T&>().snapshot(std::declval<SnapshotArchive&>()))>> : std::true_type {};

class SnapshotArchive {
 public:
  // An archive that collects what components write.
  SnapshotArchive() = default;
  // An archive that hands back `payload` (from read_snapshot_file); `where` names the file
  // in error messages.
  SnapshotArchive(std::string payload, std::string where) : loading_(true), bytes_(std::move(payload)), where_(std::move(where)) {}

  bool loading() const { return loading_; }
  const std::string& bytes() const { return bytes_; }
  // Loading: every byte was consumed (a snapshot with trailing data is not this program's).
  void expect_end() const;

  // A named section marker: a mismatch means the snapshot was written by a different
  // configuration or a different build, reported with the section's name.
  void section(const char* name);

  // Loading: refuses the snapshot, naming the file: "<file>: snapshot is not a state of
  // this scenario: <what>". Every value read is checked against the scenario before it
  // is used, so a damaged or hand-edited snapshot ends here, never in a crash.
  [[noreturn]] void reject(const std::string& what) const;
  void check(bool ok, const std::string& what) const {
    if (!ok) reject(what);
  }
  const std::string& where() const { return where_; }
  // Loading: the simulator restored first (Simulator::snapshot sets it), so that the
  // components loaded after it (policies, meters) can check the job slots and devices
  // they hold against its state.
  void set_restored(const Simulator* sim) { restored_ = sim; }
  const Simulator* restored() const { return restored_; }
  // Refuses a job slot that holds no job in the restored simulator (when there is one).
  void check_job_slot(std::int64_t slot, const std::string& what) const;
  // Refuses a device id outside the restored simulator's cluster (when there is one).
  void check_device(std::int64_t device, const std::string& what) const;

  template <typename T>
  void io(T& v) {
    io_value(v);
  }
  template <typename... T>
  void operator()(T&... v) {
    (io(v), ...);
  }
  // A vector of a type without its own snapshot method (e.g. a private struct): `f(x)`
  // passes each element's fields to io(); fields it leaves out keep their values.
  // A vector the configuration has already sized (non-empty before loading) must keep
  // its size: its elements hold configuration the snapshot does not carry.
  template <typename T, typename F>
  void io_each(std::vector<T>& v, F f) {
    std::uint64_t n = v.size();
    raw(&n, sizeof n);
    if (!loading_) {
      for (auto& x : v) f(x);
      return;
    }
    check_count(n, 1);
    if (!v.empty() && n != v.size()) reject("a list of " + std::to_string(n) + " entries where this scenario has " + std::to_string(v.size()));
    // Grown element by element: a huge count in a short snapshot runs out of data before
    // it allocates much.
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i == v.size()) v.emplace_back();
      f(v[i]);
    }
  }

 private:
  template <typename T>
  void io_value(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      // A byte that is 0 or 1: any other value in a bool is undefined behaviour.
      std::uint8_t b = v ? 1 : 0;
      raw(&b, 1);
      if (loading_) {
        check(b <= 1, "a flag holds " + std::to_string(b) + " (0 or 1 allowed)");
        v = b != 0;
      }
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      raw(&v, sizeof v);
    } else if constexpr (std::is_same_v<T, Tick>) {
      std::int64_t us = v.us();
      raw(&us, sizeof us);
      if (loading_) v = Tick::from_us(us);
    } else if constexpr (has_snapshot_member<T>::value) {
      v.snapshot(*this);  // a type with its own snapshot method
    } else {
      snapshot_fields(*this, v);  // a plain struct: a free function found by ADL
    }
  }
  void io_value(std::string& s);
  __extension__ void io_value(__int128& v) { raw(&v, sizeof v); }
  template <typename T>
  void io_value(std::optional<T>& v) {
    bool has = v.has_value();
    io(has);
    if (!has) {
      v.reset();
      return;
    }
    if (loading_) v.emplace();
    io(*v);
  }
  template <typename T>
  void io_value(std::vector<T>& v) {
    std::uint64_t n = v.size();
    raw(&n, sizeof n);
    if constexpr ((std::is_arithmetic_v<T> || std::is_enum_v<T>) && !std::is_same_v<T, bool>) {
      if (loading_) {
        check_count(n, sizeof(T));
        v.resize(n);
      }
      if (n) raw(v.data(), n * sizeof(T));
    } else if (!loading_) {
      for (auto& x : v) io(x);
    } else {
      check_count(n, 1);
      v.clear();
      for (std::uint64_t i = 0; i < n; ++i) {  // grown as the data lasts (see io_each)
        v.emplace_back();
        io(v.back());
      }
    }
  }
  template <typename A, typename B>
  void io_value(std::pair<A, B>& p) {
    io(p.first);
    io(p.second);
  }
  template <typename... T>
  void io_value(std::tuple<T...>& t) {
    // [&], not [this]: for an empty tuple, clang warns that the capture is unused.
    std::apply([&](auto&... x) { (io(x), ...); }, t);
  }
  // Sets: elements in their (deterministic) order; loading inserts at the end. Saving
  // passes each element through io(), which only reads it.
  template <typename C>
  void io_ordered(C& c) {
    std::uint64_t n = c.size();
    raw(&n, sizeof n);
    if (loading_) {
      check_count(n, 1);
      c.clear();
      for (std::uint64_t i = 0; i < n; ++i) {
        typename C::value_type x{};
        io(x);
        const std::size_t before = c.size();
        c.insert(c.end(), std::move(x));
        check(c.size() == before + 1, "a set holds an element twice");
      }
    } else {
      for (const auto& x : c) io(const_cast<typename C::value_type&>(x));
    }
  }
  template <typename T, typename C>
  void io_value(std::set<T, C>& s) {
    io_ordered(s);
  }
  template <typename T, typename C>
  void io_value(std::multiset<T, C>& s) {
    io_ordered(s);
  }
  template <typename K, typename V, typename C>
  void io_value(std::map<K, V, C>& m) {
    std::uint64_t n = m.size();
    raw(&n, sizeof n);
    if (!loading_) {
      for (auto& [k, v] : m) {
        K key = k;
        io(key);
        io(v);
      }
      return;
    }
    check_count(n, 1);
    m.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::pair<K, V> x{};
      io(x);
      const std::size_t before = m.size();
      m.emplace_hint(m.end(), std::move(x));
      check(m.size() == before + 1, "a map holds a key twice");
    }
  }
  // Unordered sets: saved sorted, so the snapshot does not depend on hash order.
  template <typename T>
  void io_value(std::unordered_set<T>& s) {
    std::vector<T> items(s.begin(), s.end());
    std::sort(items.begin(), items.end());
    io(items);
    if (loading_) {
      s = std::unordered_set<T>(items.begin(), items.end());
      check(s.size() == items.size(), "a set holds an element twice");
    }
  }

  // Unordered maps: saved sorted by key.
  template <typename K, typename V>
  void io_value(std::unordered_map<K, V>& m) {
    std::vector<std::pair<K, V>> items(m.begin(), m.end());
    std::sort(items.begin(), items.end());
    io(items);
    if (loading_) {
      m = std::unordered_map<K, V>(items.begin(), items.end());
      check(m.size() == items.size(), "a map holds a key twice");
    }
  }

  void raw(void* p, std::size_t n);
  void check_count(std::uint64_t n, std::size_t min_bytes_each) const;
  [[noreturn]] void corrupt(const std::string& what) const;

  bool loading_ = false;
  std::string bytes_;
  std::size_t pos_ = 0;
  std::string where_;
  const Simulator* restored_ = nullptr;
};

// The identity of a run a snapshot belongs to: a hash of the fully resolved configuration
// (policy, seed and every option that changes results).
std::uint64_t snapshot_config_hash(const std::string& resolved_config_text);

// File format: a text line "schedsim-snapshot\n", format version (u32), config hash
// (u64), payload size (u64), FNV-1a-64 of everything before it and of the payload (u64),
// payload. The checksum covers the header too, so that a damaged config hash or size is
// detected; it is no protection against deliberate edits (anyone can recompute it): the
// state is validated field by field when it is loaded (docs/reliability.md).
std::string encode_snapshot_file(std::uint64_t config_hash, const std::string& payload);
// The payload of a snapshot file's bytes; throws InputError naming `where` when they are
// not a snapshot, of another format version, truncated, corrupted, or of another
// configuration (config_hash differs).
std::string decode_snapshot_file(const std::string& file_bytes, const std::string& where, std::uint64_t config_hash);

// 2: the event queue saves its front slot; the energy meter its per-job integration
// instants and exact power sums.
// 3: the checksum covers the header; the payload starts with the config hash; flags are
// one byte each.
// 4: the metrics collector saves its time integrals and measurement window; the rounds
// policy its allocation tables.
// 5: jobs save their bound devices (non-gang placement) and bound-idle device-time.
constexpr std::uint32_t kSnapshotFormatVersion = 5;

// FNV-1a-64, continuing from `h` (for files hashed piece by piece).
std::uint64_t fnv1a64(const char* data, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ULL);

}  // namespace schedsim
