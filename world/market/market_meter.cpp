#include "world/market/market_meter.hpp"

#include <algorithm>
#include <numeric>

namespace schedsim {

MarketMeter::MarketMeter(const Simulator& sim, const Market& market, EnergyMeter* energy)
    : sim_(sim), market_(market), energy_(energy), num_providers_(static_cast<int>(market.providers().size())) {
  offer_cost_.resize(market.offers().size());
  device_site_.assign(static_cast<std::size_t>(sim.cluster_state().spec().num_devices()), 0);
  for (std::size_t s = 0; s < market.sites().size(); ++s) {
    const MarketSite& site = market.sites()[s];
    for (DeviceId d = site.first_device; d < site.first_device + site.num_devices; ++d) device_site_[static_cast<std::size_t>(d)] = static_cast<int>(s);
  }
}

int MarketMeter::tenant_index(const std::string& user) {
  for (std::size_t t = 0; t < tenant_names_.size(); ++t) {
    if (tenant_names_[t] == user) return static_cast<int>(t);
  }
  tenant_names_.push_back(user);
  accounts_.resize(tenant_names_.size() * static_cast<std::size_t>(num_providers_));
  return static_cast<int>(tenant_names_.size() - 1);
}

int MarketMeter::provider_of(int key) const {
  return key >= 0 ? market_.offer(key).provider : market_.sites()[static_cast<std::size_t>(-1 - key)].provider;
}

void MarketMeter::book(int tenant, int key, std::int64_t milli, Tick now) {
  if (milli == 0 || now <= last_) return;
  const double devices = static_cast<double>(milli) / 1000.0;
  const double device_h = devices * (now - last_).seconds() / 3600.0;
  Account& a = account(tenant, provider_of(key));
  a.touched = true;
  a.use.device_h += device_h;
  if (key < 0) return;  // owned by the operator: no compute price
  if (cost_until_ != now) {  // a new interval: forget the per-offer integrals
    std::fill(offer_cost_.begin(), offer_cost_.end(), -1.0);
    cost_until_ = now;
  }
  double& per_device = offer_cost_[static_cast<std::size_t>(key)];
  if (per_device < 0.0) per_device = market_.cost_usd_per_device(key, last_, now);
  const double usd = devices * per_device;
  a.use.compute_usd += usd;
  MarketUse& k = by_kind_[static_cast<int>(market_.offer(key).kind)];
  k.device_h += device_h;
  k.compute_usd += usd;
}

void MarketMeter::hold(const Held& h, int sign) {
  for (const Held::Part& p : h.offers) holdings_[p.holding].milli += sign * p.milli;
}

void MarketMeter::after_event(const Simulator& sim) {
  const Tick now = sim.now();
  for (const Holding& h : holdings_) book(h.tenant, h.key, h.milli, now);
  last_ = now;
  // The placements held until the next event. When no action was applied and the only
  // devices given back since the last event were those of ended jobs (one release each),
  // their holdings are already gone (on_job_end) and nothing else changed.
  const SimulatorStats& st = sim.stats();
  const bool unchanged = seen_valid_ && st.actions == seen_.actions &&
                         st.placement_changes - seen_.placement_changes == st.jobs_completed - seen_.jobs_completed;
  seen_ = st;
  seen_valid_ = true;
  if (unchanged) return;
  for (Holding& h : holdings_) h.milli = 0;
  for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) {
    const JobState& j = sim.job(s);
    if (held_.size() <= static_cast<std::size_t>(s)) held_.resize(static_cast<std::size_t>(s) + 1);
    Held& h = held_[static_cast<std::size_t>(s)];
    if (j.devices.empty()) {
      h.seq = UINT64_MAX;
      continue;
    }
    if (h.seq != j.arrival_seq || h.placed_since_us != j.placed_since.us() || h.num_devices != j.devices.size() || h.first != j.devices.front() ||
        h.last != j.devices.back()) {
      h.seq = j.arrival_seq;
      h.placed_since_us = j.placed_since.us();
      h.num_devices = j.devices.size();
      h.first = j.devices.front();
      h.last = j.devices.back();
      h.tenant = tenant_index(j.spec.user);
      h.offers.clear();
      const std::int64_t share = j.spec.is_fractional() ? j.spec.gpu_milli : 1000;
      for (DeviceId d : j.devices) {
        const int offer = market_.device_offer(d);
        const int key = offer >= 0 ? offer : -1 - device_site_[static_cast<std::size_t>(d)];
        auto it = std::find_if(h.offers.begin(), h.offers.end(), [&](const Held::Part& p) { return p.key == key; });
        if (it != h.offers.end()) {
          it->milli += share;
          continue;
        }
        auto [index, added] = holding_index_.try_emplace({h.tenant, key}, holdings_.size());
        if (added) holdings_.push_back(Holding{h.tenant, key, 0});
        h.offers.push_back(Held::Part{key, share, index->second});
      }
    }
    hold(h, +1);
  }
}

