#include "app/advisor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <tuple>

#include "world/physics/checkpoint_policy.hpp"
#include "base/error.hpp"
#include "sim/job.hpp"

namespace schedsim {

const char* to_string(Objective objective) {
  switch (objective) {
    case Objective::kCost: return "cost";
    case Objective::kFinish: return "finish";
    case Objective::kEmissions: return "emissions";
  }
  return "?";
}

const RunModel* AdvisorWorld::run_model(const std::string& type, int devices) const {
  const auto t = std::find(model_types.begin(), model_types.end(), type);
  const auto c = std::find(model_counts.begin(), model_counts.end(), devices);
  if (t == model_types.end() || c == model_counts.end()) return nullptr;
  const std::size_t i = static_cast<std::size_t>(t - model_types.begin()) * model_counts.size() + static_cast<std::size_t>(c - model_counts.begin());
  return models[i] ? &*models[i] : nullptr;
}

std::string AdvisorWorld::parallelism_plan(const std::string& type, int devices) const {
  const auto t = std::find(model_types.begin(), model_types.end(), type);
  const auto c = std::find(model_counts.begin(), model_counts.end(), devices);
  if (t == model_types.end() || c == model_counts.end()) return "";
  const std::size_t i = static_cast<std::size_t>(t - model_types.begin()) * model_counts.size() + static_cast<std::size_t>(c - model_counts.begin());
  return i < model_plans.size() ? model_plans[i] : "";
}

std::optional<SpotRate> spot_rate(const OfferTerms& offer, int devices) {
  if (offer.kind != PriceKind::kSpot) return SpotRate{};
  const OfferTerms::Spot& s = offer.spot;
  switch (s.kind) {
    case OfferTerms::Spot::Kind::kAlways: return SpotRate{};
    case OfferTerms::Spot::Kind::kOnOff:
      if (s.available_when_down >= devices) return SpotRate{};
      return SpotRate{1.0 / s.mean_up_h, s.mean_down_h * 3600.0};
    case OfferTerms::Spot::Kind::kTimeline: {
      double up_s = 0.0, down_s = 0.0;
      int drops = 0;
      for (std::size_t i = 0; i < s.timeline.size(); ++i) {
        const double end = i + 1 < s.timeline.size() ? s.timeline[i + 1].first : s.horizon_s;
        const double len = std::max(0.0, end - s.timeline[i].first);
        const bool up = s.timeline[i].second >= devices;
        (up ? up_s : down_s) += len;
        if (i > 0 && !up && s.timeline[i - 1].second >= devices) ++drops;
      }
      if (!(up_s > 0.0)) return std::nullopt;
      if (drops == 0) return SpotRate{};
      return SpotRate{drops / (up_s / 3600.0), down_s / drops};
    }
  }
  return SpotRate{};
}

double expected_completion_s(double compute_s, double interval_s, double checkpoint_s, double rate_per_s, double restart_s) {
  if (!(rate_per_s > 0.0)) {  // no failures: the work plus the checkpoint writes
    if (!(interval_s > 0.0)) return compute_s;
    return compute_s + std::floor(compute_s / interval_s) * checkpoint_s;
  }
  const double per_attempt = 1.0 / rate_per_s + restart_s;
  if (!(interval_s > 0.0)) return std::expm1(rate_per_s * compute_s) * per_attempt;
  const double n = std::floor(compute_s / interval_s);
  const double r = compute_s - n * interval_s;
  return n * std::expm1(rate_per_s * (interval_s + checkpoint_s)) * per_attempt + std::expm1(rate_per_s * r) * per_attempt;
}

namespace {

std::int64_t utc_us(const AdvisorWorld& world, double sim_s) { return world.origin_utc_us + std::llround(sim_s * 1e6); }

// Integral of `series` (value x seconds) over simulated [a_s, b_s]; nullopt when the
// series does not cover it.
std::optional<double> covered_integral(const AdvisorWorld& world, const StepSeries& series, double a_s, double b_s) {
  const std::int64_t a = utc_us(world, a_s), b = utc_us(world, b_s);
  if (a < series.begin_us() || b > series.end_us()) return std::nullopt;
  return series.integral(a, b);
}

struct Hazards {
  double failure_per_s = 0.0;   // device failures and loss spikes
  double reclaim_per_s = 0.0;   // spot reclamations
  double restart_s = 0.0;       // rate-weighted restart before the restore (devices held)
  double wait_s = 0.0;          // rate-weighted wait for capacity (devices not held)
  double total() const { return failure_per_s + reclaim_per_s; }
};

Hazards hazards_of(const AdvisorWorld& world, const AdviseJob& job, const OfferTerms& offer, int devices) {
  Hazards h;
  double weighted_restart = 0.0, weighted_wait = 0.0;
  if (world.failures) {
    const FailureConfig& f = *world.failures;
    JobSpec spec;
    spec.model = job.profile;
    spec.num_gpus = devices;
    const double spikes = f.loss_spikes.hazard_per_s(spec, devices);
    const double mtbf_h = f.devices.mtbf_h_of(offer.device_type);
    // A node of k devices fails at k / mtbf: n devices see n / mtbf in total, whatever the unit.
    const double device = mtbf_h > 0.0 ? devices / (mtbf_h * 3600.0) : 0.0;
    h.failure_per_s = spikes + device;
    weighted_restart += spikes * f.loss_spikes.restart_s + device * f.devices.restart_s;
  }
  // A reclaimed job pays no restart, only the restore (as the kernel does: docs/market.md),
  // after waiting for the capacity to come back.
  if (const auto spot = spot_rate(offer, devices)) {
    h.reclaim_per_s = spot->reclaim_per_h / 3600.0;
    weighted_wait += h.reclaim_per_s * spot->wait_s;
  }
  if (h.total() > 0.0) {
    h.restart_s = weighted_restart / h.total();
    h.wait_s = weighted_wait / h.total();
  }
  return h;
}

// Fills one segment from its offer, devices, steps, start_s and lead_in_s. `final_save`:
// the segment ends with a checkpoint write (the plan moves on). Returns false (and sets
// `why`) when the data do not cover the segment.
bool evaluate_segment(const AdvisorWorld& world, const AdviseJob& job, PlanSegment& seg, bool final_save, const char*& why) {
  const OfferTerms& offer = world.offers[static_cast<std::size_t>(seg.offer)];
  const RunModel* m = world.run_model(offer.device_type, seg.devices);
  if (!m) throw InvariantError("advisor: no run model for " + offer.device_type + " x" + std::to_string(seg.devices));
  const Hazards h = hazards_of(world, job, offer, seg.devices);
  const double lambda = h.total();
  const CheckpointConfig ckpt = world.failures ? world.failures->checkpoint : CheckpointConfig{CheckpointConfig::Policy::kYoungDaly};
  const double delta = ckpt.cost_s >= 0.0 ? ckpt.cost_s : m->checkpoint_save_s;
  const double restart = h.wait_s + h.restart_s + m->checkpoint_restore_s;
  seg.compute_s = seg.steps * m->iteration_s;
  seg.checkpoint_interval_s = checkpoint_interval_s(ckpt, delta, lambda);
  const double run_s = expected_completion_s(seg.compute_s, seg.checkpoint_interval_s, delta, lambda, restart);
  // Failed attempts: geometric per checkpointed stretch (docs/failures.md).
  double attempts_failed = 0.0;
  double writes = 0.0;
  if (lambda > 0.0) {
    if (seg.checkpoint_interval_s > 0.0) {
      const double n = std::floor(seg.compute_s / seg.checkpoint_interval_s);
      const double r = seg.compute_s - n * seg.checkpoint_interval_s;
      attempts_failed = n * std::expm1(lambda * (seg.checkpoint_interval_s + delta)) + std::expm1(lambda * r);
      writes = n;
    } else {
      attempts_failed = std::expm1(lambda * seg.compute_s);
    }
  } else if (seg.checkpoint_interval_s > 0.0) {
    writes = std::floor(seg.compute_s / seg.checkpoint_interval_s);
  }
  seg.expected_failures = lambda > 0.0 ? attempts_failed * h.failure_per_s / lambda : 0.0;
  seg.expected_reclaims = lambda > 0.0 ? attempts_failed * h.reclaim_per_s / lambda : 0.0;
  seg.reclaim_wait_s = attempts_failed * h.wait_s;
  const double save_s = final_save ? delta : 0.0;
  seg.wall_s = seg.lead_in_s + run_s + save_s;
  seg.end_s = seg.start_s + seg.wall_s;
  // The devices are held (billed, powered) except while waiting for spot capacity. They
  // draw busy power while computing (including work later lost) and idle power while
  // moving in, restarting, restoring and writing checkpoints (the energy model's u = 0).
  const double held_s = std::max(0.0, seg.wall_s - seg.reclaim_wait_s);
  const double idle_s = std::min(held_s, seg.lead_in_s + attempts_failed * (h.restart_s + m->checkpoint_restore_s) + writes * delta + save_s);
  const double busy_s = held_s - idle_s;
  const Datacenter& site = world.geography->site(offer.site);
  const double it_j = seg.devices * (m->busy_w * busy_s + m->idle_w * idle_s);
  seg.energy_kwh = it_j * site.pue / 3.6e6;
  // Price, electricity and carbon are integrated over the segment's window with the
  // energy and the holding time spread evenly over it (expected values).
  const double facility_w = seg.wall_s > 0.0 ? it_j * site.pue / seg.wall_s : 0.0;
  const double held_share = seg.wall_s > 0.0 ? held_s / seg.wall_s : 1.0;
  const auto price = covered_integral(world, *offer.price_usd_per_device_h, seg.start_s, seg.end_s);
  const auto elec = covered_integral(world, *site.signals->series(SignalKind::kPrice), seg.start_s, seg.end_s);
  const auto carbon = covered_integral(world, *site.signals->series(SignalKind::kCarbon), seg.start_s, seg.end_s);
  if (!price) { why = "outside the offer's price data"; return false; }
  if (!elec || !carbon) { why = "outside the site's signal data"; return false; }
  seg.compute_cost_usd = seg.devices * held_share * *price / 3600.0;
  seg.electricity_cost_usd = facility_w * *elec / 3.6e9;
  seg.co2_kg = facility_w * *carbon / 3.6e9;
  return true;
}

bool evaluate(const AdvisorWorld& world, const AdviseJob& job, Plan& plan, const char*& why) {
  double t = plan.segments.front().start_s;
  plan.start_s = t;
  plan.cost_usd = plan.compute_cost_usd = plan.electricity_cost_usd = plan.energy_kwh = plan.co2_kg = plan.expected_reclaims = 0.0;
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    PlanSegment& seg = plan.segments[i];
    seg.start_s = t;
    seg.lead_in_s = 0.0;
    if (i > 0) {  // the kernel's relocation (checkpoint over the WAN, restart), then a restore
      const PlanSegment& prev = plan.segments[i - 1];
      const int from = world.offers[static_cast<std::size_t>(prev.offer)].site;
      const int to = world.offers[static_cast<std::size_t>(seg.offer)].site;
      const RunModel* m = world.run_model(world.offers[static_cast<std::size_t>(seg.offer)].device_type, seg.devices);
      seg.lead_in_s = world.geography->relocation_s(from, to) + m->checkpoint_restore_s;
    }
    if (!evaluate_segment(world, job, seg, i + 1 < plan.segments.size(), why)) return false;
    t = seg.end_s;
    plan.compute_cost_usd += seg.compute_cost_usd;
    plan.electricity_cost_usd += seg.electricity_cost_usd;
    plan.energy_kwh += seg.energy_kwh;
    plan.co2_kg += seg.co2_kg;
    plan.expected_reclaims += seg.expected_reclaims;
  }
  plan.finish_s = t;
  plan.cost_usd = plan.compute_cost_usd + (job.cost_includes_electricity ? plan.electricity_cost_usd : 0.0);
  plan.spot_loss_risk = plan.expected_reclaims > 0.0 ? -std::expm1(-plan.expected_reclaims) : 0.0;
  return true;
}

double objective_value(const Plan& p, Objective o) {
  switch (o) {
    case Objective::kCost: return p.cost_usd;
    case Objective::kFinish: return p.finish_s;
    case Objective::kEmissions: return p.co2_kg;
  }
  return 0.0;
}

bool dominates(const Plan& a, const Plan& b) {
  return a.finish_s <= b.finish_s && a.cost_usd <= b.cost_usd && a.co2_kg <= b.co2_kg &&
         (a.finish_s < b.finish_s || a.cost_usd < b.cost_usd || a.co2_kg < b.co2_kg);
}

}  // namespace

