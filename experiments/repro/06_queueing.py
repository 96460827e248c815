#!/usr/bin/env python3
"""Queueing validation: schedsim's mean JCT against closed forms (M/M/1, M/M/c, M/G/1).

    python3 experiments/repro/06_queueing.py [--quick] [--cli build/schedsim] [--out DIR] [--figures DIR]

With 1-GPU jobs, Poisson arrivals and no physics, the kernel is exactly an M/G/c queue, so
its long-run means must match queueing theory:
  - M/M/1 FIFO, lambda 0.8, mu 1: E[T] = 1 / (mu - lambda) = 5 s;
  - M/M/8 FIFO at utilization 0.85: E[T] = Erlang C / (c mu - lambda) + 1 / mu;
  - M/G/1 with hyperexponential service (90% mean 0.5 s, 10% mean 5.5 s; E[S] = 1 s,
    E[S^2] = 6.5 s^2) at lambda 0.7: FIFO (Pollaczek-Khinchine), non-preemptive SJF
    (Kleinrock) and SRTF (SRPT, Schrage and Miller 1966).
Each case is one `schedsim sweep` over seeds (full: 5 seeds x 200,000 jobs; --quick: 3
seeds x 50,000 jobs). The check: every measured mean within a tolerance of theory (full:
3% for M/M/1, 5% otherwise, as tests/sim/test_queueing.cpp; quick: 10%, about three
standard errors of the smaller runs), and SRTF < SJF < FIFO as theory ranks them.
The same formulas are asserted in C++ by tests/sim/test_queueing.cpp and
tests/policies/test_policy_theory.cpp; this script shows them as a table and a figure.
"""
import math
import os
import sys

import numpy as np

import common
from common import plt

NAME = "06_queueing"
H2_WEIGHTS, H2_MEANS = [0.9, 0.1], [0.5, 5.5]
H2 = {"dist": "hyperexponential", "weights": H2_WEIGHTS, "means": H2_MEANS}
LAMBDA_MG1 = 0.7


def erlang_c(c, a):
    """Probability that an arrival waits in M/M/c with offered load a = lambda / mu."""
    term, total = 1.0, 1.0
    for k in range(1, c):
        term *= a / k
        total += term
    top = term * a / c * (c / (c - a))
    return top / (total + top)


def h2_pieces(x):
    """pdf, survival, int_0^x t f(t) dt and int_0^x t^2 f(t) dt of the hyperexponential."""
    pdf = sum(w / m * np.exp(-x / m) for w, m in zip(H2_WEIGHTS, H2_MEANS))
    surv = sum(w * np.exp(-x / m) for w, m in zip(H2_WEIGHTS, H2_MEANS))
    m1 = sum(w * (m - (m + x) * np.exp(-x / m)) for w, m in zip(H2_WEIGHTS, H2_MEANS))
    m2 = sum(w * (2 * m * m - np.exp(-x / m) * (x * x + 2 * m * x + 2 * m * m)) for w, m in zip(H2_WEIGHTS, H2_MEANS))
    return pdf, surv, m1, m2


def trapezoid(y, x):
    """The trapezoid rule (numpy renamed np.trapz to np.trapezoid in 2.0)."""
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)))


def mg1_theory(lam):
    """Mean response times (s) of FIFO, non-preemptive SJF and SRPT for H2 service."""
    second = sum(w * 2 * m * m for w, m in zip(H2_WEIGHTS, H2_MEANS))
    mean_s = sum(w * m for w, m in zip(H2_WEIGHTS, H2_MEANS))
    rho = lam * mean_s
    fifo = mean_s + lam * second / (2 * (1 - rho))  # Pollaczek-Khinchine
    x = np.linspace(0.0, 200.0, 400001)  # the tail beyond 200 s weighs < 1e-15
    pdf, surv, m1, m2 = h2_pieces(x)
    rho_x = lam * m1
    # Kleinrock: a job of size x waits W0 / (1 - rho(x))^2, W0 = lambda E[S^2] / 2.
    sjf = mean_s + lam * second / 2 * trapezoid(pdf / (1 - rho_x) ** 2, x)
    # Schrage-Miller: waiting W(x) = lambda m2(x) / (2 (1 - rho(x))^2) with
    # m2(x) = int_0^x t^2 dF + x^2 (1 - F(x)), residence R(x) = int_0^x dt / (1 - rho(t)).
    waiting = lam * (m2 + x * x * surv) / (2 * (1 - rho_x) ** 2)
    inv = 1 / (1 - rho_x)
    residence = np.concatenate([[0.0], np.cumsum((inv[1:] + inv[:-1]) / 2 * np.diff(x))])
    srpt = trapezoid((waiting + residence) * pdf, x)
    return fifo, sjf, srpt


