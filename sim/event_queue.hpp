// The kernel's future-event list. Events are ordered by (time, sequence number): two
// events at the same tick fire in the order they were scheduled, never by pointer or
// hash order. Any event can be cancelled by its id; cancellation is lazy (the event is
// skipped when it reaches the top), which keeps rescheduling a job O(log n).
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "sim/tick.hpp"

namespace schedsim {

class SnapshotArchive;

using EventId = std::uint64_t;

struct Event {
  Tick time;
  EventId id = 0;         // also the sequence number that breaks ties
  std::uint32_t kind = 0; // meaning defined by the owner of the queue
  std::int64_t arg = 0;   // e.g. the job slot the event is about
};

class EventQueue {
 public:
  // Schedules an event at absolute time `at`, which must not lie before the time of the
  // last event popped (ns-3's rule: no scheduling into the past). Throws InvariantError.
  EventId schedule(Tick at, std::uint32_t kind, std::int64_t arg);
  // Cancels a pending event. The caller must only cancel events that have not fired
  // (the kernel clears its stored ids when an event fires); an unknown id or a second
  // cancel of the same id throws InvariantError.
  void cancel(EventId id);

  // True when no live (uncancelled) event is left.
  bool empty();
  // Time of the next live event; requires !empty().
  Tick next_time();
  // Removes and returns the next live event; requires !empty().
  Event pop();

  Tick last_popped_time() const { return now_; }
  // The next live event without removing it; requires !empty().
  const Event& peek() {
    drop_cancelled_top();
    return heap_.front();
  }
  std::uint64_t live_count() const { return heap_.size() - cancelled_.size(); }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);

 private:
  void drop_cancelled_top();
  void sift_up(std::size_t i);
  void pop_top();

  std::vector<Event> heap_;
  std::unordered_set<EventId> cancelled_;
  EventId next_id_ = 1;
  Tick now_;
};

}  // namespace schedsim
