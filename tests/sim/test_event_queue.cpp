#include <catch2/catch.hpp>

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
