#include "rl/env/worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace schedsim::rl {

namespace {

// Tells the core this is a spin-wait (frees resources for a sibling hyper-thread and
// saves power); a no-op where there is no such hint.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

WorkerPool::WorkerPool(int threads, int spin_us)
    : spin_us_(spin_us < 0 ? 0 : spin_us), blocks_(std::make_unique<Block[]>(static_cast<std::size_t>(threads < 1 ? 1 : threads))) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

template <class Done>
bool WorkerPool::spin_until(Done done) const {
  if (done()) return true;
  if (spin_us_ == 0) return false;
  // The clock is read once per batch of pauses: a pause is 10 to 150 cycles.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  while (true) {
    for (int i = 0; i < 32; ++i) {
      cpu_pause();
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
    // A thread of this pool may be waiting for this core (the scheduler put both on one):
    // let it run. On an idle core this returns at once.
    std::this_thread::yield();
  }
}

void WorkerPool::run(int n, const std::function<void(int)>& fn) {
  if (n < 0 || n > kMaxItems) throw std::invalid_argument("WorkerPool::run: " + std::to_string(n) + " items, allowed 0.." + std::to_string(kMaxItems));
  if (workers_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  if (n == 0) return;
  bool shared = prefer_shared_;
  const bool probing = probe_left_ > 0;
  if (probing) {  // a probe of the other way
    shared = !prefer_shared_;
    --probe_left_;
  } else if (++since_probe_ >= probe_every_ && mean_ns_ >= 0) {
    since_probe_ = 0;
    probe_left_ = kProbeRounds;
    probe_sum_ns_ = 0;
    probe_timed_ = 0;
  }
  // Rounds right after a switch pay for it (workers that blocked meanwhile are woken):
  // not timed.
  const bool timed = probing ? probe_left_ < kProbeRounds - kProbeWarmup : shared == last_shared_;
  last_shared_ = shared;
  const auto start = std::chrono::steady_clock::now();
  if (shared) {
    run_shared(n, fn);
  } else {
    ++serial_rounds_;
    for (int i = 0; i < n; ++i) fn(i);
  }
  if (timed) {
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / n;
    // A round stalled by the operating system counts at most 4 times the mean: sustained
    // stalls still raise it within a few rounds, a single one does not decide.
    if (probing) {
      probe_sum_ns_ += std::min(ns, 4 * mean_ns_);
      ++probe_timed_;
    } else {
      mean_ns_ = mean_ns_ < 0 ? ns : mean_ns_ + (std::min(ns, 4 * mean_ns_) - mean_ns_) / 16;
    }
  }
  if (probing && probe_left_ == 0) {
    if (probe_timed_ > 0 && probe_sum_ns_ / probe_timed_ < mean_ns_) {
      prefer_shared_ = !prefer_shared_;
      mean_ns_ = probe_sum_ns_ / probe_timed_;
      probe_every_ = kProbeEvery;
    } else {
      // A probe that changed nothing comes back later and later (a shared probe on a busy
      // machine can stall for a scheduler time slice).
      probe_every_ = std::min(2 * probe_every_, kMaxProbeEvery);
    }
  }
}

void WorkerPool::run_shared(int n, const std::function<void(int)>& fn) {
  fn_.store(&fn, std::memory_order_relaxed);
  target_ += static_cast<std::uint64_t>(n);
  const std::uint32_t round = round_.load(std::memory_order_relaxed) + 1U;
  const int t = threads();
  for (int b = 0; b < t; ++b) {  // block b: indices [b n / t, (b + 1) n / t)
    const auto begin = static_cast<std::uint64_t>(static_cast<std::int64_t>(b) * n / t);
    const auto end = static_cast<std::uint64_t>(static_cast<std::int64_t>(b + 1) * n / t);
    blocks_[static_cast<std::size_t>(b)].word.store(static_cast<std::uint64_t>(round) << 32 | end << 16 | begin, std::memory_order_release);
  }
  round_.store(round);  // publishes the round (sequentially consistent)
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  claim(0);
  if (!spin_until([&] { return items_done() == target_; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    blocked_waits_.fetch_add(1, std::memory_order_relaxed);
    done_.wait(lock, [&] { return items_done() == target_; });
    caller_sleeping_.store(false);
  }
}

std::uint64_t WorkerPool::items_done() const {
  std::uint64_t sum = 0;
  for (int t = 0; t < threads(); ++t) sum += blocks_[static_cast<std::size_t>(t)].done.load();
  return sum;
}

bool WorkerPool::claim_from(int block, int self) {
  std::atomic<std::uint64_t>& word = blocks_[static_cast<std::size_t>(block)].word;
  std::uint64_t w = word.load(std::memory_order_acquire);
  while (true) {
    const int next = static_cast<int>(w & 0xFFFF);
    const int end = static_cast<int>((w >> 16) & 0xFFFF);
    if (next >= end) return false;
    if (word.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      (*fn_.load(std::memory_order_relaxed))(next);  // ordered by the claim's acquire
      if (block != self) stolen_items_.fetch_add(1, std::memory_order_relaxed);
      blocks_[static_cast<std::size_t>(self)].done.fetch_add(1);  // its own line: no transfer per item
      // The caller may have stopped spinning: it checks its condition again when woken.
      if (caller_sleeping_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
      return true;
    }
  }
}

void WorkerPool::claim(int self) {
  const int t = threads();
  while (claim_from(self, self)) {
  }
  for (int k = 1; k < t; ++k) {
    const int b = (self + k) % t;
    // The owner runs its block while it makes progress: an environment that moves to
    // another core brings its data along, which costs more than its step when the two
    // cores share no cache (the KVM host places the vCPUs). The items are taken only
    // when the owner stalls (descheduled, or one long item) for kStealAfterUs.
    std::atomic<std::uint64_t>& word = blocks_[static_cast<std::size_t>(b)].word;
    std::uint64_t last = word.load(std::memory_order_acquire);
    auto since = std::chrono::steady_clock::now();
    while ((last & 0xFFFF) < ((last >> 16) & 0xFFFF)) {
      std::uint64_t w = last;
      for (int i = 0; i < 32 && w == last; ++i) {
        cpu_pause();
        w = word.load(std::memory_order_acquire);
      }
      const auto now = std::chrono::steady_clock::now();
      if (w != last) {
        last = w;
        since = now;
      } else if (now - since >= std::chrono::microseconds(kStealAfterUs)) {
        while (claim_from(b, self)) {
        }
        break;
      }
    }
  }
}

void WorkerPool::work(int self) {
  std::uint32_t seen = 0;
  auto ready = [&] { return stop_.load() || round_.load() != seen; };
  while (true) {
    if (!spin_until(ready)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_workers_.fetch_add(1);
      blocked_waits_.fetch_add(1, std::memory_order_relaxed);
      wake_.wait(lock, ready);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = round_.load();
    claim(self);
  }
}

}  // namespace schedsim::rl
