// Persistent worker threads that run fn(0..n-1) together with the calling thread, for
// work items of a few microseconds each (a VectorEnv step: ~3 us per environment).
//
// Waking a thread blocked on a condition variable costs about as much as such an item, so
// a waiting thread (a worker between rounds, the caller waiting for the items in flight)
// first spins for at most spin_us microseconds, watching for its signal (pause
// instructions, and a yield of the core every 32 of them: the scheduler may have put two
// threads of the pool on one core, where a spinner would keep the other from working),
// and only then blocks. The spin is bounded: on a loaded machine a waiting
// thread gives its core back after spin_us (an unbounded spin loop, as libgomp's, can
// make such a machine many times slower).
//
// Thread t owns the t-th block of the indices and takes its items first, so an index
// keeps running on the same thread from round to round while the threads keep pace (its
// data stays in that core's cache). A thread that is done takes what is left of another
// block only when that block's owner has made no progress for kStealAfterUs (it is
// descheduled, or in one long item): moving an environment to the other core moves its
// data too, which costs more than its step when the two vCPUs share no cache (on a KVM
// host that varies from minute to minute). So the caller waits only for items, never
// for a worker that is not running. Each thread counts the items it ran on a cache line
// of its own. Which thread runs which index still varies with timing; callers keep
// results independent of it by writing only per-index outputs.
//
// Whether a round is worth sharing depends on the machine: on an idle one the threads
// run side by side, on one whose cores are busy with other work the hand-offs (and a
// worker descheduled in the middle of an item) cost more than they save. The caller
// times its rounds (per item) and keeps a running mean of the way it prefers; after
// kProbeEvery rounds it tries the other way for kProbeRounds rounds and switches when
// their mean is lower; a probe that changes nothing comes back after twice as many rounds
// (up to kMaxProbeEvery: a shared probe on a busy machine can stall for a scheduler time
// slice). A round counts at most 4 times the mean (one stall does not decide); the first
// kProbeWarmup rounds of a probe, and the first round after the preferred way resumes, are
// not timed (workers that blocked meanwhile take a while to wake). So on a busy machine
// the pool costs about what one thread does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace schedsim::rl {

class WorkerPool {
 public:
  static constexpr int kDefaultSpinUs = 50;
  static constexpr int kMaxItems = 0xFFFF;  // per run(): indices share a word with the round
  static constexpr int kProbeEvery = 64;
  static constexpr int kProbeRounds = 12;
  static constexpr int kProbeWarmup = 4;  // of those, not timed
  static constexpr int kMaxProbeEvery = 1024;
  static constexpr int kStealAfterUs = 30;  // a block's owner this long without progress loses its items
  // `threads` - 1 workers (the caller is the other thread); spin_us < 0 counts as 0
  // (block at once).
  explicit WorkerPool(int threads, int spin_us = kDefaultSpinUs);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(i) for every i in 0..n-1 exactly once, on the caller and the workers; returns
  // when all are done. fn must not throw (catch inside and report per index). n at most
  // kMaxItems (std::invalid_argument beyond).
  void run(int n, const std::function<void(int)>& fn);

  // Diagnostics since construction, not deterministic: waits that outlasted the spin
  // and blocked, and items run by a thread other than their block's owner.
  std::uint64_t blocked_waits() const { return blocked_waits_.load(std::memory_order_relaxed); }
  std::uint64_t stolen_items() const { return stolen_items_.load(std::memory_order_relaxed); }
  // Rounds run on the caller alone because that was the cheaper way (see above).
  std::uint64_t serial_rounds() const { return serial_rounds_; }

 private:
  // A block's claim word: round (high 32 bits), end (bits 16..31), next index (low 16
  // bits). A claim is a compare-and-swap of the whole word, so it can only take an item of
  // the round the word holds, however late its thread runs; that round is then still
  // open (the item is not done), so fn_ is still its function.
  struct alignas(64) Block {
    std::atomic<std::uint64_t> word{0};
    // Items thread b (the block's owner) has run since construction, on a line of its
    // own: only that thread writes it, so finishing an item moves no line between cores.
    alignas(64) std::atomic<std::uint64_t> done{0};
  };
  static std::uint32_t round_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
  // Runs items while any is left: own block first, then the others in turn.
  void claim(int self);
  bool claim_from(int block, int self);
  std::uint64_t items_done() const;
  void work(int self);
  // Spins up to spin_us_ until done() holds; true when it did.
  template <class Done>
  bool spin_until(Done done) const;

  std::vector<std::thread> workers_;
  const int spin_us_;
  std::unique_ptr<Block[]> blocks_;  // one per thread
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<const std::function<void(int)>*> fn_{nullptr};  // written before the blocks
  alignas(64) std::atomic<std::uint32_t> round_{0};           // bumped after the blocks
  // Sleepers announce themselves under the mutex before their last check of the
  // condition (sequentially consistent, as the signaller's update then its read): the
  // signaller takes the mutex and notifies only when someone may be blocked, so no
  // wake-up is lost.
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> blocked_waits_{0};
  std::atomic<std::uint64_t> stolen_items_{0};
  // The caller's choice between serial and shared rounds (only the caller touches these).
  std::uint64_t target_ = 0;  // items handed out since construction: the round is done when items_done() reaches it
  bool prefer_shared_ = true;
  bool last_shared_ = false;  // the first round (threads just started) is not timed
  double mean_ns_ = -1.0;     // per item, the preferred way (exponentially weighted; < 0 until measured)
  int probe_every_ = kProbeEvery;
  int since_probe_ = kProbeEvery - 8;  // the first probe comes early
  int probe_left_ = 0;
  double probe_sum_ns_ = 0.0;
  int probe_timed_ = 0;
  std::uint64_t serial_rounds_ = 0;
  void run_shared(int n, const std::function<void(int)>& fn);
};

}  // namespace schedsim::rl
