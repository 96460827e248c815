// Measured power-limit sweeps in the ml-energy/zeus summary format
// (dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power), e.g.
// ../shared/data/gpu_specs/summary_power_v100.csv, read into a PowerCurve.
#pragma once

#include <string>

#include "world/power_caps/power_cap.hpp"

namespace schedsim {

// Which rows to use; empty fields match every row. Rows with the same power limit are
// averaged (time per epoch and power).
struct PowerSweepFilter {
  std::string dataset, network, batch_size, optimizer;
};

// Throws InputError naming the file (and line) for missing columns, bad numbers, or a
// filter no row matches.
PowerCurve load_power_sweep_csv(const std::string& path, const PowerSweepFilter& filter);

}  // namespace schedsim
