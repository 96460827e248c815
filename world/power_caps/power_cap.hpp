// Power capping: a device type may run at a lower power limit, trading speed for power.
// The trade-off is a measured curve (e.g. ml-energy/zeus sweeps, summary_power_*.csv):
// for each power limit, the relative speed and the average power drawn under load. The
// curve is used in relative terms, so a sweep measured on one GPU applies to another:
// a cap of fraction f of the device's TDP maps to the curve's limit f x (its largest
// limit); the device then runs at speed(f) = t(largest) / t(f x largest) of full speed
// and draws, when busy, TDP x P(f x largest) / P(largest). Between measured limits both
// are interpolated linearly.
#pragma once

#include <string>
#include <vector>

namespace schedsim {

struct PowerPoint {
  double limit_w = 0.0;     // the power limit set on the device
  double time_s = 0.0;      // time per unit of work under that limit (e.g. per epoch)
  double power_w = 0.0;     // average power drawn under load
};

struct CappedDevice {
  double speed = 1.0;          // relative to the largest limit of the curve
  double busy_power_w = 0.0;   // at full utilization, W
};

class PowerCurve {
 public:
  // Points with distinct limits (sorted here); at least two; positive values. Throws
  // InputError naming `source` otherwise.
  PowerCurve(std::vector<PowerPoint> points, const std::string& source);
  const std::vector<PowerPoint>& points() const { return points_; }
  double max_limit_w() const { return points_.back().limit_w; }
  // Time and power at `limit_w` (linear between points). Throws InputError outside the
  // measured range.
  PowerPoint at(double limit_w) const;
  // A device of `tdp_w` capped at fraction `cap_fraction` of its TDP (in the curve's range
  // of fractions: smallest limit / largest limit to 1).
  CappedDevice capped(double tdp_w, double cap_fraction) const;

 private:
  std::vector<PowerPoint> points_;
  std::string source_;
};

}  // namespace schedsim
