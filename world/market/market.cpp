#include "world/market/market.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.hpp"

namespace schedsim {

const char* to_string(PriceKind k) {
  switch (k) {
    case PriceKind::kOnDemand: return "on_demand";
    case PriceKind::kReserved: return "reserved";
    case PriceKind::kSpot: return "spot";
  }
  return "on_demand";
}

namespace {

// Order of assignment within a (site, type): reserved, spot, on-demand.
int assignment_rank(PriceKind k) { return k == PriceKind::kReserved ? 0 : k == PriceKind::kSpot ? 1 : 2; }

std::string offer_name(const std::vector<MarketSite>& sites, const Offer& o) {
  return std::string("market offer (") + sites[static_cast<std::size_t>(o.site)].name + ", " + o.device_type + ", " + to_string(o.kind) + ")";
}

int down_devices(const Offer& o) { return static_cast<int>(std::lround(o.availability.fraction_reclaimed * o.devices)); }

}  // namespace

Market::Market(const ClusterSpec& cluster, std::vector<MarketSite> sites, std::vector<Provider> providers, std::vector<Offer> offers,
               std::int64_t origin_utc_us)
    : sites_(std::move(sites)), providers_(std::move(providers)), offers_(std::move(offers)), origin_utc_us_(origin_utc_us) {
  device_offer_.assign(static_cast<std::size_t>(cluster.num_devices()), -1);
  offer_devices_.resize(offers_.size());
  for (const auto& s : sites_) {
    if (s.provider < 0 || s.provider >= static_cast<int>(providers_.size())) throw InputError("market", "site '" + s.name + "' has no provider");
    if (s.first_device < 0 || s.num_devices < 0 || s.first_device + s.num_devices > cluster.num_devices()) {
      throw InputError("market", "site '" + s.name + "' covers devices outside the cluster");
    }
  }
  // Offers in assignment order: by site, type, then reserved / spot / on-demand.
  std::vector<int> order(offers_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  for (const auto& o : offers_) {
    if (o.site < 0 || o.site >= static_cast<int>(sites_.size())) throw InputError("market", "an offer names a site that does not exist");
    if (o.provider != sites_[static_cast<std::size_t>(o.site)].provider) throw InputError(offer_name(sites_, o), "the provider must be the site's");
    if (!o.usd_per_device_h) throw InputError(offer_name(sites_, o), "needs a price");
    if (o.kind != PriceKind::kOnDemand && o.devices <= 0) throw InputError(offer_name(sites_, o), "needs a positive number of devices");
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Offer& x = offers_[static_cast<std::size_t>(a)];
    const Offer& y = offers_[static_cast<std::size_t>(b)];
    if (x.site != y.site) return x.site < y.site;
    if (x.device_type != y.device_type) return x.device_type < y.device_type;
    return assignment_rank(x.kind) < assignment_rank(y.kind);
  });
  for (std::size_t k = 0; k < order.size(); ++k) {
    Offer& o = offers_[static_cast<std::size_t>(order[k])];
    if (k > 0) {
      const Offer& prev = offers_[static_cast<std::size_t>(order[k - 1])];
      if (prev.site == o.site && prev.device_type == o.device_type && prev.kind == o.kind) {
        throw InputError(offer_name(sites_, o), "is listed twice; give one offer per datacenter, type and kind");
      }
    }
    const MarketSite& site = sites_[static_cast<std::size_t>(o.site)];
    std::vector<DeviceId> free;
    int of_type = 0;
    for (DeviceId d = site.first_device; d < site.first_device + site.num_devices; ++d) {
      if (cluster.device_type_of(d) != o.device_type) continue;
      ++of_type;
      if (device_offer_[static_cast<std::size_t>(d)] < 0) free.push_back(d);
    }
    if (of_type == 0) throw InputError(offer_name(sites_, o), "datacenter '" + site.name + "' has no device of type " + o.device_type);
    if (o.kind == PriceKind::kOnDemand) o.devices = static_cast<int>(free.size());
    if (o.devices > static_cast<int>(free.size())) {
      throw InputError(offer_name(sites_, o), "sells " + std::to_string(o.devices) + " devices but only " + std::to_string(free.size()) + " of the " +
                                                  std::to_string(of_type) + " " + o.device_type + " devices of " + site.name +
                                                  " are left after the reserved and spot offers before it");
    }
    auto& mine = offer_devices_[static_cast<std::size_t>(order[k])];
    mine.assign(free.begin(), free.begin() + o.devices);
    for (DeviceId d : mine) device_offer_[static_cast<std::size_t>(d)] = order[k];
    if (o.kind == PriceKind::kSpot && o.availability.kind == SpotAvailability::Kind::kSeries) {
      const StepSeries& s = *o.availability.devices;
      if (s.begin_us() > origin_utc_us_) {
        throw InputError(s.name(), "spot availability starts at " + format_utc(s.begin_us()) + ", after simulated time 0 (" + format_utc(origin_utc_us_) + ")");
      }
      for (std::int64_t u = s.begin_us(); u < s.end_us(); u = s.next_change_us(u)) {
        const double v = s.value_at(u);
        if (!(v >= 0 && v <= o.devices) || v != std::floor(v)) {
          throw InputError(s.name(), "spot availability at " + format_utc(u) + " is " + std::to_string(v) + "; expected a whole number of devices in [0, " +
                                         std::to_string(o.devices) + "]");
        }
      }
    }
  }
}

std::vector<int> Market::offers_at(int site, const std::string& device_type) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < offers_.size(); ++i) {
    if (offers_[i].site == site && offers_[i].device_type == device_type) out.push_back(static_cast<int>(i));
  }
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return assignment_rank(offer(a).kind) < assignment_rank(offer(b).kind); });
  return out;
}