def main():
    args = common.parse_args(__doc__, NAME)
    jobs, seeds = (50_000, 3) if args.quick else (200_000, 5)
    c, util = 8, 0.85
    mmc_wait = erlang_c(c, util * c) / (c - util * c)
    fifo_t, sjf_t, srpt_t = mg1_theory(LAMBDA_MG1)
    # (case, devices, mean inter-arrival, service, [(policy label, policy, theory, full tolerance)])
    cases = [("M/M/1", 1, 1.25, {"dist": "exponential", "mean": 1.0}, [("FIFO", "fifo", 5.0, 0.03)]),
             ("M/M/8", c, 1 / (util * c), {"dist": "exponential", "mean": 1.0}, [("FIFO", "fifo", mmc_wait + 1.0, 0.05)]),
             ("M/G/1 (H2 service)", 1, 1 / LAMBDA_MG1, H2,
              [("FIFO", "fifo", fifo_t, 0.05), ("SJF", "sjf", sjf_t, 0.05), ("SRTF", "srtf", srpt_t, 0.05)])]
    checks = common.Checks()
    rows, claims = [], []
    for case, devices, interarrival, service, policies in cases:
        scenario = {"name": case, "seed": 1,
                    "cluster": {"nodes": [{"count": 1, "type": "test", "devices_per_node": devices}]},
                    "workload": {"synthetic": {"num_jobs": jobs, "arrival": {"process": "poisson", "mean_interarrival_s": interarrival},
                                               "duration_s": service, "gpus": 1}},
                    # The M/G/1 formulas for SJF and SRPT assume known service times.
                    "information": "oracle",
                    "policy": "fifo"}
        out = os.path.join(args.out, case.split()[0].replace("/", ""))
        runs, summary = common.sweep(args, {"scenario": scenario, "policies": [p for _, p, _, _ in policies],
                                          "labels": [l for l, _, _, _ in policies], "seeds": seeds}, out)
        checks.expect(all(r["jobs_completed"] == jobs for r in runs), f"{case}: every job must complete")
        for (label, _, theory, tol), s in zip(policies, summary):
            measured, ci = s["mean_jct_s_mean"], s["mean_jct_s_ci95"]
            tol = 0.10 if args.quick else tol
            ok = checks.within(measured, theory, tol, f"{case} {label} mean JCT")
            rows.append(dict(case=case, policy=label, theory=theory, measured=measured, ci=ci, tol=tol, ok=ok))
            # Rule: measured / closed form in [1 - tolerance, 1 + tolerance], per seed.
            per_seed = [r["mean_jct_s"] / theory for r in runs if r["label"] == label]
            claims.append(common.claim(f"{case} {label}: mean JCT / closed form ({theory:.4f} s)", "1", per_seed,
                                       f"seeds 1-{seeds} x {jobs:,} jobs; mean JCT {measured:.4f} s ± {ci:.4f}; error {100 * (measured / theory - 1):+.2f}%",
                                       low=1 - tol, high=1 + tol, unit=lambda v: f"{v:.4f}"))
    mg1 = {r["policy"]: r["measured"] for r in rows if r["case"].startswith("M/G/1")}
    checks.expect(mg1["SRTF"] < mg1["SJF"] < mg1["FIFO"], f"theory ranks SRTF < SJF < FIFO, measured {mg1}")

    header = ["case", "policy", "theory (s)", "measured mean JCT (s)", "95% CI half-width", "error", "within tolerance"]
    detail = [[r["case"], r["policy"], f"{r['theory']:.4f}", f"{r['measured']:.4f}", f"{r['ci']:.4f}",
               f"{100 * (r['measured'] / r['theory'] - 1):+.2f}%", "yes" if r["ok"] else "NO"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    xs = np.arange(len(rows))
    ax.bar(xs - 0.2, [r["theory"] for r in rows], 0.4, label="closed form", color="#999999")
    ax.bar(xs + 0.2, [r["measured"] for r in rows], 0.4, yerr=[r["ci"] for r in rows], capsize=3, label="schedsim (95% CI)", color="#1f77b4")
    ax.set_xticks(xs, [f"{r['case']}\n{r['policy']}" for r in rows], fontsize=8)
    ax.set(ylabel="mean JCT (s)", title=f"schedsim vs queueing theory ({seeds} seeds x {jobs:,} jobs)")
    ax.legend()
    common.save_figure(args, fig, "theory")
    notes = f"""
M/M/8 at utilization {util}: Erlang C = {erlang_c(c, util * c):.4f}, E[W] = {mmc_wait:.4f} s. M/G/1 at
lambda {LAMBDA_MG1}: Pollaczek-Khinchine {fifo_t:.4f} s, Kleinrock's non-preemptive SJF {sjf_t:.4f} s,
Schrage-Miller SRPT {srpt_t:.4f} s (numerical integration in this script). Successive waiting
times are strongly correlated at high load, so the standard error of a run's mean is far
above sigma / sqrt(n); the tolerances follow tests/sim/test_queueing.cpp.
"""
    common.write_tables(args, "Queueing validation: schedsim vs closed forms", claims, header, detail, notes)
    return checks.finish(args)


if __name__ == "__main__":
    sys.exit(main())
