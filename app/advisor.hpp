// The compute advisor: for one training job and the offers of the providers, evaluate
// candidate plans (where, on which device type, how many devices, from when, on-demand,
// reserved or spot, and optionally split into two segments in different regions) with
// the simulator's own models, and rank them. Every number of a plan is an expected value
// of closed forms (no sampling): docs/market.md ("Advisor") lists which and why.
//
// This header knows nothing of YAML: experiments/advise_config.hpp builds the inputs from
// a job file and a scenario.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "world/geography/datacenters.hpp"
#include "world/failures/failure_model.hpp"
#include "world/market/market.hpp"
#include "base/signals.hpp"

namespace schedsim {

// What the advisor needs to know about one offer of devices.
struct OfferTerms {
  std::string provider;
  int site = 0;                 // Geography site index
  std::string device_type;      // canonical catalogue name
  PriceKind kind = PriceKind::kOnDemand;
  // USD per device-hour as a step function of UTC time (constant prices are constant series).
  std::shared_ptr<const StepSeries> price_usd_per_device_h;
  int max_devices = 0;          // the most devices the offer can give at once
  // Spot only: how many of the offer's devices the provider leaves available over time.
  struct Spot {
    enum class Kind { kAlways, kOnOff, kTimeline } kind = Kind::kAlways;
    // kOnOff: exponential up periods (all devices) and down periods (available_when_down).
    double mean_up_h = 0.0, mean_down_h = 0.0;
    int available_when_down = 0;
    // kTimeline: (simulated s, available devices) steps from time 0 to horizon_s.
    std::vector<std::pair<double, int>> timeline;
    double horizon_s = 0.0;
  } spot;
};

// What spot availability means for a plan on `devices` of an offer, as expected values:
// reclamations per hour of holding the devices (a Poisson rate) and the mean wait for the
// capacity to come back after one. kOnOff: 1 / mean_up_h and mean_down_h when a down
// period leaves fewer than `devices`, else none. kTimeline: the empirical rate over the
// timeline (drops below `devices` per hour with at least `devices` available) and the
// mean length of the periods below. Non-spot offers and kAlways: none. nullopt when the
// offer never has `devices` available.
struct SpotRate {
  double reclaim_per_h = 0.0;
  double wait_s = 0.0;
};
std::optional<SpotRate> spot_rate(const OfferTerms& offer, int devices);

// How one device type runs the job on n devices, from the speed and communication models.
struct RunModel {
  double iteration_s = 0.0;         // one step on n devices (compute + uncontended all-reduce)
  double compute_share = 1.0;       // compute time / iteration time: the power model's u
  double checkpoint_save_s = 0.0;   // one checkpoint write
  double checkpoint_restore_s = 0.0;
  double busy_w = 0.0;              // per device: idle + u (tdp - idle)
  double idle_w = 0.0;              // per device
};

enum class Objective { kCost, kFinish, kEmissions };
const char* to_string(Objective objective);

struct AdviseJob {
  std::string profile;                   // workload profile (catalogue name)
  double steps = 0.0;                    // training iterations of the whole run
  std::vector<std::string> device_types; // canonical names allowed
  std::vector<int> device_counts;        // allowed device counts, ascending
  std::vector<int> sites;                // allowed sites (Geography indices)
  std::vector<PriceKind> kinds;          // allowed offer kinds
  double earliest_start_s = 0.0;         // simulated seconds (since the signals' origin)
  double latest_start_s = 0.0;           // last start on the grid
  double start_step_s = 86400.0;
  double deadline_s = 0.0;               // expected finish must be <= this
  std::optional<double> budget_usd;      // total cost must be <= this
  std::optional<double> carbon_cap_kg;   // expected emissions must be <= this
  int max_segments = 1;                  // 1, or 2: also plans that move once between regions
  std::vector<double> split_fractions = {0.5};  // share of the steps done before the move
  bool cost_includes_electricity = false;  // add the metered electricity cost to the offer price
};

// One stretch of a plan on one offer.
struct PlanSegment {
  int offer = 0;               // index into the offers
  int devices = 0;
  double steps = 0.0;
  double start_s = 0.0;        // simulated seconds: when the devices are taken
  double end_s = 0.0;
  double lead_in_s = 0.0;      // before computing: relocation into this segment (transfer + restart + restore)
  double compute_s = 0.0;      // useful compute time: steps x iteration_s
  double wall_s = 0.0;         // lead-in + expected time to finish the steps with failures and reclamations
  double checkpoint_interval_s = 0.0;  // 0: no periodic checkpoints
  double expected_failures = 0.0;      // device failures and loss spikes
  double expected_reclaims = 0.0;      // spot reclamations
  double reclaim_wait_s = 0.0;         // expected time without devices, waiting for spot capacity
  double energy_kwh = 0.0;     // facility energy (x PUE)
  double compute_cost_usd = 0.0;       // the offer's price x devices x time held
  double electricity_cost_usd = 0.0;   // metered energy x the site's electricity price
  double co2_kg = 0.0;
};

struct Plan {
  std::vector<PlanSegment> segments;
  double start_s = 0.0, finish_s = 0.0;
  double cost_usd = 0.0;               // compute cost (+ electricity when the job says so)
  double compute_cost_usd = 0.0, electricity_cost_usd = 0.0;
  double energy_kwh = 0.0, co2_kg = 0.0;
  double expected_reclaims = 0.0;
  double spot_loss_risk = 0.0;         // P(at least one spot reclamation), Poisson
  bool pareto = false;                 // on the (finish, cost, emissions) front of the feasible plans
};

struct AdviseOutcome {
  std::vector<Plan> plans;             // feasible plans, ranked (best first)
  std::size_t evaluated = 0;           // candidates evaluated
  // Why candidates were dropped: (reason, count), in a fixed order, zero counts left out.
  std::vector<std::pair<std::string, std::size_t>> rejected;
};

// The world the advisor plans in. References must outlive it.
struct AdvisorWorld {
  const Geography* geography = nullptr;
  std::vector<OfferTerms> offers;
  // RunModel per (device type, device count): run_model(type, n) returns nullopt when the
  // job cannot run there (memory, batch smaller than n).
  std::vector<std::string> model_types;
  std::vector<int> model_counts;
  std::vector<std::optional<RunModel>> models;  // models[type_index * counts + count_index]
  // The parallelism plan behind models[i] when the job fits only with model parallelism
  // or sharding (parallelism/planner.hpp, docs/parallelism.md), else "". Empty (no
  // entries) when no model needed one.
  std::vector<std::string> model_plans;
  // The scenario's `failures:` map; none: devices never fail and nothing checkpoints
  // periodically.
  std::optional<FailureConfig> failures;
  std::int64_t origin_utc_us = 0;      // simulated time 0

