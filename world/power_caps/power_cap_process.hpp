// Power caps (sim/power_cap.hpp) as a world process: each device runs at its type's
// capped speed, and a job runs at its slowest device's (its rate factor). With a thermal
// model the thermal process's speeds include the caps and this process is not registered.
#pragma once

#include <utility>
#include <vector>

#include "sim/world_process.hpp"

namespace schedsim {

class PowerCapProcess final : public WorldProcess {
 public:
  // `device_speed`: the capped speed of each device (1 = full speed).
  explicit PowerCapProcess(std::vector<double> device_speed) : speed_(std::move(device_speed)) {}

  const char* name() const override { return "power caps"; }
  std::uint32_t hooks() const override { return kRateFactor; }
  double rate_factor(const JobState& j) const override;
  const std::vector<double>& device_speed() const { return speed_; }

 private:
  std::vector<double> speed_;
};

}  // namespace schedsim
