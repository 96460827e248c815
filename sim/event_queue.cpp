#include "sim/event_queue.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace schedsim {
namespace {

// Min-heap order on (time, id).
inline bool earlier(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.id < b.id);
}

}  // namespace

// A 4-ary heap: half the depth of a binary heap, and the four children of a node share
// a cache line or two, so a pop touches fewer lines. Sifting moves a hole instead of
// swapping.
void EventQueue::sift_up(std::size_t i) {
  Event e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::pop_top() {
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

EventId EventQueue::schedule(Tick at, std::uint32_t kind, std::int64_t arg) {
  if (at < now_) {
    throw InvariantError("event scheduled in the past: at t=" + format_seconds(at) +
                         " s while the clock is at " + format_seconds(now_) + " s");
  }
  const EventId id = next_id_++;
  heap_.push_back(Event{at, id, kind, arg});
  sift_up(heap_.size() - 1);
  return id;
}

void EventQueue::cancel(EventId id) {
  if (id == 0 || id >= next_id_) throw InvariantError("cancel of unknown event id " + std::to_string(id));
  if (!cancelled_.insert(id).second) throw InvariantError("event " + std::to_string(id) + " cancelled twice");
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && !cancelled_.empty()) {
    auto it = cancelled_.find(heap_.front().id);
    if (it == cancelled_.end()) return;
    cancelled_.erase(it);
    pop_top();
  }
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

Tick EventQueue::next_time() {
  drop_cancelled_top();
  return heap_.front().time;
}

Event EventQueue::pop() {
  drop_cancelled_top();
  const Event e = heap_.front();
  pop_top();
  now_ = e.time;
  return e;
}

}  // namespace schedsim
