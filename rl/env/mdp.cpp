#include "rl/env/mdp.hpp"

#include <algorithm>

#include "world/thermal/thermal.hpp"

namespace schedsim::rl {

void MdpStep::reset(std::unique_ptr<CandidateBuilder> builder) {
  builder_ = std::move(builder);
  clear();
}

void MdpStep::clear() {
  rows_ = 0;
  wait_legal_ = true;
}

bool MdpStep::build(const SchedulerView& view, const PendingQueue& queue, bool future_events) {
  rows_ = builder_->build(view, queue, candidates_);
  wait_legal_ = wait_is_legal(future_events, view.num_running(), view.num_pending());
  for (int i = 0; i < rows_; ++i) {
    if (candidates_[static_cast<std::size_t>(i)].legal) return true;
  }
  return false;
}

bool MdpStep::legal(int action) const {
  if (action == wait_action()) return wait_legal_;
  return action >= 0 && action < rows_ && candidates_[static_cast<std::size_t>(action)].legal;
}

std::string MdpStep::mask_string() const {
  std::string m;
  for (int a = 0; a <= wait_action(); ++a) {
    if (a == wait_action()) m += ' ';
    m += legal(a) ? '1' : '0';
  }
  return m;
}

void MdpStep::write_observation(const SchedulerView& view, const PendingQueue& queue, float* candidates, float* global, std::uint8_t* mask,
                                FeatureLogCache* cache) const {
  const int k = config_.max_candidates;
  write_candidate_rows(view, config_.information, candidates_, rows_, k, candidates, mask, candidate_feature_count(config_), cache);
  mask[k] = wait_legal_ ? 1 : 0;
  write_global_features(view, config_.information, queue, global, global_feature_count(config_), cache);
}

void MdpStep::decode(int action, const SchedulerView& view, ActionBatch& out) const {
  if (action == wait_action()) {
    // Waiting with jobs pending under price/carbon signals: the next signal change is a
    // decision point too, so an agent can defer work to a cheaper or cleaner period; with
    // env.wake_every_s, so is the end of that quantum.
    out.wake_at(std::min(signal_wake(view), quantum_wake(view)));
    return;
  }
  const Candidate& c = candidates_[static_cast<std::size_t>(action)];
  if (c.cooling) {
    for (int s = 0; s < view.thermal()->num_sites(); ++s) out.set_cooling_setpoint(s, c.setpoint_c);
  } else if (c.preempt) {
    out.preempt(c.job);
  } else if (c.migrate) {
    out.move(c.job, Span<DeviceId>(c.devices.data(), c.devices.size()));
  } else {
    out.start(c.job, Span<DeviceId>(c.devices.data(), c.devices.size()));
  }
}

Tick MdpStep::quantum_wake(const SchedulerView& view) const {
  // Only while jobs run: the quantum is for reconsidering them. With nothing running, a
  // wake-up would make waiting legal again and again (rl/env/mdp.hpp, wait_is_legal) and
  // an agent could leave an idle cluster waiting for ever.
  if (config_.wake_every_s <= 0 || view.num_pending() == 0 || view.num_running() == 0) return Tick::max();
  return view.now() + Tick::from_seconds(config_.wake_every_s);
}

void MdpStep::commit(int action, Tick now, PendingQueue& queue) {
  if (action == wait_action()) return;
  const Candidate& c = candidates_[static_cast<std::size_t>(action)];
  if (c.cooling) {
    builder_->cooling_chosen(now);
  } else if (!c.preempt && !c.migrate) {
    queue.started(c.job);
  }
}

}  // namespace schedsim::rl
