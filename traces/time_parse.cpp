#include "traces/time_parse.hpp"

#include <cctype>

namespace schedsim {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

bool leap(long long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(long long y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// 0 = Sunday.
unsigned weekday(long long days) {
  long long w = (days + 4) % 7;  // 1970-01-01 was a Thursday
  if (w < 0) w += 7;
  return static_cast<unsigned>(w);
}

// Day of month of the n-th Sunday (n >= 1) of y-m.
unsigned nth_sunday(long long y, unsigned m, unsigned n) {
  const unsigned first = weekday(days_from_civil(y, m, 1));
  return 1 + (7 - first) % 7 + 7 * (n - 1);
}

}  // namespace

long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

bool parse_datetime(std::string_view s, const TimeZone& zone, double& unix_s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (s.size() < 19 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' || !digits(s, 8, 2, d) ||
      (s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
      !digits(s, 17, 2, sec)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || static_cast<unsigned>(d) > days_in_month(y, static_cast<unsigned>(mo)) || h > 23 || mi > 59 || sec > 60) return false;
  std::size_t pos = 19;
  double frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    double scale = 0.1;
    const std::size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      frac += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return false;
  }
  const long long days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const double local = static_cast<double>(days * 86400 + h * 3600 + mi * 60 + sec) + frac;
  if (pos < s.size()) {
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
      unix_s = local;
      return true;
    }
    if (s[pos] != '+' && s[pos] != '-') return false;
    const int sign = s[pos] == '+' ? 1 : -1;
    int oh = 0, om = 0;
    if (!digits(s, pos + 1, 2, oh)) return false;
    std::size_t mpos = pos + 3;
    if (mpos < s.size() && s[mpos] == ':') ++mpos;
    if (!digits(s, mpos, 2, om) || mpos + 2 != s.size() || oh > 14 || om > 59) return false;
    unix_s = local - sign * (oh * 3600 + om * 60);
    return true;
  }
  if (zone.kind == TimeZone::Kind::kFixed) {
    unix_s = local - zone.offset_s;
    return true;
  }
  // US Pacific: daylight time between the 2nd Sunday of March 02:00 and the 1st Sunday
  // of November 02:00, local wall clock.
  const unsigned m = static_cast<unsigned>(mo);
  bool dst = m > 3 && m < 11;
  if (m == 3) {
    const unsigned start = nth_sunday(y, 3, 2);
    dst = static_cast<unsigned>(d) > start || (static_cast<unsigned>(d) == start && h >= 2);
  } else if (m == 11) {
    const unsigned end = nth_sunday(y, 11, 1);
    dst = static_cast<unsigned>(d) < end || (static_cast<unsigned>(d) == end && h < 2);
  }
  unix_s = local + (dst ? 7 : 8) * 3600;
  return true;
}

}  // namespace schedsim
