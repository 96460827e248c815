// A bitset over [0, size) with a summary word per 4,096 bits (bit w of summary word s:
// word 64 s + w has a set bit), so next() skips empty stretches 4,096 bits at a time, and
// a count, so empty() is O(1). No allocation after construction: the free-device map of
// the cluster and the placement index's buckets of nodes use it on hot paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedsim {

class SnapshotArchive;

class SummaryBitset {
 public:
  SummaryBitset() = default;
  explicit SummaryBitset(std::size_t size) : words_((size + 63) / 64, 0), summary_((words_.size() + 63) / 64, 0) {}

  bool test(std::size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1U; }
  bool empty() const { return count_ == 0; }
  std::size_t count() const { return count_; }
  void set(std::size_t i) {
    std::uint64_t& word = words_[i >> 6];
    const std::uint64_t bit = 1ULL << (i & 63);
    if (word & bit) return;
    word |= bit;
    summary_[i >> 12] |= 1ULL << ((i >> 6) & 63);
    ++count_;
  }
  void reset(std::size_t i) {
    std::uint64_t& word = words_[i >> 6];
    const std::uint64_t bit = 1ULL << (i & 63);
    if (!(word & bit)) return;
    word &= ~bit;
    if (word == 0) summary_[i >> 12] &= ~(1ULL << ((i >> 6) & 63));
    --count_;
  }
  // The first set bit at or after `from`, -1 if none.
  std::int64_t next(std::int64_t from) const {
    if (from < 0) from = 0;
    std::size_t w = static_cast<std::size_t>(from) >> 6;
    if (w >= words_.size()) return -1;
    std::uint64_t word = words_[w] & (~0ULL << (from & 63));
    if (word == 0) {  // the next word with a set bit, from the summary
      if (++w == words_.size()) return -1;
      std::size_t s = w >> 6;
      std::uint64_t summary = summary_[s] & (~0ULL << (w & 63));
      while (summary == 0) {
        if (++s == summary_.size()) return -1;
        summary = summary_[s];
      }
      w = s * 64 + static_cast<std::size_t>(__builtin_ctzll(summary));
      word = words_[w];
    }
    return static_cast<std::int64_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(word)));
  }

  // Saves or restores the bits (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);
  // For snapshot validation.
  std::size_t words_size() const { return words_.size(); }
  std::size_t summary_size() const { return summary_.size(); }
  std::uint64_t word(std::size_t w) const { return words_[w]; }
  std::uint64_t summary_word(std::size_t s) const { return summary_[s]; }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> summary_;
  std::size_t count_ = 0;
};

}  // namespace schedsim
