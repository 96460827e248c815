// The VectorEnv's worker pool: every index runs exactly once per round whatever the
// thread count, spin window or pauses between rounds (which make the threads block and
// be woken), and a round larger than the claim word allows is refused.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rl/env/worker_pool.hpp"

namespace schedsim::rl {
namespace {

TEST_CASE("WorkerPool runs every index exactly once per round", "[rl][pool]") {
  for (int threads : {1, 2, 3, 5}) {
    for (int spin_us : {0, 50}) {
      WorkerPool pool(threads, spin_us);
      CHECK(pool.threads() == threads);
      for (int n : {0, 1, 3, 8, 100}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::vector<int> value(static_cast<std::size_t>(n), 0);
        const int rounds = 300;
        for (int r = 0; r < rounds; ++r) {
          // Each index adds to its own slot only: the outputs cannot depend on which
          // thread ran it (the VectorEnv's rule).
          pool.run(n, [&](int i) {
            hits[static_cast<std::size_t>(i)].fetch_add(1);
            value[static_cast<std::size_t>(i)] += i * r;
          });
          // Now and then the caller does something else for longer than the spin
          // window: the workers block and must be woken for the next round.
          if (r % 50 == 49) std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        for (int i = 0; i < n; ++i) {
          INFO("threads " << threads << " spin " << spin_us << " n " << n << " index " << i);
          CHECK(hits[static_cast<std::size_t>(i)].load() == rounds);
          CHECK(value[static_cast<std::size_t>(i)] == i * (rounds - 1) * rounds / 2);
        }
      }
      if (threads == 1) CHECK(pool.blocked_waits() == 0);  // nothing to wait for
    }
  }
}

TEST_CASE("WorkerPool refuses more items than a claim word holds", "[rl][pool]") {
  WorkerPool pool(2);
  CHECK_THROWS_AS(pool.run(WorkerPool::kMaxItems + 1, [](int) {}), std::invalid_argument);
  CHECK_THROWS_AS(pool.run(-1, [](int) {}), std::invalid_argument);
  std::atomic<int> count{0};
  pool.run(WorkerPool::kMaxItems, [&](int) { count.fetch_add(1); });
  CHECK(count.load() == WorkerPool::kMaxItems);
}

}  // namespace
}  // namespace schedsim::rl
