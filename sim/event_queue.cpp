#include "sim/event_queue.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace schedsim {
namespace {

constexpr EventId kNoEvent = 0;  // the id a free slot holds

// A strict total order on (time, id): any heap pops the events in the same sequence.
template <class E>
inline bool earlier(const E& a, const E& b) {
  return a.time < b.time || (a.time == b.time && a.id < b.id);
}

}  // namespace

// A 4-ary heap: half the depth of a binary heap, and the four children of a node share
// a cache line, so a pop touches fewer lines. Sifting moves a hole instead of swapping.
void EventQueue::sift_up(std::size_t i, Entry e) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void EventQueue::sift_down(std::size_t i, Entry e) {
  const std::size_t n = heap_.size();
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], e)) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, e);
}

void EventQueue::remove_at(std::size_t i) {
  const std::uint32_t slot = slot_of(heap_[i].id);
  events_[slot].id = kNoEvent;
  free_slots_.push_back(slot);
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  // The last entry fills the hole: it moves up if it is earlier than the hole's parent,
  // down otherwise.
  if (i > 0 && earlier(last, heap_[(i - 1) / 4])) {
    sift_up(i, last);
  } else {
    sift_down(i, last);
  }
}

EventId EventQueue::schedule(Tick at, std::uint32_t kind, std::int64_t arg) {
  if (at < now_) {
    throw InvariantError("event scheduled in the past: at t=" + format_seconds(at) +
                         " s while the clock is at " + format_seconds(now_) + " s");
  }
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (events_.size() >= (std::size_t{1} << kEventSlotBits)) {
      throw InvariantError("more than " + std::to_string(std::size_t{1} << kEventSlotBits) +
                           " events pending at once (the event queue's limit)");
    }
    slot = static_cast<std::uint32_t>(events_.size());
    events_.emplace_back();
    pos_.push_back(0);
  }
  const EventId id = (next_seq_++ << kEventSlotBits) | slot;
  events_[slot] = Event{at, id, kind, arg};
  heap_.emplace_back();
  sift_up(heap_.size() - 1, Entry{at, id});
  return id;
}

void EventQueue::cancel(EventId id) {
  const std::uint32_t slot = slot_of(id);
  if (id == kNoEvent || slot >= events_.size() || events_[slot].id != id) {
    throw InvariantError("cancel of event " + std::to_string(id) + ", which is not pending (never scheduled, fired or cancelled before)");
  }
  remove_at(pos_[slot]);
}

Event EventQueue::pop() {
  const Event e = events_[slot_of(heap_.front().id)];
  remove_at(0);
  now_ = e.time;
  return e;
}

}  // namespace schedsim
