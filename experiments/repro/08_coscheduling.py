#!/usr/bin/env python3
"""Co-scheduling training and serving on one cluster: static partitioning vs autoscaling.

    python3 experiments/repro/08_coscheduling.py [--quick | --full] [--cli build/schedsim] [--out DIR] [--figures DIR]

Claim in the field (issue 26, the seed): inference traffic "drops from peak to trough" over
a day, so a cluster that gives the service's idle replicas to training (autoscaling)
finishes training sooner than one that partitions devices statically at the service's
peak, without losing the service's latency SLO; forecasting the load (predictive
autoscaling) avoids the SLO misses of reacting after the ramp.

schedsim runs experiments/configs/coscheduling.yaml: H100 nodes of 8 shared by LLM training
jobs (LLaMA-2-70B / LLaMA-3-70B, some LLaMA-2-7B/13B, each under the planner's fastest
parallelism plan for its devices, `plan: auto`; elastic half of them) and a LLaMA-2-70B
(TP 8) chat service replaying the Azure LLM
inference trace 2023 (conversation) time-scaled to a day with a diurnal shape (the trace
replayed `request_copies` / 2 times a day; two such days: the full size's training outlasts
them, and the service then has no requests), served request by request by the serving
engine (TTFT <= 2.5 s, TPOT <= 0.15 s). Variants: static partitioning (max_replicas replicas
all day, nothing lent), reactive and predictive autoscaling (1..max_replicas replicas,
idle ones lent to elastic training, taken back with a checkpoint save and restore), and an
RL policy when schedsim has LibTorch (skipped, with the reason, otherwise).

Sizes: the default is a reduced world (128 GPUs, jobs of 16-64 GPUs since no 70B plan fits
fewer than 16 H100, half the full stream, 3 seeds) that runs in about two minutes on 2
cores; --full is the 512-GPU cluster of issue 26 (64 nodes, jobs of 64-256 GPUs); --quick
is the ctest test (96 GPUs, an eighth of the stream, 1 seed). Skipped (exit 77) when
../shared/data/azure_llm is absent. Verdicts by common.VERDICT_RULE from the mean and 95%
CI over seeds.
"""
import os
import sys

import common
from common import plt

NAME = "08_coscheduling"
CONFIG = os.path.join(common.CONFIGS, "coscheduling.yaml")
TRACE = os.path.join(common.DATA, "azure_llm", "AzureLLMInferenceTrace_conv.csv")
GPUS_PER_REPLICA = 8  # deployment.tensor_parallel in the config
H100_IDLE_W = 70.0    # world/physics/data/accelerators.yaml, H100-SXM idle_w

# (nodes of 8 H100, training jobs, their GPU counts, request_copies, max_replicas, seeds)
SIZES = {
    "full": dict(nodes=64, jobs=48, gpus="{64: 0.5, 128: 0.35, 256: 0.15}", copies=480, max_replicas=9, seeds=[1, 2, 3]),
    # 70B plans need >= 16 H100: the reduced sizes' smallest jobs have 16 GPUs.
    "reduced": dict(nodes=16, jobs=16, gpus="{16: 0.5, 32: 0.35, 64: 0.15}", copies=240, max_replicas=5, seeds=[1, 2, 3]),
    "quick": dict(nodes=12, jobs=8, gpus="{16: 0.5, 32: 0.35, 64: 0.15}", copies=60, max_replicas=2, seeds=[1]),
}
STATIC, REACTIVE, PREDICTIVE, RL = "static partitioning (peak replicas all day)", "reactive autoscaling", "predictive autoscaling", "rl policy"


def variants(size):
    """(label, --set assignments): the service's replica range and the autoscaler."""
    m = size["max_replicas"]
    svc = "inference.services.0."
    return [
        (STATIC, [f"{svc}min_replicas={m}", f"{svc}max_replicas={m}", "inference.autoscaler={name: reactive, lend: false}"]),
        (REACTIVE, [f"{svc}min_replicas=1", f"{svc}max_replicas={m}", "inference.autoscaler={name: reactive, target_utilization: 0.6, lend: true}"]),
        (PREDICTIVE, [f"{svc}min_replicas=1", f"{svc}max_replicas={m}", "inference.autoscaler={name: predictive, target_utilization: 0.6, lend: true}"]),
    ]


