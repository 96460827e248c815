#include "sim/jct_lower_bound.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>

namespace schedsim {
namespace {

void check(const std::vector<BoundJob>& jobs, int num_devices) {
  if (num_devices < 1) throw std::invalid_argument("mean JCT bound: the cluster needs at least one device, got " + std::to_string(num_devices));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const BoundJob& j = jobs[i];
    if (!std::isfinite(j.arrival_s) || j.arrival_s < 0 || !std::isfinite(j.duration_s) || j.duration_s < 0 || j.num_gpus < 1)
      throw std::invalid_argument("mean JCT bound: job " + std::to_string(i) + " needs a finite arrival and duration >= 0 and at least one GPU");
  }
}

}  // namespace

std::vector<double> pooled_srpt_completions_s(const std::vector<BoundJob>& jobs, int num_devices) {
  check(jobs, num_devices);
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].arrival_s < jobs[b].arrival_s; });
  const double rate = static_cast<double>(num_devices);  // GPU-seconds per second
  // Remaining GPU-seconds of the jobs that have arrived; the machine serves the smallest.
  std::priority_queue<double, std::vector<double>, std::greater<double>> remaining;
  std::vector<double> done;
  done.reserve(jobs.size());
  double now = 0.0;
  std::size_t next = 0;
  while (done.size() < jobs.size()) {
    if (remaining.empty()) now = std::max(now, jobs[order[next]].arrival_s);
    while (next < order.size() && jobs[order[next]].arrival_s <= now) {
      remaining.push(static_cast<double>(jobs[order[next]].num_gpus) * jobs[order[next]].duration_s);
      ++next;
    }
    const double arrival = next < order.size() ? jobs[order[next]].arrival_s : std::numeric_limits<double>::infinity();
    const double finish = now + remaining.top() / rate;
    if (finish <= arrival) {
      remaining.pop();
      now = finish;
      done.push_back(now);
    } else {
      // Serve the smallest until the next arrival; the others keep their work.
      const double left = remaining.top() - (arrival - now) * rate;
      remaining.pop();
      remaining.push(left);
      now = arrival;
    }
  }
  return done;  // ascending: completions happen in time order
}

namespace {

// A feasible fluid schedule (devices shared fractionally, each job at rate <= 1 on its
// GPUs): the devices go to the jobs of fewest total GPU-seconds first. Returns the sum of
// the jobs' mean busy times (an upper bound on the relaxation's minimum: the dual ascent's
// target) and sets makespan_s. Jobs of no work are skipped.
double fluid_busy_time_sum(const std::vector<BoundJob>& jobs, int num_devices, double& makespan_s) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].duration_s > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].arrival_s < jobs[b].arrival_s; });
  const auto smaller = [&](std::size_t a, std::size_t b) {
    const double wa = static_cast<double>(jobs[a].num_gpus) * jobs[a].duration_s, wb = static_cast<double>(jobs[b].num_gpus) * jobs[b].duration_s;
    return wa != wb ? wa < wb : a < b;
  };
  std::vector<double> left_s(jobs.size()), busy_moment(jobs.size(), 0.0);  // integral of t x rate dt
  for (std::size_t i = 0; i < jobs.size(); ++i) left_s[i] = jobs[i].duration_s;
  std::vector<std::size_t> active;  // kept sorted by `smaller`
  std::vector<double> rate;
  double now = 0.0;
  std::size_t next = 0;
  while (next < order.size() || !active.empty()) {
    if (active.empty()) now = std::max(now, jobs[order[next]].arrival_s);
    while (next < order.size() && jobs[order[next]].arrival_s <= now) {
      active.insert(std::upper_bound(active.begin(), active.end(), order[next], smaller), order[next]);
      ++next;
    }
    rate.assign(active.size(), 0.0);
    double free = static_cast<double>(num_devices);
    for (std::size_t k = 0; k < active.size() && free > 0; ++k) {
      const double g = static_cast<double>(jobs[active[k]].num_gpus);
      rate[k] = std::min(1.0, free / g);
      free -= rate[k] * g;
    }
    double until = next < order.size() ? jobs[order[next]].arrival_s : std::numeric_limits<double>::infinity();
    std::size_t finishing = active.size();
    for (std::size_t k = 0; k < active.size(); ++k) {
      if (rate[k] <= 0) continue;
      const double t = now + left_s[active[k]] / rate[k];
      if (t < until) {
        until = t;
        finishing = k;
      }
    }
    for (std::size_t k = 0; k < active.size(); ++k) {
      if (rate[k] <= 0) continue;
      busy_moment[active[k]] += rate[k] * (until - now) * (until + now) / 2;
      left_s[active[k]] -= rate[k] * (until - now);
    }
    now = until;
    if (finishing < active.size()) {
      left_s[active[finishing]] = 0.0;
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(finishing));
    }
    // Others that ran out at the same instant (rounding leaves them a hair of work).
    for (std::size_t k = active.size(); k-- > 0;) {
      if (left_s[active[k]] <= 1e-9 * jobs[active[k]].duration_s) active.erase(active.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  makespan_s = now;
  double sum = 0.0;
  for (std::size_t i : order) sum += busy_moment[i] / jobs[i].duration_s;
  return sum;
}

}  // namespace