void evaluate_plan(const AdvisorWorld& world, const AdviseJob& job, Plan& plan) {
  if (plan.segments.empty()) throw InvariantError("advisor: a plan without segments");
  const char* why = "";
  if (!evaluate(world, job, plan, why)) {
    throw InputError("advise", std::string("the plan ") + plan_label(world, plan) + " runs " + why + " (starting " +
                                   format_utc(utc_us(world, plan.start_s)) + ")");
  }
}

void mark_pareto(std::vector<Plan>& plans) {
  // A plan can only be dominated by one that finishes no later: scan in (finish, cost,
  // emissions) order against the front found so far (a dominated plan's dominator is
  // itself dominated by, or is, a front member).
  std::vector<std::size_t> order(plans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(plans[a].finish_s, plans[a].cost_usd, plans[a].co2_kg) < std::tie(plans[b].finish_s, plans[b].cost_usd, plans[b].co2_kg);
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    bool dominated = false;
    for (std::size_t f : front) {
      if (dominates(plans[f], plans[i])) {
        dominated = true;
        break;
      }
    }
    plans[i].pareto = !dominated;
    if (!dominated) front.push_back(i);
  }
}

std::string plan_label(const AdvisorWorld& world, const Plan& plan) {
  std::string out;
  double done = 0.0, total = 0.0;
  for (const PlanSegment& s : plan.segments) total += s.steps;
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    const PlanSegment& s = plan.segments[i];
    const OfferTerms& o = world.offers[static_cast<std::size_t>(s.offer)];
    if (i > 0) {
      char pct[32];
      std::snprintf(pct, sizeof pct, " -> @%g%% ", total > 0 ? 100.0 * done / total : 0.0);
      out += pct;
    }
    out += world.geography->site(o.site).name + " " + o.device_type + " x" + std::to_string(s.devices) + " " + to_string(o.kind);
    if (!o.provider.empty()) out += " (" + o.provider + ")";
    done += s.steps;
  }
  return out;
}

