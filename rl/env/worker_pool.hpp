// Persistent worker threads that run fn(0..n-1) together with the calling thread, for
// work items of a few microseconds each (a VectorEnv step: ~4 us per environment).
//
// Waking a thread blocked on a condition variable costs about as much as such an item, so
// a waiting thread (a worker between rounds, the caller waiting for the items in flight)
// first spins for at most spin_us microseconds, with a pause instruction, watching for
// its signal, and only then blocks. The spin is bounded: on a loaded machine a waiting
// thread gives its core back after spin_us (an unbounded spin loop, as libgomp's, can
// make such a machine many times slower). Items are claimed one at a time and the caller
// waits only for items, not for workers: a worker that is slow to wake (descheduled on a
// busy machine) finds the round done and claims nothing, so the caller never waits for
// it to be scheduled. Which thread runs which index varies from round to round; callers
// keep results independent of it by writing only per-index outputs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace schedsim::rl {

class WorkerPool {
 public:
  static constexpr int kDefaultSpinUs = 50;
  static constexpr int kMaxItems = 0xFFFF;  // per run(): n and the next index share a word
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

  // How often a waiting thread had to block (its spin ran out) since construction: a
  // diagnostic of the spin window, not deterministic.
  std::uint64_t blocked_waits() const { return blocked_waits_.load(std::memory_order_relaxed); }

 private:
  // The round's ticket: round number (high 32 bits), item count n (bits 16..31), next
  // index to claim (low 16 bits). One word, so that a claim (compare-and-swap of the
  // index) can only succeed in the round whose n it read, however late its thread runs.
  static std::uint32_t round_of(std::uint64_t t) { return static_cast<std::uint32_t>(t >> 32); }
  // Claims and runs items of the round in `t` until none is left; `fn` is read after a
  // successful claim (an item of the round still open, so the round's own function).
  void claim(std::uint64_t t);
  void work();
  // Spins up to spin_us_ until done() holds; true when it did.
  template <class Done>
  bool spin_until(Done done) const;

  std::vector<std::thread> workers_;
  const int spin_us_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<const std::function<void(int)>*> fn_{nullptr};  // written before the ticket
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<int> completed_{0};  // items of this round finished
  // Sleepers announce themselves under the mutex before their last check of the
  // condition (sequentially consistent, as the signaller's update then its read): the
  // signaller takes the mutex and notifies only when someone may be blocked, so no
  // wake-up is lost.
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> blocked_waits_{0};
};

}  // namespace schedsim::rl
