// What jobs pay the compute market (docs/market.md), integrated exactly between events:
// every device a job holds costs its offer's price over the time held (a fractional job
// pays its share of the device), and the settlement per (tenant, provider): device-hours,
// compute cost and, with an energy meter, the jobs' energy, electricity cost and emissions.
// A tenant is JobSpec::user ("" when the trace has no user).
//
// Device-hours and compute cost are booked interval by interval to the provider of each
// device. A job's energy, electricity cost and emissions (EnergyMeter::use_of_ended) are
// booked when it ends, to the provider of the datacenter it ran in last.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "world/energy/energy.hpp"
#include "world/market/market.hpp"
#include "sim/observer.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

struct MarketUse {
  double device_h = 0.0;
  double compute_usd = 0.0;
};

// One settlement row: what `tenant` used at `provider`.
struct SettlementRow {
  std::string tenant;
  std::string provider;
  double device_h = 0.0;
  double compute_usd = 0.0;
  double energy_kwh = 0.0;                // facility energy (IT x PUE) of the tenant's jobs
  std::optional<double> electricity_usd;  // with a price signal
  std::optional<double> co2_kg;           // with a carbon signal
};

struct MarketTotals {
  MarketUse total;
  MarketUse by_kind[3];               // by PriceKind
  std::vector<std::string> provider_names;  // Market::providers() order
  std::vector<MarketUse> by_provider;        // like provider_names
  std::vector<std::string> tenants;    // sorted
  std::vector<MarketUse> by_tenant;    // like `tenants`
  // Sorted by (tenant, provider name); only pairs with device time or energy.
  std::vector<SettlementRow> settlement;
};

// The top level of results.json's "market": the meter's totals and the kernel's spot
// counters (SimulatorStats).
struct MarketReport {
  const MarketTotals* totals = nullptr;
  const SimulatorStats* stats = nullptr;
};
// results.json's "market" numbers as field tables (sim/output_fields.hpp), in file order:
// one MarketUse (the total, each price kind's, provider's, tenant's) and the top level.
// The writer nests "by_kind", "by_provider", "by_tenant" and "ledger" after them.
const std::vector<ValueField<MarketUse>>& market_use_fields();
const std::vector<ValueField<MarketReport>>& market_fields();

class MarketMeter : public Observer {
 public:
  // `energy` may be null (no energy columns: zero energy, no cost or emissions); the
  // ending job's use is pulled from it (EnergyMeter::use_of_ended), so the two may be
  // added in either order. The simulator, market and energy meter must outlive the meter.
  MarketMeter(const Simulator& sim, const Market& market, EnergyMeter* energy);

  void after_event(const Simulator& sim) override;
  void on_job_end(const JobState& job) override;

  MarketTotals totals() const;

  void snapshot(SnapshotArchive& ar) override;

 private:
  struct Held {  // one job's placement as of the last event: the devices it pays for
    int tenant = 0;
    // What it holds per key (offer index, or -1 - site for devices no offer covers):
    // milli-devices (1000 per whole device, gpu_milli for a share) and the index of the
    // (tenant, key) entry in holdings_.
    struct Part {
      int key;
      std::int64_t milli;
      std::size_t holding;
    };
    std::vector<Part> offers;
    // identity of the placement, to reuse it while unchanged
    std::uint64_t seq = UINT64_MAX;
    std::int64_t placed_since_us = -1;
    std::size_t num_devices = 0;
    DeviceId first = -1, last = -1;
  };
  struct Account {  // per (tenant, provider)
    MarketUse use;
    double energy_kwh = 0.0, electricity_usd = 0.0, co2_kg = 0.0;
    bool touched = false;
  };
  // Milli-devices held now per (tenant, key), summed over the running jobs: what one
  // interval between events costs, integrated in one pass over these instead of the jobs.
  struct Holding {
    int tenant = 0, key = 0;
    std::int64_t milli = 0;
  };
  int tenant_index(const std::string& user);
  int provider_of(int key) const;
  Account& account(int tenant, int provider) { return accounts_[static_cast<std::size_t>(tenant * num_providers_ + provider)]; }
  // Books `milli` milli-devices of (tenant, key) over [last_, now).
  void book(int tenant, int key, std::int64_t milli, Tick now);
  void hold(const Held& h, int sign);

  const Simulator& sim_;
  const Market& market_;
  EnergyMeter* energy_;
  int num_providers_;
  std::vector<std::string> tenant_names_;  // in order of first appearance
  std::vector<Account> accounts_;          // tenant-major
  std::vector<Held> held_;                 // by job slot
  std::vector<int> device_site_;           // market site of each device
  std::vector<Holding> holdings_;          // in order of first use
  std::map<std::pair<int, int>, std::size_t> holding_index_;
  std::vector<double> offer_cost_;         // USD per device of each offer over [last_, cost_until_), -1 = not computed
  Tick cost_until_;
  MarketUse by_kind_[3];
  std::optional<bool> has_price_, has_carbon_;
  // The simulator's counters at the last after_event: when only completions changed
  // placements since, the holdings are those minus the ended jobs.
  SimulatorStats seen_;
  bool seen_valid_ = false;
  Tick last_;
};

}  // namespace schedsim
