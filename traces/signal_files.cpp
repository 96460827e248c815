#include "traces/signal_files.hpp"

#include <cmath>

#include "base/error.hpp"
#include "traces/csv_table.hpp"
#include "traces/line_reader.hpp"
#include "traces/time_parse.hpp"

namespace schedsim {

std::string default_value_column(SignalKind kind) {
  return kind == SignalKind::kPrice ? "Price (USD/MWh)" : "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct)";
}

StepSeries load_signal_csv(const std::string& path, SignalKind kind, const SignalFileColumns& columns, const std::string& display_name) {
  return load_step_csv(path, to_string(kind), columns.time.empty() ? "Datetime (UTC)" : columns.time,
                       columns.value.empty() ? default_value_column(kind) : columns.value, display_name);
}

namespace {
StepSeries read_step_csv(const std::string& path, const std::string& what, const std::string& time_column, const std::string& value_column,
                         const std::string& display_name);
}  // namespace

StepSeries load_step_csv(const std::string& path, const std::string& what, const std::string& time_column, const std::string& value_column,
                         const std::string& display_name) {
  try {
    return read_step_csv(path, what, time_column, value_column, display_name);
  } catch (const DamagedFileError&) {
    throw;
  } catch (const InputError&) {  // a row garbled by a damaged gzip stream: report the damage
    check_gzip_intact(path);
    throw;
  }
}

namespace {
StepSeries read_step_csv(const std::string& path, const std::string& what, const std::string& time_column, const std::string& value_column,
                         const std::string& display_name) {
  CsvTable table(path, CsvTable::NotATrace{what + " series"});
  const int tcol = table.column(time_column, true);
  const int vcol = table.column(value_column, true);
  std::vector<std::int64_t> times;
  std::vector<double> values;
  std::int64_t step_us = 0;
  std::int64_t step_line = 0;
  while (table.next_row()) {
    double unix_s = 0;
    if (!parse_datetime(table.text(tcol), TimeZone::utc(), unix_s)) {
      table.fail(tcol, "expected a date-time such as 2023-01-01 00:00:00 or 2023-01-01T00:00:00+00:00, got " + table.quoted(tcol), "bad_time");
    }
    const auto t_us = static_cast<std::int64_t>(std::llround(unix_s * 1e6));
    if (!times.empty()) {
      const std::int64_t d = t_us - times.back();
      if (d <= 0) {
        throw InputError(table.where(), "time " + format_utc(t_us) + (d == 0 ? " repeats" : " is before") + " the previous row's (" +
                                            format_utc(times.back()) + "); rows must be sorted by time without duplicates");
      }
      if (step_us == 0) {
        step_us = d;
        step_line = table.line();
      } else if (d != step_us) {
        throw InputError(table.where(), "gap in the series: " + format_utc(t_us) + " follows " + format_utc(times.back()) + " (" +
                                            std::to_string(d / 1'000'000) + " s), but the step set at line " + std::to_string(step_line) + " is " +
                                            std::to_string(step_us / 1'000'000) + " s; fill the missing rows");
      }
    }
    if (table.empty(vcol)) table.fail(vcol, "empty value; every step needs one", "missing_value");
    times.push_back(t_us);
    values.push_back(table.number(vcol));
  }
  if (times.size() < 2) throw InputError(path, "a " + what + " series needs at least two rows (the step length comes from them)");
  const std::int64_t end = times.back() + step_us;
  return StepSeries::finite(display_name, std::move(times), std::move(values), end);
}
}  // namespace

}  // namespace schedsim
