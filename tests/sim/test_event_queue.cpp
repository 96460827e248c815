#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "sim/event_queue.hpp"
#include "sim/snapshot_archive.hpp"

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

namespace {

// An event queue beside a reference model: the live events in a sorted set of
// (time, schedule order). Every operation is applied to both and checked.
struct ModelledQueue {
  EventQueue q;
  std::set<std::pair<std::int64_t, std::int64_t>> model;  // (time us, arg = schedule order)
  std::vector<std::pair<EventId, std::pair<std::int64_t, std::int64_t>>> pending;
  std::int64_t order = 0;

  void add(std::int64_t at) {
    pending.push_back({q.schedule(Tick::from_us(at), 1, order), {at, order}});
    model.insert({at, order});
    ++order;
  }
  // Cancels pending[k]; a second cancel of it throws.
  void drop(std::size_t k) {
    q.cancel(pending[k].first);
    CHECK_THROWS_AS(q.cancel(pending[k].first), InvariantError);
    model.erase(pending[k].second);
    pending[k] = pending.back();
    pending.pop_back();
  }
  // Pops and checks the event against the model (peek and next_time first); a cancel of
  // the fired event throws.
  Event pop() {
    REQUIRE(!q.empty());
    REQUIRE(q.peek().arg == model.begin()->second);
    REQUIRE(q.next_time().us() == model.begin()->first);
    const Event e = q.pop();
    REQUIRE(e.time.us() == model.begin()->first);
    REQUIRE(e.arg == model.begin()->second);
    REQUIRE(q.last_popped_time() == e.time);
    model.erase(model.begin());
    const auto it = std::find_if(pending.begin(), pending.end(), [&](const auto& p) { return p.first == e.id; });
    REQUIRE(it != pending.end());
    CHECK_THROWS_AS(q.cancel(e.id), InvariantError);  // fired: no longer pending
    *it = pending.back();
    pending.pop_back();
    return e;
  }
  // The queue holds exactly the live events (no tombstones).
  void check_counts() const {
    REQUIRE(q.live_count() == model.size());
    REQUIRE(q.empty() == model.empty());
  }
};

// Pops everything, as (time us, arg) pairs.
std::vector<std::pair<std::int64_t, std::int64_t>> drain(EventQueue& q) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  while (!q.empty()) {
    const Event e = q.pop();
    out.push_back({e.time.us(), e.arg});
  }
  return out;
}

}  // namespace

TEST_CASE("cancelled events leave the heap at once and pops keep (time, sequence) order", "[sim][event_queue]") {
  // Random schedules, cancellations and pops, many at equal ticks.
  ModelledQueue m;
  std::mt19937_64 rng(7);
  std::int64_t now_us = 0;
  std::uint64_t pops = 0;
  for (int step = 0; step < 20000; ++step) {
    const auto r = rng() % 10;
    if (r < 5 || m.pending.empty()) {
      m.add(now_us + static_cast<std::int64_t>(rng() % 50));
    } else if (r < 8) {
      m.drop(rng() % m.pending.size());
    } else {
      now_us = m.pop().time.us();
      ++pops;
    }
    m.check_counts();
  }
  CHECK(pops > 1000);
}