def run_one(args, label, sets, seed):
    out = os.path.join(args.out, "runs", f"{label.split()[0]}_seed{seed}")
    argv = ["run", CONFIG, "--quiet", "--out", out, "--set", f"seed={seed}"]
    for s in sets:
        argv += ["--set", s]
    common.run_cli(args.cli, *argv)
    r = common.read_json(os.path.join(out, "results.json"))
    s, svc = r["summary"], r["inference"][0]
    req = svc["requests"]
    devices = args.nodes * 8
    span_h = s["makespan_s"] / 3600
    # Device-time of training jobs plus the service's replicas in batch iterations (busy), or
    # in service (held: busy or idle), over devices x makespan.
    busy = req["busy_replica_hours"] * GPUS_PER_REPLICA / (devices * span_h) if span_h > 0 else None
    held = svc["replica_hours"] * GPUS_PER_REPLICA / (devices * span_h) if span_h > 0 else None
    energy = r.get("energy") or {}
    return {"jct_s": s["mean_jct_s"], "train_util": s["gpu_utilization"],
            "util": None if busy is None else s["gpu_utilization"] + busy, "held": None if held is None else s["gpu_utilization"] + held,
            "attainment": req["slo_attainment"], "ttft_p99_s": req["ttft"]["p99_s"], "tpot_p99_s": req["tpot"]["p99_s"],
            "arrived": req["arrived"], "finished": req["finished"], "peak_replicas": svc["peak_replicas"],
            "replica_hours": svc["replica_hours"], "active_replica_hours": req["active_replica_hours"], "span_h": span_h,
            "borrowed_gpu_hours": svc["borrowed_gpu_hours"], "reclaims": svc["reclaims"], "preemptions": req["preemptions"],
            "cluster_kwh": energy.get("it_energy_kwh", energy.get("energy_kwh")), "serving_kwh": req["energy_kwh"],
            # The cluster's meter counts replica devices at idle power; the engine meters them busy or idle.
            "total_kwh": None if not energy else energy["it_energy_kwh"] + req["energy_kwh"] - svc["replica_hours"] * GPUS_PER_REPLICA * H100_IDLE_W / 1000,
            "misses_pct": 100 * (1 - req["slo_attainment"]),
            "completed": s["jobs_completed"], "jobs": s["jobs_arrived"]}


