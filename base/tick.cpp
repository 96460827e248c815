#include "base/tick.hpp"

#include <cmath>
#include <stdexcept>

namespace schedsim {

Tick Tick::from_seconds(double s) {
  if (!std::isfinite(s)) throw std::invalid_argument("time is not a finite number");
  const double us = std::round(s * static_cast<double>(kPerSecond));
  // 9.2e18 is the int64 limit; stay clear of it so sums of a few times cannot overflow.
  if (std::fabs(us) > 4.0e18) throw std::invalid_argument("time is too large (over 100,000 years)");
  return Tick(static_cast<std::int64_t>(us));
}

std::string format_seconds(Tick t) {
  std::int64_t us = t.us();
  std::string out;
  if (us < 0) {
    out.push_back('-');
    us = -us;
  }
  out += std::to_string(us / Tick::kPerSecond);
  std::int64_t frac = us % Tick::kPerSecond;
  if (frac != 0) {
    char digits[7];
    for (int i = 5; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    int len = 6;
    while (len > 0 && digits[len - 1] == '0') --len;
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(len));
  }
  return out;
}

}  // namespace schedsim
