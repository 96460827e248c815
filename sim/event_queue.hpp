// The kernel's future-event list. Events are ordered by (time, sequence number): two
// events at the same tick fire in the order they were scheduled, never by pointer or
// hash order. Any event can be cancelled by its id; cancellation removes the event from
// the heap at once (the heap knows each pending event's position), so the heap (with the
// front slot) holds exactly the live events and rescheduling a job stays O(log n).
#pragma once

#include <cstdint>
#include <vector>

#include "base/tick.hpp"

namespace schedsim {

class SnapshotArchive;

// A pending event's id: its sequence number in the high bits and the slot that holds it
// in the low kEventSlotBits bits. Ids grow with the sequence number, so ordering by id
// is ordering by sequence number; 0 is never an id.
using EventId = std::uint64_t;
inline constexpr int kEventSlotBits = 24;

struct Event {
  Tick time;
  EventId id = 0;         // also the sequence number that breaks ties
  std::uint32_t kind = 0; // meaning defined by the owner of the queue
  std::int64_t arg = 0;   // e.g. the job slot the event is about
};

class EventQueue {
 public:
  // Schedules an event at absolute time `at`, which must not lie before the time of the
  // last event popped (ns-3's rule: no scheduling into the past). Throws InvariantError,
  // also when more than 2^kEventSlotBits events would be pending at once.
  EventId schedule(Tick at, std::uint32_t kind, std::int64_t arg);
  // Cancels a pending event. The caller must only cancel events that have not fired
  // (the kernel clears its stored ids when an event fires); an unknown id, the id of an
  // event that fired or a second cancel of the same id throws InvariantError.
  void cancel(EventId id);

  // True when no live (uncancelled) event is left.
  bool empty() const { return front_.id == 0 && heap_.empty(); }
  // Time of the next live event; requires !empty().
  Tick next_time() const { return front_.id != 0 ? front_.time : heap_.front().time; }
  // Removes and returns the next live event; requires !empty().
  Event pop();

  Tick last_popped_time() const { return now_; }
  // The next live event without removing it; requires !empty().
  const Event& peek() const { return events_[slot_of(front_.id != 0 ? front_.id : heap_.front().id)]; }
  std::uint64_t live_count() const { return heap_.size() + (front_.id != 0 ? 1 : 0); }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);
  // Snapshot validation: calls f(const Event&) for every pending event, in slot order.
  template <typename F>
  void for_each_pending(F&& f) const {
    for (const Event& e : events_) {
      if (e.id != 0) f(e);
    }
  }
  // Whether `id` is pending with this kind and argument.
  bool holds(EventId id, std::uint32_t kind, std::int64_t arg) const {
    const std::uint32_t slot = slot_of(id);
    return id != 0 && slot < events_.size() && events_[slot].id == id && events_[slot].kind == kind && events_[slot].arg == arg;
  }

 private:
  // What the heap orders: 16 bytes, so a node's four children share one cache line.
  struct Entry {
    Tick time;
    EventId id;
  };
  static std::uint32_t slot_of(EventId id) { return static_cast<std::uint32_t>(id & ((EventId{1} << kEventSlotBits) - 1)); }
  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[slot_of(e.id)] = static_cast<std::uint32_t>(i);
  }
  void set_front(const Entry& e) {
    front_ = e;
    pos_[slot_of(e.id)] = kAtFront;
  }
  void sift_up(std::size_t i, Entry e);
  std::size_t sink_hole(std::size_t i);
  void push_heap(const Entry& e);
  // Removes the entry at heap position i and frees its slot.
  void remove_at(std::size_t i);
  void release_slot(std::uint32_t slot);

  // pos_ of the event held in front_.
  static constexpr std::uint32_t kAtFront = 0xFFFFFFFF;

  // The earliest event, when it was earlier than the whole heap as it was scheduled
  // (id 0: none): a job's next arrival usually is, and then it is scheduled and popped
  // in O(1) instead of rising to the heap's root and sinking a hole back down. Invariant:
  // front_, when set, is earlier than every heap entry.
  Entry front_{Tick(), 0};
  std::vector<Entry> heap_;                // 4-ary min-heap on (time, id)
  std::vector<Event> events_;              // by slot: the pending event held there
  std::vector<std::uint32_t> pos_;         // by slot: its heap position
  std::vector<std::uint32_t> free_slots_;  // slots of fired or cancelled events
  EventId next_seq_ = 1;
  Tick now_;
};

}  // namespace schedsim
