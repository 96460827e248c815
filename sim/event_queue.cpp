#include "sim/event_queue.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace schedsim {
namespace {

// std heap algorithms build a max-heap: "later" compares as less.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time > b.time;
    return a.id > b.id;
  }
};

}  // namespace

EventId EventQueue::schedule(Tick at, std::uint32_t kind, std::int64_t arg) {
  if (at < now_) {
    throw InvariantError("event scheduled in the past: at t=" + format_seconds(at) +
                         " s while the clock is at " + format_seconds(now_) + " s");
  }
  const EventId id = next_id_++;
  heap_.push_back(Event{at, id, kind, arg});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
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
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
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
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Event e = heap_.back();
  heap_.pop_back();
  now_ = e.time;
  return e;
}

}  // namespace schedsim
