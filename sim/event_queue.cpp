#include "sim/event_queue.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"

namespace schedsim {
namespace {

constexpr EventId kNoEvent = 0;  // the id a free slot holds, and front_'s when empty

// A strict total order on (time, id): any heap pops the events in the same sequence.
// Compared as one 128-bit key (time above id; times are never negative: nothing is
// scheduled before t=0), which compiles to a compare and a subtract-with-borrow, no branch.
template <class E>
inline bool earlier(const E& a, const E& b) {
  __extension__ using Key = unsigned __int128;  // a GCC/Clang type: __extension__ quiets -Wpedantic
  const Key ka = static_cast<Key>(static_cast<std::uint64_t>(a.time.us())) << 64 | a.id;
  const Key kb = static_cast<Key>(static_cast<std::uint64_t>(b.time.us())) << 64 | b.id;
  return ka < kb;
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

// Bottom-up removal: the hole left at i sinks to a leaf, each time filled by its
// earliest child, without comparing against the entry that will fill it in the end (the
// heap's last entry, which almost always belongs near the bottom: it would lose every
// comparison on the way down). Three comparisons a level instead of four, and the
// earliest of four children is picked by a tournament of branch-free selects, where the
// winner is unpredictable. Returns the leaf position of the hole.
std::size_t EventQueue::sink_hole(std::size_t i) {
  const std::size_t n = heap_.size();
  Entry* const h = heap_.data();
  std::uint32_t* const pos = pos_.data();
  while (true) {
    const std::size_t first = 4 * i + 1;
    std::size_t best;
    if (first + 4 <= n) {
      // Offsets computed from the comparisons' 0/1 results, so no branch on them.
      const Entry* c = h + first;
      const std::size_t a = earlier(c[1], c[0]);
      const std::size_t b = 2 + earlier(c[3], c[2]);
      const std::size_t b_wins = earlier(c[b], c[a]);
      best = first + (a ^ ((a ^ b) & (0 - b_wins)));
    } else if (first < n) {
      best = first;
      for (std::size_t c = first + 1; c < n; ++c) {
        if (earlier(h[c], h[best])) best = c;
      }
    } else {
      return i;
    }
    const Entry e = h[best];
    h[i] = e;
    pos[slot_of(e.id)] = static_cast<std::uint32_t>(i);
    i = best;
  }
}

void EventQueue::release_slot(std::uint32_t slot) {
  events_[slot].id = kNoEvent;
  free_slots_.push_back(slot);
}

void EventQueue::push_heap(const Entry& e) {
  heap_.emplace_back();
  sift_up(heap_.size() - 1, e);
}

void EventQueue::remove_at(std::size_t i) {
  release_slot(slot_of(heap_[i].id));
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  // The hole sinks to a leaf; the last entry fills it there and rises to its place, which
  // may lie above i when an inner entry was cancelled. Usually it stays at the leaf.
  const std::size_t leaf = sink_hole(i);
  if (leaf == 0 || !earlier(last, heap_[(leaf - 1) / 4])) {
    place(leaf, last);
  } else {
    sift_up(leaf, last);
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
  const Entry e{at, id};
  if (front_.id == kNoEvent) {
    if (heap_.empty() || earlier(e, heap_[0])) {
      set_front(e);
    } else {
      push_heap(e);
    }
  } else if (earlier(e, front_)) {
    // Rare: earlier than the earliest. The old front is earlier than the whole heap, so it
    // rises to the root.
    push_heap(front_);
    set_front(e);
  } else {
    push_heap(e);
  }
  return id;
}

void EventQueue::cancel(EventId id) {
  const std::uint32_t slot = slot_of(id);
  if (id == kNoEvent || slot >= events_.size() || events_[slot].id != id) {
    throw InvariantError("cancel of event " + std::to_string(id) + ", which is not pending (never scheduled, fired or cancelled before)");
  }
  if (pos_[slot] == kAtFront) {
    release_slot(slot);
    front_.id = kNoEvent;
  } else {
    remove_at(pos_[slot]);
  }
}

Event EventQueue::pop() {
  Event e;
  if (front_.id != kNoEvent) {
    const std::uint32_t slot = slot_of(front_.id);
    e = events_[slot];
    release_slot(slot);
    front_.id = kNoEvent;
  } else {
    e = events_[slot_of(heap_.front().id)];
    remove_at(0);
  }
  now_ = e.time;
  return e;
}

}  // namespace schedsim
