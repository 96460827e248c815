#include "world/power_caps/power_cap.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"

namespace schedsim {

PowerCurve::PowerCurve(std::vector<PowerPoint> points, const std::string& source) : points_(std::move(points)), source_(source) {
  std::sort(points_.begin(), points_.end(), [](const PowerPoint& a, const PowerPoint& b) { return a.limit_w < b.limit_w; });
  if (points_.size() < 2) throw InputError(source_, "a power curve needs at least two power limits");
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const PowerPoint& p = points_[i];
    if (!(p.limit_w > 0) || !(p.time_s > 0) || !(p.power_w > 0) || !std::isfinite(p.limit_w + p.time_s + p.power_w)) {
      throw InputError(source_, "power limit, time and power must be positive finite numbers");
    }
    if (i > 0 && p.limit_w == points_[i - 1].limit_w) throw InputError(source_, "power limit " + std::to_string(p.limit_w) + " W is listed twice");
  }
}

PowerPoint PowerCurve::at(double limit_w) const {
  const double lo = points_.front().limit_w, hi = points_.back().limit_w;
  if (!(limit_w >= lo - 1e-9 && limit_w <= hi + 1e-9)) {
    throw InputError(source_, "power limit " + std::to_string(limit_w) + " W is outside the measured range [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "] W");
  }
  auto it = std::lower_bound(points_.begin(), points_.end(), limit_w, [](const PowerPoint& p, double v) { return p.limit_w < v; });
  if (it == points_.end()) return points_.back();
  if (it->limit_w == limit_w || it == points_.begin()) return *it;
  const PowerPoint& a = *(it - 1);
  const PowerPoint& b = *it;
  const double w = (limit_w - a.limit_w) / (b.limit_w - a.limit_w);
  return PowerPoint{limit_w, a.time_s + w * (b.time_s - a.time_s), a.power_w + w * (b.power_w - a.power_w)};
}

CappedDevice PowerCurve::capped(double tdp_w, double cap_fraction) const {
  const PowerPoint full = points_.back();
  const PowerPoint p = at(cap_fraction * full.limit_w);
  return CappedDevice{full.time_s / p.time_s, tdp_w * p.power_w / full.power_w};
}

}  // namespace schedsim
