#include "traces/power_sweep_file.hpp"

#include <map>

#include "base/error.hpp"
#include "traces/csv_table.hpp"

namespace schedsim {

PowerCurve load_power_sweep_csv(const std::string& path, const PowerSweepFilter& filter) {
  CsvTable t(path, "power sweep");
  const int dataset = t.column("dataset", true), network = t.column("network", true), batch = t.column("batch_size", true),
            optimizer = t.column("optimizer", true), limit = t.column("power_limit", true), time = t.column("time_per_epoch", true),
            power = t.column("average_power", true);
  struct Sum {
    double time = 0, power = 0;
    int n = 0;
  };
  std::map<double, Sum> by_limit;
  auto matches = [&](int col, const std::string& want) { return want.empty() || t.text(col) == want; };
  while (t.next_row()) {
    if (!matches(dataset, filter.dataset) || !matches(network, filter.network) || !matches(batch, filter.batch_size) ||
        !matches(optimizer, filter.optimizer)) {
      continue;
    }
    Sum& s = by_limit[t.number(limit)];
    s.time += t.number(time);
    s.power += t.number(power);
    ++s.n;
  }
  if (by_limit.empty()) {
    throw InputError(path, "no row matches dataset '" + filter.dataset + "', network '" + filter.network + "', batch_size '" + filter.batch_size +
                               "', optimizer '" + filter.optimizer + "' (empty = any)");
  }
  std::vector<PowerPoint> points;
  for (const auto& [l, s] : by_limit) points.push_back(PowerPoint{l, s.time / s.n, s.power / s.n});
  return PowerCurve(points, path);
}

}  // namespace schedsim
