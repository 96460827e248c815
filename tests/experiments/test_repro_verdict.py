"""The reproduction scripts' verdict rule (experiments/repro/common.py: verdict, mean_ci,
claim): given numbers give reproduced / partly / not reproduced. Runs under pytest or as
a script (ctest: experiments.repro_verdict)."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "repro"))
import common  # noqa: E402


def test_mean_and_ci_over_seeds():
    m, h = common.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    assert math.isclose(h, 4.303 * 1.0 / math.sqrt(3), rel_tol=1e-12)  # t(0.975, 2) x sd / sqrt(n)
    assert common.mean_ci([5.0]) == (5.0, None)  # one seed: no interval
    assert common.mean_ci([None, 4.0, None, 6.0])[0] == 5.0
    assert common.mean_ci([]) == (None, None)


def test_at_least_claims():
    # Script 01's case: "75% and more" against a generic 45%: 69% +- 3% misses the range and
    # its CI does not reach it, but the direction holds (clear of 45%): partly.
    assert common.verdict(0.69, 0.03, low=0.75, no_effect=0.45) == "partly"
    assert common.verdict(0.80, 0.03, low=0.75, no_effect=0.45) == "reproduced"
    assert common.verdict(0.73, 0.03, low=0.75, no_effect=0.45) == "partly"   # the CI reaches 75%
    assert common.verdict(0.46, 0.03, low=0.75, no_effect=0.45) == "not reproduced"  # CI covers no effect
    assert common.verdict(0.40, 0.03, low=0.75, no_effect=0.45) == "not reproduced"  # wrong direction


def test_range_claims_and_single_seeds():
    # "about 40-50%", no direction.
    assert common.verdict(0.457, 0.02, low=0.40, high=0.50) == "reproduced"
    assert common.verdict(0.52, 0.03, low=0.40, high=0.50) == "partly"
    assert common.verdict(0.60, 0.03, low=0.40, high=0.50) == "not reproduced"
    # "up to 3.5x better" (ratio > 1): 4.95x +- 0.2 exceeds the claim; the direction holds.
    assert common.verdict(4.95, 0.2, low=1.0, high=3.5, no_effect=1.0) == "partly"
    assert common.verdict(2.9, 0.4, low=1.0, high=3.5, no_effect=1.0) == "reproduced"
    assert common.verdict(1.1, 0.4, low=1.0, high=3.5, no_effect=1.0) == "not reproduced"  # in range, but the CI covers 1
    # One seed gives no CI: in the range without a direction is enough, with one it is not.
    assert common.verdict(0.45, None, low=0.40, high=0.50) == "reproduced"
    assert common.verdict(2.0, None, low=1.0, high=3.5, no_effect=1.0) == "partly"
    assert common.verdict(5.0, None, low=1.0, high=3.5, no_effect=1.0) == "not reproduced"
    assert common.verdict(None, None, low=1.0) == "not reproduced"
    # A claim below no effect ("lower JCT": a change <= 0).
    assert common.verdict(-0.3, 0.05, high=-0.2, no_effect=0.0) == "reproduced"
    assert common.verdict(-0.1, 0.05, high=-0.2, no_effect=0.0) == "partly"
    assert common.verdict(0.02, 0.05, high=-0.2, no_effect=0.0) == "not reproduced"


def test_claim_row_names_the_rule_and_the_seeds():
    row = common.claim("utilization", "75%+", [0.66, 0.72], "2 seeds", low=0.75, no_effect=0.45, unit=common.pct)
    assert row[0] == "utilization"
    assert row[2] == "69.0% ± 38.1% (n=2)"
    assert row[4] == ">= 75.0%; no effect = 45.0%"
    assert row[5] == "not reproduced"  # t(0.975, 1) = 12.7: two seeds give an interval that covers 45%
    assert common.claim("u", "75%+", [0.79, 0.81], "", low=0.75, no_effect=0.45)[5] == "reproduced"


if __name__ == "__main__":
    for name, f in list(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
            print(f"{name}: ok")