  const RunModel* run_model(const std::string& type, int devices) const;
  // model_plans' entry for (type, devices); "" when there is none.
  std::string parallelism_plan(const std::string& type, int devices) const;
};

// Expected wall time to compute `compute_s` seconds of work with a checkpoint every
// `interval_s` of compute (0 = never) costing `checkpoint_s`, failures at rate
// `rate_per_s` striking during compute and writes, each costing `restart_s` and the
// work since the last commit (docs/failures.md, "The closed form and Young–Daly"):
//   n (e^{λ(τ+δ)} − 1)(1/λ + R) + (e^{λr} − 1)(1/λ + R),  n = ⌊W/τ⌋, r = W − nτ.
double expected_completion_s(double compute_s, double interval_s, double checkpoint_s, double rate_per_s, double restart_s);

// Evaluates one plan: fills every segment's times, energy, costs and emissions and the
// plan's totals. The segments need offer, devices, steps and (first one) start_s.
// Throws InputError when a signal or price series does not cover the plan's window.
void evaluate_plan(const AdvisorWorld& world, const AdviseJob& job, Plan& plan);

// Marks plan.pareto on the plans no other plan beats in all of (finish, cost, emissions)
// while being strictly better in one.
void mark_pareto(std::vector<Plan>& plans);

// Enumerates, evaluates, filters and ranks every candidate plan (deterministic).
AdviseOutcome advise(const AdvisorWorld& world, const AdviseJob& job, Objective objective);

// "US-CAL-CISO H100-SXM x512 spot" (one segment) or "... -> SG ... @50%" (two).
std::string plan_label(const AdvisorWorld& world, const Plan& plan);

}  // namespace schedsim
