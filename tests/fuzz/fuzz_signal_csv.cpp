// libFuzzer target: the grid-signal time-series reader (price / carbon CSV files). A
// series it accepts must be a valid step function: finite values, strictly increasing
// equally spaced steps.
#include <cmath>
#include <cstdlib>

#include "tests/fuzz/fuzz_input.hpp"
#include "traces/signal_files.hpp"

using namespace schedsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input("signal.csv", data, size);
  // The first byte picks the kind (its default value column), so both get exercised.
  const SignalKind kind = size > 0 && (data[0] & 1) ? SignalKind::kCarbon : SignalKind::kPrice;
  fuzz::expect_input_errors_only([&] {
    const StepSeries s = load_signal_csv(path, kind, SignalFileColumns{}, path);
    (void)s;
  });
  return 0;
}