void MarketMeter::on_job_end(const JobState& job) {
  // Its devices until now, booked now (after_event books the jobs still running), then
  // its holdings are released.
  // The kernel passes its own record of the job: its slot is its index.
  const auto slot = static_cast<std::size_t>(&job - &sim_.job(0));
  if (slot < held_.size() && &sim_.job(static_cast<JobSlot>(slot)) == &job && held_[slot].seq == job.arrival_seq) {
    Held& h = held_[slot];
    for (const Held::Part& p : h.offers) book(h.tenant, p.key, p.milli, sim_.now());
    hold(h, -1);
    h.seq = UINT64_MAX;
  }
  if (!energy_) return;
  const EnergyUse& e = energy_->use_of_ended(job);  // settled by whichever asks first
  const int site = job.site >= 0 ? job.site : 0;  // JobState::site is set with several datacenters
  Account& a = account(tenant_index(job.spec.user), market_.sites()[static_cast<std::size_t>(site)].provider);
  a.touched = true;
  a.energy_kwh += e.energy_kwh;
  if (e.cost_usd) a.electricity_usd += *e.cost_usd;
  if (e.co2_kg) a.co2_kg += *e.co2_kg;
  has_price_ = e.cost_usd.has_value();
  has_carbon_ = e.co2_kg.has_value();
}

MarketTotals MarketMeter::totals() const {
  MarketTotals t;
  for (int k = 0; k < 3; ++k) t.by_kind[k] = by_kind_[k];
  t.by_provider.resize(static_cast<std::size_t>(num_providers_));
  for (const Provider& p : market_.providers()) t.provider_names.push_back(p.name);
  std::vector<std::size_t> order(tenant_names_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tenant_names_[a] < tenant_names_[b]; });
  std::vector<std::size_t> providers(static_cast<std::size_t>(num_providers_));
  std::iota(providers.begin(), providers.end(), 0);
  std::sort(providers.begin(), providers.end(), [&](std::size_t a, std::size_t b) { return market_.providers()[a].name < market_.providers()[b].name; });
  // Every total is summed over the settlement rows in their order, so that the ledger's
  // totals (summed the same way) equal these exactly.
  for (std::size_t t_i : order) {
    MarketUse tenant;
    for (std::size_t p : providers) {
      const Account& a = accounts_[t_i * static_cast<std::size_t>(num_providers_) + p];
      if (!a.touched) continue;
      SettlementRow row;
      row.tenant = tenant_names_[t_i];
      row.provider = market_.providers()[p].name;
      row.device_h = a.use.device_h;
      row.compute_usd = a.use.compute_usd;
      row.energy_kwh = a.energy_kwh;
      if (energy_ && has_price_.value_or(false)) row.electricity_usd = a.electricity_usd;
      if (energy_ && has_carbon_.value_or(false)) row.co2_kg = a.co2_kg;
      t.settlement.push_back(row);
      tenant.device_h += a.use.device_h;
      tenant.compute_usd += a.use.compute_usd;
      t.by_provider[p].device_h += a.use.device_h;
      t.by_provider[p].compute_usd += a.use.compute_usd;
      t.total.device_h += a.use.device_h;
      t.total.compute_usd += a.use.compute_usd;
    }
    t.tenants.push_back(tenant_names_[t_i]);
    t.by_tenant.push_back(tenant);
  }
  return t;
}

const std::vector<ValueField<MarketUse>>& market_use_fields() {
  using F = ValueField<MarketUse>;
  static const std::vector<F> fields = {
      {"device_hours", "h", F::Kind::kReal, [](const MarketUse& u) { return std::optional<double>(u.device_h); }, nullptr},
      {"compute_usd", "USD", F::Kind::kReal, [](const MarketUse& u) { return std::optional<double>(u.compute_usd); }, nullptr},
  };
  return fields;
}

const std::vector<ValueField<MarketReport>>& market_fields() {
  using F = ValueField<MarketReport>;
  static const std::vector<F> fields = [] {
    std::vector<F> f;
    for (const ValueField<MarketUse>& use : market_use_fields()) {  // the total's use first
      const std::function<std::optional<double>(const MarketUse&)> value = use.value;
      f.push_back({use.name, use.unit, F::Kind::kReal, [value](const MarketReport& r) { return value(r.totals->total); }, nullptr});
    }
    auto stat = [&f](const char* name, std::uint64_t SimulatorStats::*m) {
      f.push_back({name, "", F::Kind::kCount, [m](const MarketReport& r) { return std::optional<double>(static_cast<double>(r.stats->*m)); }, nullptr});
    };
    stat("spot_reclamations", &SimulatorStats::spot_reclamations);
    stat("spot_devices_reclaimed", &SimulatorStats::spot_devices_reclaimed);
    stat("jobs_hit_by_reclaim", &SimulatorStats::jobs_hit_by_reclaim);
    return f;
  }();
  return fields;
}

}  // namespace schedsim
