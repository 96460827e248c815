// train.input_baseline: advantages against the other copies of the same workload at the
// same simulated time (rl/input_baseline.hpp), checked against hand-computed values.
#include <catch2/catch.hpp>

#include "rl/input_baseline.hpp"

namespace schedsim::rl {

TEST_CASE("input baseline: return-to-go minus the other copy's reward still to come at the same simulated time", "[rl][input-baseline]") {
  // Two copies of one workload. Copy 0 decides at 0, 10 and 30 s and ends at 40 s with
  // rewards -1, -4, -2; copy 1 decides at 0 and 20 s and ends at 30 s with -3, -5 (its
  // third step is past its episode).
  const std::vector<std::vector<float>> rewards = {{-1.0f, -3.0f}, {-4.0f, -5.0f}, {-2.0f, -9.0f}};
  const std::vector<std::vector<std::uint8_t>> valids = {{1, 1}, {1, 1}, {1, 0}};
  const std::vector<std::vector<double>> times_s = {{0.0, 0.0}, {10.0, 20.0}, {30.0, 77.0}};
  const std::vector<double> end_s = {40.0, 30.0};
  const auto adv = input_baseline_advantages(rewards, valids, times_s, end_s, 1.0, 2);
  // Copy 0 at 0 s: return -7; copy 1 still collects all of its -8 -> +1.
  CHECK(adv[0][0] == Approx(1.0));
  // At 10 s copy 1 has collected half of its first step's -3 (it covers 0..20 s): still
  // to come -6.5; copy 0's return-to-go -6 -> +0.5.
  CHECK(adv[1][0] == Approx(0.5));
  // At 30 s copy 1 has ended: nothing to come; copy 0's -2 is all its own.
  CHECK(adv[2][0] == Approx(-2.0));
  // Copy 1 at 0 s: -8 against copy 0's -7.
  CHECK(adv[0][1] == Approx(-1.0));
  // Copy 1 at 20 s: copy 0 collected -1 by 10 s and half of -4 (10..30 s) by 20 s, so -4
  // is still to come; copy 1's return-to-go is -5.
  CHECK(adv[1][1] == Approx(-1.0));
  CHECK(adv[2][1] == 0.0f);  // not a step of the episode
  // The reward scale multiplies every term.
  const auto half = input_baseline_advantages(rewards, valids, times_s, end_s, 0.5, 2);
  CHECK(half[1][0] == Approx(0.25));
}

TEST_CASE("input baseline: several steps at one instant, groups of three, and identical copies", "[rl][input-baseline]") {
  // Copy 0 takes two decisions at 0 s (the first starts a job, no time passes), copy 1 one.
  // Both then decide at 10 s and end at 20 s.
  const std::vector<std::vector<float>> rewards = {{-0.5f, -2.0f, -2.0f}, {-1.5f, -3.0f, -3.0f}, {-3.0f, 0.0f, 0.0f}};
  const std::vector<std::vector<std::uint8_t>> valids = {{1, 1, 1}, {1, 1, 1}, {1, 0, 0}};
  const std::vector<std::vector<double>> times_s = {{0.0, 0.0, 0.0}, {0.0, 10.0, 10.0}, {10.0, 0.0, 0.0}};
  const std::vector<double> end_s = {20.0, 20.0, 20.0};
  const auto adv = input_baseline_advantages(rewards, valids, times_s, end_s, 1.0, 3);
  // Copies 1 and 2 are identical: each is judged against the mean of the other two.
  // Copy 0's instant step at 0 s is collected by 0 s, so at copy 1's 10 s decision copy 0
  // has collected -0.5 - 1.5 = -2 and has -3 to come.
  CHECK(adv[1][1] == Approx(-3.0 - (-3.0 + -3.0) / 2));
  // Copy 0's second step at 0 s: return-to-go -4.5; copies 1 and 2 have all -5 to come.
  CHECK(adv[1][0] == Approx(-4.5 + 5.0));
  CHECK(adv[0][0] == Approx(-5.0 + 5.0));
  // Copy 1 at 0 s: copy 0 has collected its instant -0.5 by then (-4.5 to come), copy 2
  // nothing (-5 to come).
  CHECK(adv[0][1] == Approx(-5.0 - (-4.5 + -5.0) / 2));
}

}  // namespace schedsim::rl
