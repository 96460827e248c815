// Seeded random streams. The generator (xoshiro256**) and every distribution are
// implemented here rather than taken from <random>, whose distributions differ between
// standard libraries: the same seed must give the same bytes on every platform.
#pragma once

#include <cstdint>
#include <string_view>

namespace schedsim {

class SnapshotArchive;

class Rng {
 public:
  // Independent stream `name` of the experiment seeded with `seed`: streams for
  // arrivals, durations, failures... never share state, so enabling one feature does not
  // shift the random numbers of another.
  Rng(std::uint64_t seed, std::string_view name);

  std::uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  double uniform();
  // Uniform on the open interval (0, 1): safe to take the logarithm of, and never 1, so
  // -log(u) is never exactly 0.
  double uniform_open();
  // Uniform integer on [0, n), without modulo bias. n must be > 0.
  std::uint64_t below(std::uint64_t n);
  double exponential(double mean);
  double normal(double mean, double stddev);
  // Lognormal with the given median (= e^mu) and sigma of the underlying normal.
  double lognormal(double median, double sigma);
  // Pareto type I: P(X > x) = (scale / x)^shape for x >= scale.
  double pareto(double scale, double shape);

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);

 private:
  std::uint64_t s_[4];
};

}  // namespace schedsim
