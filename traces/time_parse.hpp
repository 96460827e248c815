// Calendar date-times in traces ("2020-06-09 18:41:01", "2023-03-01 00:18:22+08:00")
// turned into Unix seconds (UTC), with the time zone of naive values given by the format.
#pragma once

#include <string_view>

namespace schedsim {

// How to read a date-time that carries no UTC offset.
struct TimeZone {
  enum class Kind { kFixed, kUsPacific };
  Kind kind = Kind::kFixed;
  int offset_s = 0;  // kFixed: local time = UTC + offset_s

  static TimeZone utc() { return {}; }
  static TimeZone fixed_hours(int hours) { return {Kind::kFixed, hours * 3600}; }
  // America/Los_Angeles with the US daylight-saving rules in force since 2007
  // (UTC-7 from the second Sunday of March 02:00 to the first Sunday of November 02:00,
  // else UTC-8). In the repeated hour of November the earlier (daylight) reading is used.
  static TimeZone us_pacific() { return {Kind::kUsPacific, 0}; }
};

// Parses "YYYY-MM-DD HH:MM:SS" ('T' also accepted between date and time), an optional
// fraction of a second, and an optional "Z" or "+HH:MM"/"-HH:MM"/"+HHMM" offset, which
// wins over `zone`. Spaces around the value are ignored. Returns false when the text is
// not such a date-time or a field is out of range (month 13, second 61...).
bool parse_datetime(std::string_view text, const TimeZone& zone, double& unix_s);

// Days since 1970-01-01 of a proleptic Gregorian date.
long long days_from_civil(long long y, unsigned m, unsigned d);

}  // namespace schedsim
