#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sim/error.hpp"
#include "sim/event_queue.hpp"

using namespace schedsim;

TEST_CASE("events fire in (time, sequence) order", "[sim][event_queue]") {
  EventQueue q;
  q.schedule(Tick::from_us(20), 1, 0);
  q.schedule(Tick::from_us(10), 1, 1);
  q.schedule(Tick::from_us(20), 1, 2);  // same time as the first: fires after it
  q.schedule(Tick::from_us(10), 1, 3);
  std::vector<std::int64_t> order;
  while (!q.empty()) order.push_back(q.pop().arg);
  CHECK(order == std::vector<std::int64_t>{1, 3, 0, 2});
}

TEST_CASE("cancelled events never fire and do not count as live", "[sim][event_queue]") {
  EventQueue q;
  const EventId a = q.schedule(Tick::from_us(5), 1, 10);
  q.schedule(Tick::from_us(6), 1, 11);
  const EventId c = q.schedule(Tick::from_us(7), 1, 12);
  q.cancel(a);
  q.cancel(c);
  CHECK_THROWS_AS(q.cancel(c), InvariantError);  // cancelled twice
  CHECK(q.live_count() == 1);
  CHECK(q.next_time() == Tick::from_us(6));
  CHECK(q.pop().arg == 11);
  CHECK(q.empty());
  CHECK_THROWS_AS(q.cancel(999), InvariantError);  // never scheduled
}

TEST_CASE("cancelled events leave the heap at once and pops keep (time, sequence) order", "[sim][event_queue]") {
  // A reference model: the live events in a sorted set of (time, schedule order). Random
  // schedules, cancellations and pops, many at equal ticks; after each operation the
  // queue holds exactly the live events (no tombstones) and pops what the model pops.
  EventQueue q;
  std::set<std::pair<std::int64_t, std::int64_t>> model;  // (time us, arg = schedule order)
  std::vector<std::pair<EventId, std::pair<std::int64_t, std::int64_t>>> pending;
  std::mt19937_64 rng(7);
  std::int64_t order = 0;
  std::int64_t now_us = 0;
  std::uint64_t pops = 0;
  for (int step = 0; step < 20000; ++step) {
    const auto r = rng() % 10;
    if (r < 5 || pending.empty()) {
      const std::int64_t at = now_us + static_cast<std::int64_t>(rng() % 50);
      const EventId id = q.schedule(Tick::from_us(at), 1, order);
      pending.push_back({id, {at, order}});
      model.insert({at, order});
      ++order;
    } else if (r < 8) {
      const std::size_t k = rng() % pending.size();
      q.cancel(pending[k].first);
      CHECK_THROWS_AS(q.cancel(pending[k].first), InvariantError);
      model.erase(pending[k].second);
      pending[k] = pending.back();
      pending.pop_back();
    } else {
      REQUIRE(!q.empty());
      REQUIRE(q.peek().arg == model.begin()->second);
      const Event e = q.pop();
      ++pops;
      REQUIRE(e.time.us() == model.begin()->first);
      REQUIRE(e.arg == model.begin()->second);
      now_us = e.time.us();
      model.erase(model.begin());
      const auto it = std::find_if(pending.begin(), pending.end(), [&](const auto& p) { return p.first == e.id; });
      REQUIRE(it != pending.end());
      CHECK_THROWS_AS(q.cancel(e.id), InvariantError);  // fired: no longer pending
      *it = pending.back();
      pending.pop_back();
    }
    REQUIRE(q.live_count() == model.size());
    REQUIRE(q.empty() == model.empty());
  }
  CHECK(pops > 1000);
}

TEST_CASE("scheduling into the past is a kernel error", "[sim][event_queue]") {
  EventQueue q;
  q.schedule(Tick::from_us(100), 1, 0);
  q.pop();
  CHECK_NOTHROW(q.schedule(Tick::from_us(100), 1, 0));  // zero delay is fine
  CHECK_THROWS_WITH(q.schedule(Tick::from_us(99), 1, 0), Catch::Contains("event scheduled in the past"));
}

TEST_CASE("ticks convert from seconds exactly and print as exact decimals", "[sim][tick]") {
  CHECK(Tick::from_seconds(1.5).us() == 1'500'000);
  CHECK(Tick::from_seconds(0.0000004).us() == 0);
  CHECK(Tick::from_seconds(0.0000006).us() == 1);
  CHECK(format_seconds(Tick::from_us(1'500'000)) == "1.5");
  CHECK(format_seconds(Tick::from_us(3'000'000)) == "3");
  CHECK(format_seconds(Tick::from_us(1)) == "0.000001");
  CHECK(format_seconds(Tick::from_us(-2'000'010)) == "-2.00001");
  CHECK_THROWS(Tick::from_seconds(std::nan("")));
  CHECK_THROWS(Tick::from_seconds(1e300));
}
