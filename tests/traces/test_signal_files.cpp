// Grid-signal series and their file loaders: step integrals, periodic curves, the two
// real file layouts, errors naming file and line, and alignment on the real 2023 files.
#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "base/signals.hpp"
#include "test_support.hpp"
#include "traces/signal_files.hpp"
#include "traces/time_parse.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {
constexpr std::int64_t kHourUs = 3'600'000'000LL;
std::int64_t utc_us(const char* text) {
  double s = 0;
  REQUIRE(parse_datetime(text, TimeZone::utc(), s));
  return static_cast<std::int64_t>(s) * 1'000'000;
}
}  // namespace

TEST_CASE("step series integrals split exactly at step boundaries", "[signals]") {
  const auto s = StepSeries::finite("s", {0, kHourUs, 2 * kHourUs}, {10.0, 20.0, 5.0}, 3 * kHourUs);
  CHECK(s.value_at(0) == 10.0);
  CHECK(s.value_at(kHourUs - 1) == 10.0);
  CHECK(s.value_at(kHourUs) == 20.0);
  CHECK(s.integral(kHourUs / 2, 2 * kHourUs + kHourUs / 4) == 10.0 * 1800 + 20.0 * 3600 + 5.0 * 900);
  CHECK(s.integral(0, 3 * kHourUs) == 35.0 * 3600);
  CHECK_THROWS_WITH(s.value_at(3 * kHourUs), Catch::Contains("s: no value at 1970-01-01T03:00:00Z"));
  CHECK_THROWS_AS(s.integral(0, 3 * kHourUs + 1), InputError);
  CHECK(s.next_change_us(10) == kHourUs);
  // Periodic (a diurnal curve): 24 steps repeating every day.
  std::vector<double> day(24);
  for (int h = 0; h < 24; ++h) day[static_cast<std::size_t>(h)] = h;
  const auto p = StepSeries::periodic("p", day, kHourUs, 0);
  CHECK(p.value_at(23 * kHourUs) == 23.0);
  CHECK(p.value_at(24 * kHourUs) == 0.0);
  CHECK(p.value_at(-kHourUs) == 23.0);
  CHECK(p.integral(0, 48 * kHourUs) == 2 * 276.0 * 3600);  // 0 + 1 + ... + 23 = 276, twice
  CHECK(StepSeries::constant("c", 7.0).integral(-5'000'000, 5'000'000) == 70.0);
}

TEST_CASE("forecasts are exact without noise and deterministic with it", "[signals]") {
  const auto carbon = StepSeries::finite("c", {0, kHourUs, 2 * kHourUs}, {300.0, 100.0, 200.0}, 3 * kHourUs);
  std::vector<std::pair<Tick, double>> f, g;
  GridSignals exact(0, std::nullopt, carbon);
  exact.forecast(SignalKind::kCarbon, Tick::from_seconds(600), Tick::from_seconds(9000), f);  // to 02:40
  REQUIRE(f.size() == 3);
  CHECK(f[0] == std::make_pair(Tick::from_seconds(600), 300.0));
  CHECK(f[1] == std::make_pair(Tick::from_seconds(3600), 100.0));
  CHECK(f[2] == std::make_pair(Tick::from_seconds(7200), 200.0));
  GridSignals noisy(0, std::nullopt, carbon, ForecastConfig{0.2, 5});
  noisy.forecast(SignalKind::kCarbon, Tick::from_seconds(600), Tick::from_seconds(3 * 3600), f);
  noisy.forecast(SignalKind::kCarbon, Tick::from_seconds(0), Tick::from_seconds(3 * 3600), g);
  CHECK(f[0].second == 300.0);  // the current value is observed, not forecast
  CHECK(f[1].second != 100.0);
  CHECK(f[1] == g[1]);  // the same target step gets the same error whenever it is asked
  CHECK_THROWS_WITH(exact.now(SignalKind::kPrice, Tick()), Catch::Contains("no price signal configured"));
}

