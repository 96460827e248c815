# %% [markdown]
# # Results in pandas: a notebook-style example
# Cells (`# %%`) run in Jupyter/VS Code as a notebook, or top to bottom as a script:
#     python python/examples/results_notebook.py [OUT_DIR]
# It compares built-in policies with a Python agent over seeds, loads the run folders
# (the same results.json / jobs.csv as `schedsim run`) into pandas and plots them.
# SCHEDSIM_EXAMPLE_QUICK=1 runs a 600-job workload on 2 seeds (what the tests do).

# %%
import json
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # files only; drop this line in a notebook
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import schedsim

quick = os.environ.get("SCHEDSIM_EXAMPLE_QUICK") == "1"
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "results/notebook")
overrides = ["workload.synthetic.num_jobs=600"] if quick else None
seeds = [1, 2] if quick else list(range(1, 9))


# %% An agent written in Python: start the candidate with the least estimated work (row feature 1), else wait.
LOG_EST_WORK = schedsim._schedsim.candidate_feature_names().index("log_est_work_h")


def least_work(obs, mask):
    legal = np.flatnonzero(mask[:-1])
    if len(legal) == 0:
        return len(mask) - 1
    return int(legal[np.argmin(obs["candidates"][legal, LOG_EST_WORK])])


# %% Run the comparison (writes out/seed_<N>/<policy>/results.json, jobs.csv)
c = schedsim.compare(None, ["fifo", "sjf", "las", least_work], seeds=seeds, out=out, overrides=overrides)
c.table

# %% Every run's summary, straight from the files
rows = []
for path in sorted(out.glob("seed_*/*/results.json")):
    r = json.loads(path.read_text())
    rows.append({"policy": path.parent.name, "seed": r["seed"], **{k: v for k, v in r["summary"].items() if not isinstance(v, dict)}})
runs = pd.DataFrame(rows)
print(runs.groupby("policy")[["mean_jct_s", "p95_jct_s", "gpu_utilization"]].mean().sort_values("mean_jct_s"))

# %% Per-job records: jobs.csv of every run
jobs = pd.concat(
    [pd.read_csv(p, dtype={"job_id": str}).assign(policy=p.parent.name, seed=int(p.parent.parent.name.split("_")[1]))
     for p in sorted(out.glob("seed_*/*/jobs.csv"))],
    ignore_index=True,
)
jobs["jct_h"] = jobs["jct_s"] / 3600

# %% Plots: mean JCT per policy with the seed-to-seed spread, and the JCT CDF
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
per = runs.assign(mean_jct_h=runs["mean_jct_s"] / 3600).groupby("policy")["mean_jct_h"]
order = per.mean().sort_values().index
ax1.bar(order, per.mean()[order], yerr=per.std()[order].fillna(0), capsize=3)
ax1.set_ylabel("mean JCT (h)")
ax1.set_title(f"{len(seeds)} seeds")
for policy, g in jobs.groupby("policy"):
    x = np.sort(g["jct_h"].to_numpy())
    ax2.plot(x, np.arange(1, len(x) + 1) / len(x), label=policy)
ax2.set_xscale("log")
ax2.set_xlabel("JCT (h)")
ax2.set_ylabel("fraction of jobs")
ax2.legend()
fig.tight_layout()
fig.savefig(out / "jct.png", dpi=100)
print(f"wrote {out / 'jct.png'}")
