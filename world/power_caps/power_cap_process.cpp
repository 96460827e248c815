#include "world/power_caps/power_cap_process.hpp"

#include <algorithm>

#include "sim/simulator.hpp"  // WorldContext's inline accessors

namespace schedsim {

double PowerCapProcess::rate_factor(const JobState& j) const {
  double slowest = 1.0;  // the slowest device sets the pace
  for (DeviceId d : j.devices) slowest = std::min(slowest, speed_[static_cast<std::size_t>(d)]);
  return slowest;
}

}  // namespace schedsim
