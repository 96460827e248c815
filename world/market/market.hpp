// The compute market (docs/market.md): datacenters belong to providers, and each provider
// sells the devices of a datacenter under offers of three kinds, on-demand, reserved and
// spot, priced in USD per device-hour (a constant or a time series). Spot capacity can be
// taken back by the provider: how many of an offer's devices are available over time comes
// from a time series or from a seeded on/off model, read through a SpotCursor.
//
// Every device belongs to at most one offer, fixed for the run: within each (site, device
// type), in ascending device id, the reserved offer's devices first, then the spot offer's,
// then every remaining device to the on-demand offer. A device no offer covers is owned by
// the operator: no compute cost, device_offer() == -1.
//
// Immutable once built; the mutable part (where a spot cursor is) lives in SpotCursor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "base/rng.hpp"
#include "base/signals.hpp"
#include "base/tick.hpp"

namespace schedsim {

enum class PriceKind : std::uint8_t { kOnDemand, kReserved, kSpot };
const char* to_string(PriceKind k);  // "on_demand", "reserved", "spot"

// How many of a spot offer's devices the provider lets the customer use over time.
struct SpotAvailability {
  enum class Kind : std::uint8_t { kAlways, kSeries, kOnOff };
  Kind kind = Kind::kAlways;
  // kSeries: available devices as a step function of UTC time (each value an integer in
  // [0, offer devices]); after the data's end the last value persists.
  std::shared_ptr<const StepSeries> devices;
  // kOnOff: alternating up periods (every device available) and down periods (a share
  // `fraction_reclaimed` of the devices, rounded to nearest, taken back), exponentially
  // distributed with these means, starting up at time 0; drawn from the run's seed.
  double mean_up_h = 24.0, mean_down_h = 2.0, fraction_reclaimed = 1.0;
};

struct Offer {
  int provider = 0;
  int site = 0;
  std::string device_type;  // a catalogue type, as the cluster's node groups name it
  PriceKind kind = PriceKind::kOnDemand;
  // USD per device-hour as a step function of UTC time.
  std::shared_ptr<const StepSeries> usd_per_device_h;
  // Devices sold under this offer (on-demand: every device of the type in the site that
  // no reserved or spot offer takes; filled in by Market).
  int devices = 0;
  SpotAvailability availability;  // spot only
};

struct Provider {
  std::string name;
  std::vector<int> sites;  // ascending
};

// A site as the market sees it: a contiguous device range and the provider owning it.
struct MarketSite {
  std::string name;
  int provider = 0;
  DeviceId first_device = 0;
  int num_devices = 0;
};

// A change of a spot offer's availability: from `time` on, `available` of its devices
// may be used (the others are reclaimed).
struct SpotChange {
  Tick time = Tick::max();
  int available = 0;
  bool operator==(const SpotChange& o) const { return time == o.time && available == o.available; }
};

class Market;

// Walks one spot offer's availability forward in time. Deterministic: the on/off model's
// periods come from an Rng stream named after the offer, so the same seed gives the same
// changes whatever else the run does.
class SpotCursor {
 public:
  SpotCursor(const Market& market, int offer, std::uint64_t seed);
  // Availability at time 0.
  int initial() const { return initial_; }
  // The next change after the last one returned (after time 0 at first), with an
  // availability different from the previous one; time == Tick::max() when none is left.
  SpotChange next();

  void snapshot(SnapshotArchive& ar);

 private:
  const Market* market_;
  int offer_;
  Rng rng_;
  int initial_ = 0, current_ = 0;
  Tick t_;
  bool up_ = true;
};

class Market {
 public:
  // `offers` name sites by index into `sites` and providers by index into `providers`;
  // on-demand offers get their device count here. Throws InputError when an offer's
  // type has no device in its site, when the reserved and spot devices of a (site, type)
  // exceed its devices, when two offers of one kind share a (site, type), or when an
  // index is out of range.
  Market(const ClusterSpec& cluster, std::vector<MarketSite> sites, std::vector<Provider> providers, std::vector<Offer> offers,
         std::int64_t origin_utc_us);

  const std::vector<Provider>& providers() const { return providers_; }
  const std::vector<MarketSite>& sites() const { return sites_; }
  const std::vector<Offer>& offers() const { return offers_; }
  const Offer& offer(int i) const { return offers_[static_cast<std::size_t>(i)]; }
  std::int64_t origin_utc_us() const { return origin_utc_us_; }

  // Indices of the offers of `device_type` in `site` (reserved, spot, on-demand order).
  std::vector<int> offers_at(int site, const std::string& device_type) const;
  // The offer device `d` is sold under, -1 when none (owned by the operator).
  int device_offer(DeviceId d) const { return device_offer_[static_cast<std::size_t>(d)]; }
  // Devices of an offer, ascending.
  const std::vector<DeviceId>& offer_devices(int offer) const { return offer_devices_[static_cast<std::size_t>(offer)]; }
  bool is_spot(DeviceId d) const;

  // USD per device-hour of `offer` at simulated time t. Throws InputError when a price
  // series does not cover t.
  double price_usd_per_device_h(int offer, Tick t) const;
  // USD one device of `offer` costs over simulated [a, b] (the price integrated step by
  // step, so a run crossing a price change is split exactly there).
  double cost_usd_per_device(int offer, Tick a, Tick b) const;

  // Spot availability of `offer` over simulated [0, horizon): the value at time 0 and each
  // change before the horizon.
  std::vector<SpotChange> spot_timeline(int offer, Tick horizon, std::uint64_t seed) const;

 private:
  std::vector<MarketSite> sites_;
  std::vector<Provider> providers_;
  std::vector<Offer> offers_;
  std::int64_t origin_utc_us_;
  std::vector<int> device_offer_;
  std::vector<std::vector<DeviceId>> offer_devices_;
};

}  // namespace schedsim
