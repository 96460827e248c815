// Time-series files of grid signals, read with no conversion: a timestamp column (UTC,
// naive or with an offset: "2023-01-01 00:00:00", "2023-01-01 00:00:00+00:00",
// "2023-01-01T00:00:00Z") and a value column, one row per step. The defaults match the
// Electricity Maps carbon files ("Datetime (UTC)", "Carbon Intensity gCO₂eq/kWh (direct)")
// and the green-dcc price files ("Datetime (UTC)", "Price (USD/MWh)").
#pragma once

#include <string>

#include "base/signals.hpp"

namespace schedsim {

struct SignalFileColumns {
  std::string time;   // "" = "Datetime (UTC)"
  std::string value;  // "" = the default of the signal kind (see above)
};

// The default value column for `kind`.
std::string default_value_column(SignalKind kind);

// Loads `path` as a finite step series: each value holds from its timestamp to the next;
// the last one for one step. Steps must all be equal: an unsorted or repeated timestamp,
// or a gap (a missing row), is an InputError naming the file and line, as are missing
// columns (listing the header), unreadable times and non-numeric values. `display_name`
// names the series in later messages (e.g. the file path).
StepSeries load_signal_csv(const std::string& path, SignalKind kind, const SignalFileColumns& columns, const std::string& display_name);
// The same for any step series: `what` names it in messages ("outside temperature"),
// `time_column` and `value_column` are required.
StepSeries load_step_csv(const std::string& path, const std::string& what, const std::string& time_column, const std::string& value_column,
                         const std::string& display_name);

}  // namespace schedsim
