// An exact, order-independent sum of doubles that can also take terms back out.
//
// Each term is converted to a 128-bit fixed-point number with 64 fractional bits (bits
// below 2^-64 are dropped: 5e-20 W on a power), so additions and removals are exact
// integer operations and the sum reads the same whatever the order of the terms and
// however often they were added and removed. A running double sum with += new - old
// would drift, and its bits would depend on the history of the changes.
// Range: |sum| < 2^63 (9.2e18).
#pragma once

#include <cmath>

namespace schedsim {

class ExactSum {
 public:
  __extension__ using Fixed = __int128;
  static constexpr int kFractionBits = 64;

  static Fixed to_fixed(double v) { return static_cast<Fixed>(std::ldexp(v, kFractionBits)); }
  static double to_double(Fixed f) { return std::ldexp(static_cast<double>(f), -kFractionBits); }

  void add(double v) { acc_ += to_fixed(v); }
  void remove(double v) { acc_ -= to_fixed(v); }
  // The sum rounded once to the nearest double.
  double value() const { return to_double(acc_); }
  Fixed fixed() const { return acc_; }
  Fixed& raw() { return acc_; }  // for snapshots

 private:
  Fixed acc_ = 0;
};

}  // namespace schedsim
