#include "policies/reservation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "policies/one_type.hpp"
#include "policies/placement.hpp"
#include "world/geography/datacenters.hpp"

namespace schedsim {

bool compact_pick(const ClusterSpec& spec, const std::vector<int>* node_group, const std::vector<DeviceId>& candidates, int n, std::vector<DeviceId>& out) {
  if (n <= 0) return true;
  if (static_cast<int>(candidates.size()) < n) return false;
  std::map<int, std::vector<DeviceId>> by_node;
  for (DeviceId d : candidates) by_node[spec.node_of(d)].push_back(d);
  for (auto& [node, ds] : by_node) std::sort(ds.begin(), ds.end());
  // One node: best fit.
  int best_node = -1;
  for (const auto& [node, ds] : by_node) {
    const int c = static_cast<int>(ds.size());
    if (c >= n && (best_node < 0 || c < static_cast<int>(by_node[best_node].size()))) best_node = node;
  }
  const std::size_t before = out.size();
  if (best_node >= 0) {
    const auto& ds = by_node[best_node];
    out.insert(out.end(), ds.begin(), ds.begin() + n);
    return true;
  }
  const auto rack_of = [&](int node) { return node_group ? (*node_group)[static_cast<std::size_t>(node)] : 0; };
  std::map<int, int> rack_count;
  for (const auto& [node, ds] : by_node) rack_count[rack_of(node)] += static_cast<int>(ds.size());
  int best_rack = -1;
  for (const auto& [rack, c] : rack_count) {
    if (c >= n && (best_rack < 0 || c < rack_count[best_rack])) best_rack = rack;
  }
  // Nodes (of the chosen rack, or all) with the most candidates first, ties by lower node.
  std::vector<std::pair<int, int>> nodes;  // (-count, node)
  for (const auto& [node, ds] : by_node) {
    if (best_rack < 0 || rack_of(node) == best_rack) nodes.emplace_back(-static_cast<int>(ds.size()), node);
  }
  std::sort(nodes.begin(), nodes.end());
  int left = n;
  for (const auto& [neg, node] : nodes) {
    const auto& ds = by_node[node];
    const int take = std::min(left, static_cast<int>(ds.size()));
    out.insert(out.end(), ds.begin(), ds.begin() + take);
    left -= take;
    if (left == 0) break;
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  return true;
}

namespace {

class ReservationPolicy : public Policy {
 public:
  ReservationPolicy(const ReservationOptions& options, InformationModel information) : options_(options), info_(std::move(information)) {
    info_.require_durations(name(), "its reservations (when running jobs free their devices) and backfilling (whether a job ends before a reservation)");
  }
  std::string name() const override { return "pai-reservation"; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { queue_.emplace(view.job(job).arrival_seq(), job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { queue_.erase({view.job(job).arrival_seq(), job}); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const ClusterState& state = view.cluster_state();
    const int num_devices = view.cluster().num_devices();
    const double now_s = view.now().seconds();
    free_.reset(state);
    // When each device is expected to be free: now, a running job's estimated end, or
    // never (failed, or held in fractional shares, which free at no predictable instant).
    available_at_s_.assign(static_cast<std::size_t>(num_devices), now_s);
    reserved_by_.assign(static_cast<std::size_t>(num_devices), -1);
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (!state.is_free(d) && (state.is_failed(d) || state.is_shared(d))) available_at_s_[static_cast<std::size_t>(d)] = kNever;
    }
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView& r = view.job(s);
      if (r.is_fractional()) continue;
      const double end_s = r.status() == JobStatus::kStopping ? now_s : now_s + remaining_s(view, r);
      for (DeviceId d : r.devices()) available_at_s_[static_cast<std::size_t>(d)] = end_s;
    }
    reservations_.clear();
    int examined = 0;
    for (auto it = queue_.begin(); it != queue_.end() && examined < options_.depth; ++examined) {
      const JobSlot slot = it->second;
      const JobView& j = view.job(slot);
      devices_.clear();
      bool started = false;
      if (j.is_fractional()) {
        started = free_.share(j.gpu_milli(), FreeDevices::ShareRule::kBest, devices_);
      } else {
        const double end_s = now_s + remaining_s(view, j);
        started = try_start(view, j, end_s);
        if (started) {
          for (DeviceId d : devices_) available_at_s_[static_cast<std::size_t>(d)] = end_s;
        } else if (static_cast<int>(reservations_.size()) < options_.max_reservations &&
                   (j.num_gpus() >= options_.reserve_min_gpus || now_s - j.submit().seconds() >= options_.reserve_after_s)) {
          reserve(view, j);
        }
      }
      if (!started) {
        ++it;
        continue;
      }
      out.start(slot, devices_);
      it = queue_.erase(it);
    }
  }

  void snapshot(SnapshotArchive& ar) override {
    ar.section("pai-reservation");
    ar(queue_);
    if (!ar.loading()) return;
    for (const auto& entry : queue_) ar.check_job_slot(entry.second, "pai-reservation's queue");
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  double remaining_s(const SchedulerView& view, const JobView& j) const {
    const double rate = j.physics_rate() > 0 ? j.physics_rate() : 1.0;
    return info_.estimated_remaining_s(view, j) / rate;
  }

  // The device classes a job may use: (device type or -1, datacenter or -1).
  std::vector<std::pair<int, int>> classes(const SchedulerView& view, const JobView& spec) const {
    std::vector<std::pair<int, int>> out;
    for (int site : placement_sites(view, spec)) {
      for (int t : placement_types(view, spec, spec.num_gpus())) out.emplace_back(t, site);
    }
    return out;
  }
  bool in_class(const SchedulerView& view, DeviceId d, int type, int site) const {
    if (type >= 0 && device_type_of(view.cluster(), d) != type) return false;
    return site < 0 || view.geography()->site_of_device(d) == site;
  }

  // Starts on free devices no reservation holds, or held only by reservations that begin
  // at or after the job's estimated end (backfilling); compact placement. Into devices_.
  bool try_start(const SchedulerView& view, const JobView& spec, double end_s) {
    const ClusterState& state = view.cluster_state();
    for (const auto& [type, site] : classes(view, spec)) {
      candidates_.clear();
      for (DeviceId d = state.next_free(0); d >= 0; d = state.next_free(d + 1)) {
        if (free_.free_milli(d) != ClusterState::kWholeMilli || !in_class(view, d, type, site)) continue;
        const int r = reserved_by_[static_cast<std::size_t>(d)];
        if (r >= 0 && end_s > reservations_[static_cast<std::size_t>(r)].start_s) continue;
        candidates_.push_back(d);
      }
      picked_.clear();
      if (!compact_pick(view.cluster(), view.node_group(), candidates_, spec.num_gpus(), picked_)) continue;
      const PhysicsModel* physics = view.physics();
      if (physics && !physics->placement_problem(spec, picked_).empty()) continue;
      if (free_.first_fit_among(spec.num_gpus(), picked_, devices_)) return true;
    }
    return false;
  }

  // Reserves for `spec` the devices that free up earliest, inside one rack when one can
  // hold it (the rack whose n-th device frees first, then the lower rack), else across
  // racks; ties between devices by their node, then id.
  void reserve(const SchedulerView& view, const JobView& spec) {
    const int n = spec.num_gpus();
    const std::vector<int>* racks = view.node_group();
    double best_s = kNever;
    std::vector<DeviceId> best;
    for (const auto& [type, site] : classes(view, spec)) {
      std::map<int, std::vector<std::tuple<double, int, DeviceId>>> by_rack;
      std::vector<std::tuple<double, int, DeviceId>> all;
      for (DeviceId d = 0; d < view.cluster().num_devices(); ++d) {
        const double at = available_at_s_[static_cast<std::size_t>(d)];
        if (reserved_by_[static_cast<std::size_t>(d)] >= 0 || at == kNever || !in_class(view, d, type, site)) continue;
        const int node = view.cluster().node_of(d);
        by_rack[racks ? (*racks)[static_cast<std::size_t>(node)] : 0].emplace_back(at, node, d);
        all.emplace_back(at, node, d);
      }
      bool one_rack = false;
      for (auto& [rack, ds] : by_rack) {
        if (static_cast<int>(ds.size()) < n) continue;
        std::sort(ds.begin(), ds.end());
        const double at = std::get<0>(ds[static_cast<std::size_t>(n - 1)]);
        if (!one_rack || at < best_s) {
          best_s = at;
          best.clear();
          for (int i = 0; i < n; ++i) best.push_back(std::get<2>(ds[static_cast<std::size_t>(i)]));
        }
        one_rack = true;
      }
      if (one_rack || static_cast<int>(all.size()) < n) continue;
      std::sort(all.begin(), all.end());
      const double at = std::get<0>(all[static_cast<std::size_t>(n - 1)]);
      if (at < best_s) {
        best_s = at;
        best.clear();
        for (int i = 0; i < n; ++i) best.push_back(std::get<2>(all[static_cast<std::size_t>(i)]));
      }
    }
    if (best.empty()) return;  // nothing can hold it (e.g. devices failed): no reservation
    const int index = static_cast<int>(reservations_.size());
    reservations_.push_back(Reservation{best_s});
    for (DeviceId d : best) reserved_by_[static_cast<std::size_t>(d)] = index;
  }

  struct Reservation {
    double start_s;  // when its last device is expected to be free
  };

  ReservationOptions options_;
  InformationModel info_;
  std::set<std::pair<std::uint64_t, JobSlot>> queue_;  // (arrival sequence, slot)
  FreeDevices free_;
  std::vector<double> available_at_s_;  // by device, this decision
  std::vector<int> reserved_by_;        // by device: index into reservations_, or -1
  std::vector<Reservation> reservations_;
  std::vector<DeviceId> devices_, candidates_, picked_;
};

}  // namespace

PolicyInfo pai_reservation_policy_info() {
  const ReservationOptions d;
  return PolicyInfo{
      "pai-reservation",
      "PAI-style dynamic reservation: large or long-waiting gangs reserve the devices that free up earliest (one rack when possible); reserved capacity is backfilled only with jobs that end before the reservation",
      {{"reserve_min_gpus", std::to_string(d.reserve_min_gpus), "a queued job asking for at least this many devices gets a reservation when it cannot start"},
       {"reserve_after_s", "3600", "so does a queued job that has waited at least this long (seconds)"},
       {"max_reservations", std::to_string(d.max_reservations), "reservations held at once (earliest arrivals first)"},
       {"depth", std::to_string(d.depth), "queued jobs one decision examines at most; bounds the work of a decision"}},
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "reserve_min_gpus", "reserve_after_s", "max_reservations", "depth"});
        ReservationOptions o;
        if (auto v = config.maybe_child("reserve_min_gpus")) o.reserve_min_gpus = policy_count_option(*v);
        if (auto v = config.maybe_child("reserve_after_s")) o.reserve_after_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("max_reservations")) o.max_reservations = policy_count_option(*v);
        if (auto v = config.maybe_child("depth")) o.depth = policy_count_option(*v);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "pai-reservation";
        resolved["reserve_min_gpus"] = o.reserve_min_gpus;
        resolved["reserve_after_s"] = o.reserve_after_s;
        resolved["max_reservations"] = o.max_reservations;
        resolved["depth"] = o.depth;
        return PolicyInstance{std::make_unique<ReservationPolicy>(o, context.information), resolved};
      },
  };
}

}  // namespace schedsim