double mean_busy_time_bound_s(const std::vector<BoundJob>& jobs, int num_devices, const BusyTimeBoundOptions& options) {
  check(jobs, num_devices);
  if (options.slots < 1 || options.iterations < 0) throw std::invalid_argument("mean JCT bound: slots must be >= 1 and iterations >= 0");
  if (jobs.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<std::size_t> lp;  // the jobs with work; the others complete on arrival (JCT 0)
  double offset_s = 0.0;        // sum of duration_j / 2 - arrival_j over them
  double longest_s = 0.0;
  double origin_s = std::numeric_limits<double>::infinity();  // the grid starts at the first arrival
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].duration_s <= 0) continue;
    lp.push_back(i);
    offset_s += jobs[i].duration_s / 2 - jobs[i].arrival_s;
    longest_s = std::max(longest_s, jobs[i].duration_s);
    origin_s = std::min(origin_s, jobs[i].arrival_s);
  }
  if (lp.empty()) return 0.0;
  double makespan_s = 0.0;
  const double target = fluid_busy_time_sum(jobs, num_devices, makespan_s);
  // The relaxation on a grid of equal slots: a slot holds num_devices x its length of
  // GPU-seconds; a job does at most the slot's length of its work in it (rate <= 1), none
  // before its arrival, and each second of work counts at the slot's start (or its
  // arrival, in its first slot), never later than it happens. Prices on the slots'
  // capacity (a Lagrangian dual) make any v >= 0 a valid bound: each job then buys its
  // work where time plus price is lowest, and the bound is what the jobs pay less what the
  // capacity earns. Prices stay 0 from the fluid schedule's makespan on, and the grid
  // runs the longest job past it: a job always finds its work there at no more than
  // beyond the grid, so the grid loses nothing.
  const double priced_end_s = makespan_s;
  const double grid_end_s = makespan_s + longest_s;
  const std::size_t slots = static_cast<std::size_t>(options.slots);
  const double slot_s = (grid_end_s - origin_s) / static_cast<double>(slots);
  const std::size_t priced = std::min(slots, static_cast<std::size_t>(std::ceil((priced_end_s - origin_s) / slot_s)));
  const double capacity = static_cast<double>(num_devices) * slot_s;
  std::vector<double> price(slots, 0.0), use(slots, 0.0);
  struct Offer {
    double cost;      // per second of the job's work: time / duration + GPUs x price
    std::size_t slot;
    double amount_s;  // at most this much work in the slot
  };
  std::vector<Offer> offers;
  const auto by_cost = [](const Offer& a, const Offer& b) { return a.cost != b.cost ? a.cost < b.cost : a.slot < b.slot; };
  // The dual function at `price`: fills `use` (GPU-seconds bought per slot).
  const auto dual = [&]() {
    std::fill(use.begin(), use.end(), 0.0);
    double value = 0.0;
    for (std::size_t i : lp) {
      const BoundJob& j = jobs[i];
      const double g = static_cast<double>(j.num_gpus);
      const std::size_t first = std::min(slots - 1, static_cast<std::size_t>((j.arrival_s - origin_s) / slot_s));
      offers.clear();
      for (std::size_t s = first; s < slots; ++s) {
        const double start_s = s == first ? j.arrival_s : origin_s + static_cast<double>(s) * slot_s;
        const double room_s = s == first ? std::max(0.0, origin_s + static_cast<double>(s + 1) * slot_s - j.arrival_s) : slot_s;
        if (room_s > 0) offers.push_back(Offer{start_s / j.duration_s + g * price[s], s, room_s});
      }
      // The cheapest offers that hold the job's work: ceil(d / slot) full slots and the
      // first, partial one.
      const std::size_t need = std::min(offers.size(), static_cast<std::size_t>(std::ceil(j.duration_s / slot_s)) + 1);
      std::nth_element(offers.begin(), offers.begin() + static_cast<std::ptrdiff_t>(need - 1), offers.end(), by_cost);
      std::sort(offers.begin(), offers.begin() + static_cast<std::ptrdiff_t>(need), by_cost);
      double left_s = j.duration_s;
      for (std::size_t k = 0; k < need && left_s > 0; ++k) {
        const double x = std::min(left_s, offers[k].amount_s);
        value += x * offers[k].cost;
        use[offers[k].slot] += g * x;
        left_s -= x;
      }
    }
    for (std::size_t s = 0; s < priced; ++s) value -= capacity * price[s];
    return value;
  };
  // Projected subgradient ascent with Polyak steps towards the fluid schedule's value
  // (no lower than the relaxation's optimum); the best value seen is the bound.
  double best = dual();
  double step = 1.0;
  int since_better = 0;
  for (int it = 0; it < options.iterations; ++it) {
    double norm = 0.0;
    for (std::size_t s = 0; s < priced; ++s) {
      const double gs = use[s] - capacity;
      if (price[s] > 0 || gs > 0) norm += gs * gs;
    }
    if (norm <= 0 || target <= best) break;  // no slot over capacity, or the fluid schedule's value: the optimum
    const double t = step * (target - best) / norm;
    for (std::size_t s = 0; s < priced; ++s) price[s] = std::max(0.0, price[s] + t * (use[s] - capacity));
    const double value = dual();
    if (value > best) {
      best = value;
      since_better = 0;
    } else if (++since_better >= 10) {
      step /= 2;
      since_better = 0;
    }
  }
  return (best + offset_s) / static_cast<double>(jobs.size());
}

double mean_jct_lower_bound_s(const std::vector<BoundJob>& jobs, int num_devices, const BusyTimeBoundOptions& options) {
  if (jobs.empty()) {
    check(jobs, num_devices);
    return std::numeric_limits<double>::quiet_NaN();
  }
  const std::vector<double> pooled = pooled_srpt_completions_s(jobs, num_devices);
  std::vector<double> no_wait;
  no_wait.reserve(jobs.size());
  double arrivals_s = 0.0;
  for (const BoundJob& j : jobs) {
    no_wait.push_back(j.arrival_s + j.duration_s);
    arrivals_s += j.arrival_s;
  }
  std::sort(no_wait.begin(), no_wait.end());
  double completions_s = 0.0;
  for (std::size_t k = 0; k < jobs.size(); ++k) completions_s += std::max(pooled[k], no_wait[k]);
  return std::max((completions_s - arrivals_s) / static_cast<double>(jobs.size()), mean_busy_time_bound_s(jobs, num_devices, options));
}

}  // namespace schedsim
