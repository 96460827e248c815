// Snapshot support of the failure model (sim/snapshot_archive.hpp): its random streams.
#include <algorithm>
#include <cmath>
#include <string>

#include "world/failures/failure_model.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

void FailureModel::snapshot(SnapshotArchive& ar) {
  ar.section("failure model");
  ar(spike_rng_, unit_rng_);  // units, rates and slow nodes follow from the config and seed
}

}  // namespace schedsim