def main():
    args = common.parse_args(__doc__, NAME, lambda ap: ap.add_argument("--full", action="store_true", help="the 512-GPU cluster of issue 26 (slower)"))
    if args.full and args.quick:
        sys.exit(f"{NAME}: --full and --quick are two sizes; give one")
    if not os.path.exists(TRACE):
        common.skip(f"the Azure LLM inference trace is absent ({TRACE}); put ../shared/data beside the clone or set SCHEDSIM_DATA")
    mode = "full" if args.full else "quick" if args.quick else "reduced"
    size = SIZES[mode]
    args.nodes = size["nodes"]
    world = [f"cluster.nodes.0.count={size['nodes']}", f"workload.synthetic.num_jobs={size['jobs']}", f"workload.synthetic.gpus={size['gpus']}",
             f"inference.services.0.request_copies={size['copies']}"]
    runs = [(label, sets) for label, sets in variants(size)]
    if common.has_torch(args.cli, CONFIG, args.out):
        # The shipped agent (experiments/agents/default.pt), behind the reactive autoscaler.
        agent = os.path.join(common.ROOT, "experiments", "agents", "default.pt")
        runs.append((RL, variants(size)[1][1] + [f"policy=rl:{agent}"]))
    else:
        print(f"{NAME}: the RL row is skipped: this schedsim has no LibTorch (built with SCHEDSIM_WITH_TORCH=OFF)")
    seeds = size["seeds"]
    metrics = {}
    for label, sets in runs:
        for seed in seeds:
            metrics[(label, seed)] = run_one(args, label, world + sets, seed)
            m = metrics[(label, seed)]
            print(f"{label}, seed {seed}: mean JCT {m['jct_s'] / 3600:.2f} h, SLO attainment {m['attainment']:.4f}, peak replicas {m['peak_replicas']}")

    def values(label, key):
        return [metrics[(label, s)][key] for s in seeds if (label, s) in metrics and metrics[(label, s)][key] is not None]

    def paired(a, b, key):
        return [metrics[(a, s)][key] - metrics[(b, s)][key] for s in seeds if (a, s) in metrics and (b, s) in metrics]

    how = f"{mode} size: {size['nodes'] * 8} H100, {size['jobs']} training jobs, the trace x{size['copies'] // 2} a day, seeds {', '.join(map(str, seeds))}"
    claims = [
        common.claim("training mean JCT, static minus reactive (h)", "> 0 (autoscaling gives training the trough)", [d / 3600 for d in paired(STATIC, REACTIVE, "jct_s")],
                     how + "; paired by seed", no_effect=0.0, low=0.0),
        common.claim("TTFT/TPOT SLO attainment, static partitioning", ">= 0.99 (provisioned for the peak)", values(STATIC, "attainment"), how, low=0.99, high=1.0),
        common.claim("SLO attainment, predictive minus reactive", ">= 0 (forecasting avoids the ramp's misses)", paired(PREDICTIVE, REACTIVE, "attainment"),
                     how + "; paired by seed", low=0.0),
    ]
    header = ["variant", "mean JCT (h)", "± 95% CI", "SLO attainment", "± 95% CI", "p99 TTFT (s)", "p99 TPOT (s)", "utilisation (training + serving)",
              "held (training + replicas in service)", "training utilisation", "peak replicas", "replica-hours / span-hours", "borrowed GPU-hours", "reclaims", "KV preemptions",
              "cluster energy (MWh, replica devices at idle)", "serving energy (MWh, engine)", "total energy (MWh)", "± 95% CI",
              "requests finished / arrived", "jobs completed / arrived"]
    detail = []
    labels = [l for l, _ in runs]
    for label in labels:
        j, jh = common.mean_ci(values(label, "jct_s"))
        a, ah = common.mean_ci(values(label, "attainment"))
        ce, se = common.mean(values(label, "cluster_kwh")), common.mean(values(label, "serving_kwh"))
        te, teh = common.mean_ci(values(label, "total_kwh"))
        detail.append([label, common.fmt(j / 3600, 3), common.fmt((jh or 0) / 3600, 2), common.fmt(a, 4), common.fmt(ah, 3),
                       common.fmt(common.mean(values(label, "ttft_p99_s")), 3), common.fmt(common.mean(values(label, "tpot_p99_s")), 3),
                       common.fmt(common.mean(values(label, "util")), 3), common.fmt(common.mean(values(label, "held")), 3),
                       common.fmt(common.mean(values(label, "train_util")), 3),
                       f"{max(values(label, 'peak_replicas')):.0f}",
                       common.fmt(common.mean([m / h for m, h in zip(values(label, "replica_hours"), values(label, "span_h"))]), 3),
                       common.fmt(common.mean(values(label, "borrowed_gpu_hours")), 4), common.fmt(common.mean(values(label, "reclaims")), 3),
                       common.fmt(common.mean(values(label, "preemptions")), 3),
                       common.fmt(None if ce is None else ce / 1000, 3), common.fmt(None if se is None else se / 1000, 3),
                       common.fmt(None if te is None else te / 1000, 4), common.fmt(None if teh is None else teh / 1000, 2),
                       f"{sum(values(label, 'finished')):.0f} / {sum(values(label, 'arrived')):.0f}",
                       f"{sum(values(label, 'completed')):.0f} / {sum(values(label, 'jobs')):.0f}"])

    # Four panels and a fifth axis for the legend, right of the data.
    fig, axes = plt.subplots(1, 5, figsize=(16, 4.2), gridspec_kw={"width_ratios": [3, 3, 3, 3, 2]})
    hatches = ["", "//", "\\\\", "xx"]
    panels = [("jct_s", 1 / 3600, "training", "mean JCT (h)"), ("misses_pct", 1.0, "chat service", "requests missing the TTFT/TPOT SLO (%)"),
              ("util", 100.0, "cluster", "utilisation, training + busy serving (%)"), ("total_kwh", 1 / 1000, "cluster", "IT energy over the run (MWh)")]
    for ax, (key, scale, title, ylabel) in zip(axes, panels):
        for i, label in enumerate(labels):
            m, h = common.mean_ci(values(label, key))
            ax.bar(i, (m or 0) * scale, yerr=(h or 0) * scale, capsize=4, hatch=hatches[i % 4], edgecolor="black", color=f"C{i}", label=label)
        ax.set(xticks=[], title=title, ylabel=ylabel)
    axes[2].set_ylim(0, 100)
    handles, names = axes[0].get_legend_handles_labels()
    axes[4].axis("off")
    axes[4].legend(handles, names, loc="center left", fontsize=9, frameon=False, title="mean ± 95% CI over seeds")
    common.save_figure(args, fig, "jct_slo_utilisation")

    notes = f"""
Scenario: `experiments/configs/coscheduling.yaml` at the {mode} size ({size['nodes'] * 8} H100 in nodes of 8,
{size['jobs']} training jobs of {size['gpus'].strip('{}').replace(': ', ' GPUs: ')} (share), LLaMA-2-70B and LLaMA-3-70B (0.35 each), LLaMA-2-13B and
LLaMA-2-7B (0.15 each), each under the planner's fastest plan for the devices it holds
(`plan: auto`), half of them elastic, physics on, checkpoints at 100 GB/s; the
chat service: LLaMA-2-70B at tensor parallel 8, the Azure conversation trace replayed
{size['copies'] // 2} times a day for two days with a diurnal amplitude of 0.6 peaking at 14:00, SLO TTFT
<= 2.5 s and TPOT <= 0.15 s, 1..{size['max_replicas']} replicas). Static partitioning keeps
{size['max_replicas']} replicas all day and lends nothing; the autoscalers tick every 300 s at a
target utilisation of 0.6 of the capacity the engine measured for one replica. The metered span is the training's
(first arrival to last job end); SLO attainment counts the requests that arrived in it
(unfinished ones as misses). Utilisation adds the service's busy replica-hours (in batch
iterations, the engine's `busy_replica_hours`) x 8 GPUs to the training's device-time; "held"
adds its replica-hours in service instead (idle replicas included). Total energy is the cluster meter's IT energy with the replica
devices' idle energy (replica-hours x 8 x 70 W) replaced by the serving engine's (busy at
TDP-based power, idle at idle power). Lending grows an elastic job only to a device count
that some plan of its model splits.
"""
    common.write_tables(args, "Co-scheduling training and serving", claims, header, detail, notes)

    checks = common.Checks()
    checks.expect(all(0.0 <= m["attainment"] <= 1.0 for m in metrics.values()), "SLO attainment must lie in [0, 1]")
    checks.expect(all(m["completed"] == m["jobs"] for m in metrics.values()), "every training job must complete")
    checks.expect(all(0 < m["util"] <= m["held"] <= 1.0 + 1e-9 for m in metrics.values()), "utilisation must lie in (0, held] and held in (0, 1]")
    for s in seeds:
        st = metrics[(STATIC, s)]
        checks.expect(st["peak_replicas"] == size["max_replicas"], f"static partitioning must run its {size['max_replicas']} replicas (seed {s})")
        checks.within(st["replica_hours"], size["max_replicas"] * st["span_h"], 1e-9, f"static partitioning's replica-hours = peak replicas x the whole span (seed {s})")
        checks.expect(st["borrowed_gpu_hours"] == 0 and st["reclaims"] == 0, f"static partitioning lends nothing (seed {s})")
        checks.expect(metrics[(REACTIVE, s)]["replica_hours"] <= st["replica_hours"] + 1e-9, f"reactive never holds more replica-hours than static (seed {s})")
    checks.expect(len(metrics) == len(runs) * len(seeds), f"{len(metrics)} runs for {len(runs)} variants x {len(seeds)} seeds")
    return checks.finish(args)


if __name__ == "__main__":
    sys.exit(main())
