#include "rl/env/worker_pool.hpp"

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

WorkerPool::WorkerPool(int threads, int spin_us) : spin_us_(spin_us < 0 ? 0 : spin_us) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
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
  }
}

void WorkerPool::run(int n, const std::function<void(int)>& fn) {
  if (n < 0 || n > kMaxItems) throw std::invalid_argument("WorkerPool::run: " + std::to_string(n) + " items, allowed 0.." + std::to_string(kMaxItems));
  if (workers_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  if (n == 0) return;
  fn_.store(&fn, std::memory_order_relaxed);
  completed_.store(0, std::memory_order_relaxed);
  const std::uint64_t round = round_of(ticket_.load(std::memory_order_relaxed)) + 1U;
  const std::uint64_t t = (round & 0xFFFFFFFFULL) << 32 | static_cast<std::uint64_t>(n) << 16;
  ticket_.store(t);  // publishes fn_ and completed_ (sequentially consistent)
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  claim(t);
  if (!spin_until([&] { return completed_.load(std::memory_order_acquire) == n; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    blocked_waits_.fetch_add(1, std::memory_order_relaxed);
    done_.wait(lock, [&] { return completed_.load() == n; });
    caller_sleeping_.store(false);
  }
}

void WorkerPool::claim(std::uint64_t t) {
  const std::uint32_t round = round_of(t);
  while (round_of(t) == round) {
    const int n = static_cast<int>((t >> 16) & 0xFFFF);
    const int i = static_cast<int>(t & 0xFFFF);
    if (i >= n) return;
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    (*fn_.load(std::memory_order_relaxed))(i);  // ordered by the claim's acquire
    // The last item of the round wakes the caller if it stopped spinning.
    if (completed_.fetch_add(1) + 1 == n && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
    t = ticket_.load(std::memory_order_acquire);
  }
}

void WorkerPool::work() {
  std::uint32_t seen = 0;
  auto ready = [&] { return stop_.load() || round_of(ticket_.load()) != seen; };
  while (true) {
    if (!spin_until(ready)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_workers_.fetch_add(1);
      blocked_waits_.fetch_add(1, std::memory_order_relaxed);
      wake_.wait(lock, ready);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    const std::uint64_t t = ticket_.load(std::memory_order_acquire);
    seen = round_of(t);
    claim(t);
  }
}

}  // namespace schedsim::rl