TEST_CASE("signal files load in both real layouts and reject gaps and unsorted rows naming the line", "[signals][traces]") {
  TempDir dir;
  const std::string carbon = dir.write("c.csv",
                                       "Datetime (UTC),Country,Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct),Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (LCA)\n"
                                       "2023-01-01 00:00:00,X,140.5,185.8\n2023-01-01 01:00:00,X,150.0,190.0\n");
  const auto c = load_signal_csv(carbon, SignalKind::kCarbon, {}, "c");
  CHECK(c.value_at(utc_us("2023-01-01 00:59:59")) == 140.5);
  CHECK(c.value_at(utc_us("2023-01-01 01:00:00")) == 150.0);
  CHECK(c.end_us() == utc_us("2023-01-01 02:00:00"));
  CHECK(load_signal_csv(carbon, SignalKind::kCarbon, {"", "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (LCA)"}, "c").value_at(utc_us("2023-01-01 00:00:00")) == 185.8);
  const std::string price = dir.write("p.csv",
                                      "Datetime (UTC),Datetime (Local),Price (USD/MWh)\n"
                                      "2023-01-01 00:00:00+00:00,2022-12-31 16:00:00-08:00,-3.5\n"
                                      "2023-01-01 01:00:00+00:00,2022-12-31 17:00:00-08:00,20\n");
  CHECK(load_signal_csv(price, SignalKind::kPrice, {}, "p").value_at(utc_us("2023-01-01 00:30:00")) == -3.5);
  // The local column with its offset names the same instants.
  CHECK(load_signal_csv(price, SignalKind::kPrice, {"Datetime (Local)", ""}, "p").value_at(utc_us("2023-01-01 01:00:00")) == 20.0);

  const std::string gap = dir.write("gap.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\n2023-01-01 01:00:00,2\n2023-01-01 03:00:00,3\n");
  CHECK_THROWS_WITH(load_signal_csv(gap, SignalKind::kPrice, {}, "gap"), Catch::Contains("gap.csv:4") && Catch::Contains("gap in the series"));
  const std::string unsorted = dir.write("u.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 01:00:00,1\n2023-01-01 00:00:00,2\n");
  CHECK_THROWS_WITH(load_signal_csv(unsorted, SignalKind::kPrice, {}, "u"), Catch::Contains("u.csv:3") && Catch::Contains("sorted"));
  const std::string dup = dir.write("d.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 01:00:00,1\n2023-01-01 01:00:00,2\n");
  CHECK_THROWS_WITH(load_signal_csv(dup, SignalKind::kPrice, {}, "d"), Catch::Contains("d.csv:3") && Catch::Contains("repeats"));
  const std::string bad = dir.write("b.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\nyesterday,2\n");
  CHECK_THROWS_WITH(load_signal_csv(bad, SignalKind::kPrice, {}, "b"), Catch::Contains("b.csv:3") && Catch::Contains("date-time"));
  CHECK_THROWS_WITH(load_signal_csv(price, SignalKind::kCarbon, {}, "p"), Catch::Contains("missing column 'Carbon Intensity"));
}

TEST_CASE("real 2023 files: hourly UTC steps, time origin and time-zone alignment", "[signals][traces][real-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const auto de = load_signal_csv(data + "/carbon/DE-LU_2023_hourly.csv", SignalKind::kCarbon, {}, "DE-LU carbon");
  CHECK(de.begin_us() == utc_us("2023-01-01 00:00:00"));
  CHECK(de.end_us() == utc_us("2024-01-01 00:00:00"));  // 8760 hourly rows, no gap
  CHECK(de.value_at(utc_us("2023-01-01 00:00:00")) == 140.51);
  CHECK(de.value_at(utc_us("2023-12-31 23:59:59")) == 133.89);
  // Simulated time zero at 2023-07-01 12:00 UTC reads the row of that hour.
  GridSignals g(utc_us("2023-07-01 12:00:00"), std::nullopt, de);
  CHECK(g.now(SignalKind::kCarbon, Tick()) == 86.33);
  // US-CAL-CISO prices: the UTC column and the local column (UTC-8 in winter, UTC-7 in
  // summer) give the same series; 12:00 UTC on 2023-07-01 is 05:00 local.
  const std::string us = data + "/prices/US-CAL-CISO_electricity_prices_2023.csv";
  const auto by_utc = load_signal_csv(us, SignalKind::kPrice, {}, "us");
  const auto by_local = load_signal_csv(us, SignalKind::kPrice, {"Datetime (Local)", ""}, "us local");
  CHECK(by_utc.value_at(utc_us("2023-07-01 12:00:00")) == 62.20355999999997);
  CHECK(by_utc.value_at(utc_us("2023-01-01 00:00:00")) == 114.9452);  // 2022-12-31 16:00 local
  for (const char* t : {"2023-01-01 00:00:00", "2023-03-12 10:00:00", "2023-07-01 12:00:00", "2023-11-05 09:00:00", "2023-12-31 23:00:00"}) {
    CHECK(by_local.value_at(utc_us(t)) == by_utc.value_at(utc_us(t)));
  }
  for (const char* f : {"DE-LU", "JP-TK", "SG", "US-CAL-CISO"}) {
    const auto p = load_signal_csv(data + "/prices/" + f + "_electricity_prices_2023.csv", SignalKind::kPrice, {}, f);
    const auto c = load_signal_csv(data + "/carbon/" + f + "_2023_hourly.csv", SignalKind::kCarbon, {}, f);
    CHECK(p.begin_us() == c.begin_us());
    CHECK(p.end_us() == c.end_us());
  }
}

TEST_CASE("signal files are called series in messages, not traces", "[signals][traces]") {
  TempDir dir;
  CHECK_THROWS_WITH(load_signal_csv(dir.path("none.csv"), SignalKind::kPrice, {}, "p"), dir.path("none.csv") + ": cannot open the price series (does it exist?)");
  CHECK_THROWS_WITH(load_signal_csv(dir.path(""), SignalKind::kCarbon, {}, "c"), dir.path("") + ": is a folder, not a carbon series");
  CHECK_THROWS_WITH(load_signal_csv(dir.write("e.csv", ""), SignalKind::kPrice, {}, "p"), dir.path("e.csv") + ": the price series is empty (no header line)");
  CHECK_THROWS_WITH(load_signal_csv(dir.write("one.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\n"), SignalKind::kPrice, {}, "p"),
                    dir.path("one.csv") + ": a price series needs at least two rows (the step length comes from them)");
  CHECK_THROWS_WITH(load_signal_csv(dir.write("p.csv", "Datetime (UTC),x\n"), SignalKind::kCarbon, {}, "c"),
                    dir.path("p.csv") + ":1: missing column 'Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct)' in the carbon series (header has: Datetime (UTC), x)");
}