bool Market::is_spot(DeviceId d) const {
  const int o = device_offer(d);
  return o >= 0 && offer(o).kind == PriceKind::kSpot;
}

double Market::price_usd_per_device_h(int o, Tick t) const { return offer(o).usd_per_device_h->value_at(origin_utc_us_ + t.us()); }

double Market::cost_usd_per_device(int o, Tick a, Tick b) const {
  return offer(o).usd_per_device_h->integral(origin_utc_us_ + a.us(), origin_utc_us_ + b.us()) / 3600.0;
}

std::vector<SpotChange> Market::spot_timeline(int o, Tick horizon, std::uint64_t seed) const {
  SpotCursor c(*this, o, seed);
  std::vector<SpotChange> out{SpotChange{Tick(), c.initial()}};
  for (SpotChange ch = c.next(); ch.time < horizon; ch = c.next()) out.push_back(ch);
  return out;
}

SpotCursor::SpotCursor(const Market& market, int offer, std::uint64_t seed)
    : market_(&market), offer_(offer), rng_(seed, "spot-availability-" + std::to_string(offer)) {
  const Offer& o = market.offer(offer);
  if (o.kind != PriceKind::kSpot) throw InvariantError("SpotCursor on a " + std::string(to_string(o.kind)) + " offer");
  initial_ = o.devices;
  if (o.availability.kind == SpotAvailability::Kind::kSeries) {
    initial_ = static_cast<int>(o.availability.devices->value_clamped(market.origin_utc_us()));
  }
  current_ = initial_;
}

SpotChange SpotCursor::next() {
  const Offer& o = market_->offer(offer_);
  switch (o.availability.kind) {
    case SpotAvailability::Kind::kAlways: return SpotChange{};
    case SpotAvailability::Kind::kSeries: {
      const StepSeries& s = *o.availability.devices;
      const std::int64_t origin = market_->origin_utc_us();
      std::int64_t u = origin + t_.us();
      while (true) {
        u = s.next_change_us(u);
        if (u == std::numeric_limits<std::int64_t>::max()) return SpotChange{};
        const int v = static_cast<int>(s.value_clamped(u));
        if (v != current_) {
          current_ = v;
          t_ = Tick::from_us(u - origin);
          return SpotChange{t_, v};
        }
      }
    }
    case SpotAvailability::Kind::kOnOff: {
      const int down = o.devices - down_devices(o);
      if (down == o.devices) return SpotChange{};  // nothing is ever reclaimed
      const double mean_h = up_ ? o.availability.mean_up_h : o.availability.mean_down_h;
      // At least one microsecond, so that changes strictly advance.
      t_ = t_ + std::max(Tick::from_us(1), Tick::from_seconds(rng_.exponential(mean_h * 3600.0)));
      up_ = !up_;
      current_ = up_ ? o.devices : down;
      return SpotChange{t_, current_};
    }
  }
  return SpotChange{};
}

}  // namespace schedsim
