// Snapshot support of the market: the spot on/off cursors and the market meter
// (sim/snapshot_archive.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "world/market/market.hpp"
#include "world/market/market_meter.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

void SpotCursor::snapshot(SnapshotArchive& ar) { ar(rng_, initial_, current_, t_, up_); }

void MarketMeter::snapshot(SnapshotArchive& ar) {
  ar.section("market meter");
  ar(tenant_names_);
  ar.io_each(accounts_, [&](Account& a) { ar(a.use.device_h, a.use.compute_usd, a.energy_kwh, a.electricity_usd, a.co2_kg, a.touched); });
  ar.io_each(held_, [&](Held& h) {
    ar(h.tenant);
    ar.io_each(h.offers, [&](Held::Part& p) { ar(p.key, p.milli, p.holding); });
    ar(h.seq, h.placed_since_us, h.num_devices, h.first, h.last);
  });
  ar.io_each(holdings_, [&](Holding& h) { ar(h.tenant, h.key, h.milli); });
  ar(holding_index_, offer_cost_, cost_until_);
  for (MarketUse& u : by_kind_) ar(u.device_h, u.compute_usd);
  ar(has_price_, has_carbon_, seen_, seen_valid_, last_);
  if (!ar.loading()) return;
  // Tenants, keys (an offer, or -1 - site) and holdings index the tables unchecked.
  const int tenants = static_cast<int>(tenant_names_.size());
  const int offers = static_cast<int>(market_.offers().size()), sites = static_cast<int>(market_.sites().size());
  const auto key_ok = [&](int key) { return key < offers && key >= -sites; };
  ar.check(accounts_.size() == tenant_names_.size() * static_cast<std::size_t>(num_providers_) && offer_cost_.size() == market_.offers().size(),
           "the market meter's accounts or offer costs are sized for another market");
  for (std::size_t i = 0; i < holdings_.size(); ++i) {
    const Holding& h = holdings_[i];
    ar.check(h.tenant >= 0 && h.tenant < tenants && key_ok(h.key), "the market meter's holding " + std::to_string(i) + " names tenant " + std::to_string(h.tenant) + " and key " + std::to_string(h.key) + ", which do not exist");
  }
  for (const auto& [k, i] : holding_index_) {
    ar.check(i < holdings_.size() && holdings_[i].tenant == k.first && holdings_[i].key == k.second, "the market meter's holding index does not match its holdings");
  }
  const int n = sim_.cluster_state().spec().num_devices();
  for (std::size_t slot = 0; slot < held_.size(); ++slot) {
    const Held& h = held_[slot];
    ar.check(h.tenant >= 0 && (h.tenant < tenants || (tenants == 0 && h.offers.empty())) && h.first >= -1 && h.first < n && h.last >= -1 && h.last < n,
             "the market meter's record of job slot " + std::to_string(slot) + " names a tenant or device that does not exist");
    for (const Held::Part& part : h.offers) {
      ar.check(key_ok(part.key) && part.holding < holdings_.size() && holdings_[part.holding].tenant == h.tenant && holdings_[part.holding].key == part.key,
               "the market meter's record of job slot " + std::to_string(slot) + " names a key or holding that does not exist");
    }
  }
}

}  // namespace schedsim