AdviseOutcome advise(const AdvisorWorld& world, const AdviseJob& job, Objective objective) {
  if (!(job.start_step_s > 0.0)) throw InvariantError("advisor: start step must be > 0");
  std::vector<double> starts;
  for (int k = 0;; ++k) {
    const double s = job.earliest_start_s + k * job.start_step_s;
    if (s > job.latest_start_s + 1e-6) break;
    starts.push_back(s);
  }
  auto allowed = [&](const OfferTerms& o) {
    return std::find(job.sites.begin(), job.sites.end(), o.site) != job.sites.end() &&
           std::find(job.device_types.begin(), job.device_types.end(), o.device_type) != job.device_types.end() &&
           std::find(job.kinds.begin(), job.kinds.end(), o.kind) != job.kinds.end();
  };
  // Rejection reasons, in the order the checks run.
  static const char* const kReasons[] = {"the job does not run on that many devices of the type (memory or batch)",
                                         "more devices than the offer has",
                                         "outside the offer's price data",
                                         "outside the site's signal data",
                                         "misses the deadline",
                                         "over the budget",
                                         "over the carbon cap"};
  std::vector<std::size_t> rejected(std::size(kReasons), 0);
  auto reject = [&](const char* why) {
    for (std::size_t i = 0; i < std::size(kReasons); ++i) {
      if (std::string(kReasons[i]) == why) {
        ++rejected[i];
        return;
      }
    }
    throw InvariantError(std::string("advisor: unknown rejection reason ") + why);
  };
  AdviseOutcome out;
  auto consider = [&](Plan plan) {
    ++out.evaluated;
    for (const PlanSegment& s : plan.segments) {
      const OfferTerms& o = world.offers[static_cast<std::size_t>(s.offer)];
      if (!world.run_model(o.device_type, s.devices)) return reject(kReasons[0]);
      if (s.devices > o.max_devices || !spot_rate(o, s.devices)) return reject(kReasons[1]);
    }
    const char* why = "";
    if (!evaluate(world, job, plan, why)) return reject(why);
    if (plan.finish_s > job.deadline_s) return reject(kReasons[4]);
    if (job.budget_usd && plan.cost_usd > *job.budget_usd) return reject(kReasons[5]);
    if (job.carbon_cap_kg && plan.co2_kg > *job.carbon_cap_kg) return reject(kReasons[6]);
    out.plans.push_back(std::move(plan));
  };
  for (std::size_t a = 0; a < world.offers.size(); ++a) {
    if (!allowed(world.offers[a])) continue;
    for (int n : job.device_counts) {
      for (double start : starts) {
        Plan single;
        single.segments.push_back(PlanSegment{static_cast<int>(a), n, job.steps});
        single.segments.front().start_s = start;
        consider(single);
        if (job.max_segments < 2) continue;
        for (std::size_t b = 0; b < world.offers.size(); ++b) {
          const OfferTerms& oa = world.offers[a];
          const OfferTerms& ob = world.offers[b];
          if (b == a || ob.site == oa.site || ob.device_type != oa.device_type || !allowed(ob)) continue;
          for (double f : job.split_fractions) {
            Plan split;
            split.segments.push_back(PlanSegment{static_cast<int>(a), n, job.steps * f});
            split.segments.push_back(PlanSegment{static_cast<int>(b), n, job.steps * (1.0 - f)});
            split.segments.front().start_s = start;
            consider(split);
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    if (rejected[i] > 0) out.rejected.emplace_back(kReasons[i], rejected[i]);
  }
  mark_pareto(out.plans);
  // Ties keep enumeration order (stable): deterministic.
  std::stable_sort(out.plans.begin(), out.plans.end(), [&](const Plan& x, const Plan& y) {
    const double vx = objective_value(x, objective), vy = objective_value(y, objective);
    if (vx != vy) return vx < vy;
    return std::tie(x.finish_s, x.cost_usd, x.co2_kg) < std::tie(y.finish_s, y.cost_usd, y.co2_kg);
  });
  return out;
}

}  // namespace schedsim
