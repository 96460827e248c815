// Simulated time: an integer count of microseconds behind a strong type, so that event
// order never depends on floating-point rounding and arithmetic on seconds and ticks
// cannot be mixed by accident.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace schedsim {

class Tick {
 public:
  static constexpr std::int64_t kPerSecond = 1'000'000;

  constexpr Tick() = default;
  static constexpr Tick from_us(std::int64_t us) { return Tick(us); }
  static constexpr Tick max() { return Tick(std::numeric_limits<std::int64_t>::max()); }
  // Rounds to the nearest microsecond. Throws std::invalid_argument for NaN, infinity
  // or values that do not fit in 64-bit microseconds (about ±292,000 years).
  static Tick from_seconds(double s);

  constexpr std::int64_t us() const { return us_; }
  constexpr double seconds() const { return static_cast<double>(us_) / kPerSecond; }

  constexpr Tick operator+(Tick o) const { return Tick(us_ + o.us_); }
  constexpr Tick operator-(Tick o) const { return Tick(us_ - o.us_); }
  constexpr Tick& operator+=(Tick o) { us_ += o.us_; return *this; }
  constexpr bool operator==(Tick o) const { return us_ == o.us_; }
  constexpr bool operator!=(Tick o) const { return us_ != o.us_; }
  constexpr bool operator<(Tick o) const { return us_ < o.us_; }
  constexpr bool operator<=(Tick o) const { return us_ <= o.us_; }
  constexpr bool operator>(Tick o) const { return us_ > o.us_; }
  constexpr bool operator>=(Tick o) const { return us_ >= o.us_; }

 private:
  constexpr explicit Tick(std::int64_t us) : us_(us) {}
  std::int64_t us_ = 0;
};

// Exact decimal seconds ("12.5", "3", "-0.000001"): no floating-point detour, so
// outputs are byte-identical wherever they are produced.
std::string format_seconds(Tick t);

}  // namespace schedsim