TEST_CASE("the kernel's pattern: a near arrival at a time among far completions, the earliest cancelled", "[sim][event_queue]") {
  // What the kernel does: one pending arrival about a second ahead (usually the earliest
  // event: the queue keeps it out of the heap) among thousands of completions hours
  // ahead, completions rescheduled (cancel + schedule), the earliest event cancelled,
  // events scheduled earlier than the earliest, and bursts at one tick.
  ModelledQueue m;
  std::mt19937_64 rng(11);
  std::int64_t now_us = 0;
  std::uint64_t earliest_cancels = 0;
  std::uint64_t pops = 0;
  for (int i = 0; i < 3000; ++i) m.add(static_cast<std::int64_t>(rng() % 3'600'000'000));
  for (int step = 0; step < 60000; ++step) {
    const auto r = rng() % 100;
    if (r < 35) {
      m.add(now_us + 1 + static_cast<std::int64_t>(rng() % 2'000'000));  // an arrival
    } else if (r < 55) {
      m.add(now_us + static_cast<std::int64_t>(rng() % 7'200'000'000));  // a completion
    } else if (r < 60) {
      for (int b = 0; b < 3; ++b) m.add(now_us);  // a burst at this tick
    } else if (r < 70 && !m.pending.empty()) {
      m.drop(rng() % m.pending.size());  // a reschedule's cancel
    } else if (r < 75 && !m.pending.empty()) {
      const auto first = *m.model.begin();
      const auto it = std::find_if(m.pending.begin(), m.pending.end(), [&](const auto& p) { return p.second == first; });
      REQUIRE(it != m.pending.end());
      m.drop(static_cast<std::size_t>(it - m.pending.begin()));
      ++earliest_cancels;
    } else if (!m.model.empty()) {
      now_us = m.pop().time.us();
      ++pops;
    }
    m.check_counts();
  }
  CHECK(pops > 10000);
  CHECK(earliest_cancels > 1000);
  const std::vector<std::pair<std::int64_t, std::int64_t>> rest(m.model.begin(), m.model.end());
  CHECK(drain(m.q) == rest);
}

TEST_CASE("an event earlier than the earliest pending one fires first, the displaced one next", "[sim][event_queue]") {
  EventQueue q;
  q.schedule(Tick::from_us(100), 1, 0);
  q.schedule(Tick::from_us(50), 1, 1);   // earlier than everything: the new earliest
  q.schedule(Tick::from_us(10), 1, 2);   // earlier still: 50 goes back among the others
  q.schedule(Tick::from_us(10), 1, 3);   // same tick as the earliest: after it
  const EventId c = q.schedule(Tick::from_us(5), 1, 4);
  q.cancel(c);                            // the earliest cancelled: 10 (arg 2) is next
  CHECK(q.live_count() == 4);
  CHECK(q.peek().arg == 2);
  CHECK(drain(q) == std::vector<std::pair<std::int64_t, std::int64_t>>{{10, 2}, {10, 3}, {50, 1}, {100, 0}});
}

TEST_CASE("a saved and restored event queue pops what the original pops and rejects the same cancels", "[sim][event_queue][snapshot]") {
  // Saved while the earliest event sits outside the heap (an arrival before all
  // completions) and while it does not.
  for (const bool near_first : {true, false}) {
    EventQueue q;
    std::mt19937_64 rng(3);
    std::vector<EventId> ids;
    for (int i = 0; i < 200; ++i) ids.push_back(q.schedule(Tick::from_us(1000 + static_cast<std::int64_t>(rng() % 100000)), 2, i));
    const EventId latest = q.schedule(Tick::from_us(500000), 2, 200);  // pending until the end
    for (int i = 0; i < 50; ++i) q.pop();
    const EventId cancelled = ids[150];
    q.cancel(cancelled);
    if (near_first) q.schedule(q.last_popped_time(), 7, -1);
    SnapshotArchive out;
    q.snapshot(out);
    EventQueue restored;
    SnapshotArchive in(out.bytes(), "test");
    restored.snapshot(in);
    in.expect_end();
    CHECK(restored.live_count() == q.live_count());
    CHECK(restored.last_popped_time() == q.last_popped_time());
    CHECK_THROWS_AS(restored.cancel(cancelled), InvariantError);
    // Both continue alike: new ids, a cancel of a restored event, and the pops.
    CHECK(restored.schedule(Tick::from_us(200000), 3, 999) == q.schedule(Tick::from_us(200000), 3, 999));
    q.cancel(latest);
    restored.cancel(latest);
    const auto a = drain(q);
    CHECK(a.size() > 100);
    CHECK(drain(restored) == a);
  }
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
