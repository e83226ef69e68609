#!/usr/bin/env python3
"""Figures of a GPU validation run (scripts/gpu/validate.sh), from its raw results:

    /usr/bin/python3 plots/gpu_figures.py docs/results/h100 OUTDIR

RESULTS holds run folders (run1, run2, ...) as validate.sh wrote them. Draws, each as PNG and PDF:
- fidelity_<run>: simulated against measured JCT of every job, a panel per policy, the y = x
  line, from the run's fidelity_shares.json (else fidelity_pairs.json, fidelity_profiled.json);
- fig11_packing: makespan of the same jobs under FIFO and PACK on the GPU (packing_*.json);
- fig12_overhead: overhead of the service over a plain loop that waits only at the end
  (backend_bench's console output, bench.log of the latest run that has one);
- fig13_timeslice: average JCT of two alexnet_25 jobs in Salus lanes, as two processes sharing
  the GPU by time slicing, and of one alone (timeslice_*.json).
A figure whose inputs are missing is skipped with a line saying so. Deterministic output."""
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atomic_file import save_figure  # noqa: E402  (every file written is renamed into place)

plt.rcParams.update({"svg.hashsalt": "salus", "pdf.compression": 0, "font.size": 9})


def save(fig, out, name):
    for ext in ("png", "pdf"):
        path = os.path.join(out, f"{name}.{ext}")
        meta = {"CreationDate": None} if ext == "pdf" else {"Software": None}
        save_figure(fig, path, dpi=120, metadata=meta)
    plt.close(fig)
    print(f"wrote {os.path.join(out, name)}.{{png,pdf}}")


def fidelity(run_dir, out):
    for model in ("shares", "pairs", "profiled"):
        path = os.path.join(run_dir, f"fidelity_{model}.json")
        if os.path.exists(path):
            break
    else:
        return False
    with open(path) as f:
        data = json.load(f)
    policies = [p for p in ("fifo", "srtf", "pack", "fair") if p in data]
    fig, axes = plt.subplots(1, len(policies), figsize=(3.2 * len(policies), 3.2))
    for ax, p in zip(axes, policies):
        r = data[p]
        xs = [j["jct_real_s"] for j in r["per_job"]]
        ys = [j["jct_sim_s"] for j in r["per_job"]]
        hi = max(xs + ys) * 1.05
        ax.plot([0, hi], [0, hi], color="0.6", lw=1, label="y = x")
        ax.scatter(xs, ys, s=14)
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        ax.set_title(f"{p}: JCT err p50 {100 * r['jct_error_median']:.1f}%, makespan {100 * r['makespan_error']:.1f}%",
                     fontsize=8)
        ax.set_xlabel("measured JCT (s)")
    axes[0].set_ylabel(f"simulated JCT (s), interference {model}")
    fig.tight_layout()
    save(fig, out, f"fidelity_{os.path.basename(run_dir)}")
    return True


def packing(runs, out):
    rows = []
    for run in runs:
        for path in sorted(glob.glob(os.path.join(run, "packing_*.json"))):
            with open(path) as f:
                res = {r["policy"]: r["makespan_s"] for r in json.load(f)["results"]}
            rows.append((os.path.basename(path)[len("packing_"):-len(".json")], res.get("fifo"), res.get("pack")))
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(4.5, 3))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1] for r in rows], 0.4, label="FIFO")
    ax.bar([x + 0.2 for x in xs], [r[2] for r in rows], 0.4, label="PACK")
    for x, r in zip(xs, rows):
        ax.text(x + 0.2, r[2], f"{r[1] / r[2]:.2f}x", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"8 x {r[0]}" for r in rows])
    ax.set_ylabel("makespan (s)")
    ax.legend()
    fig.tight_layout()
    save(fig, out, "fig11_packing")
    return True


def overhead(runs, out):
    # The latest run with a benchmark log: runs measure different builds, so none are mixed.
    logs = [os.path.join(run, "bench.log") for run in runs if os.path.exists(os.path.join(run, "bench.log"))]
    if not logs:
        return False
    rates = {}
    pattern = re.compile(r"^(plain_loop|plain_loop_sync_at_end|service)/(\S+?)/real_time\s.*items_per_second=([0-9.]+)(k?)/s")
    for path in logs[-1:]:
        with open(path) as f:
            for line in f:
                m = pattern.match(line)
                if m:
                    rates.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3)) * (1000 if m.group(4) else 1)
    models = [m for m in sorted(rates) if "service" in rates[m] and "plain_loop_sync_at_end" in rates[m]]
    if not models:
        return False
    fig, ax = plt.subplots(figsize=(5, 3))
    over = [100 * (rates[m]["plain_loop_sync_at_end"] / rates[m]["service"] - 1) for m in models]
    ax.bar(range(len(models)), over)
    ax.axhline(3, color="0.5", ls="--", lw=1, label="target 3%")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=30, ha="right")
    ax.set_ylabel("service overhead over a plain loop (%)")
    ax.set_title(f"{os.path.basename(os.path.dirname(logs[-1]))}: one job alone, 50 iterations", fontsize=8)
    ax.legend()
    fig.tight_layout()
    save(fig, out, "fig12_overhead")
    return True


def timeslice(runs, out):
    for run in runs:
        paths = {k: os.path.join(run, f"timeslice_{k}.json") for k in ("salus", "proc1", "proc2", "alone")}
        if all(os.path.exists(p) for p in paths.values()):
            break
    else:
        return False

    def avg_jct(path):
        with open(path) as f:
            return json.load(f)["results"][0]["avg_jct_s"]

    values = [avg_jct(paths["salus"]), (avg_jct(paths["proc1"]) + avg_jct(paths["proc2"])) / 2, avg_jct(paths["alone"])]
    fig, ax = plt.subplots(figsize=(4.5, 3))
    ax.bar(range(3), values)
    ax.set_xticks(range(3))
    ax.set_xticklabels(["Salus lanes\n(one process)", "two processes\n(time slicing)", "one job alone"])
    ax.set_ylabel("average JCT (s)")
    fig.tight_layout()
    save(fig, out, "fig13_timeslice")
    return True


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    results, out = argv[1], argv[2]
    runs = sorted(d for d in glob.glob(os.path.join(results, "run*")) if os.path.isdir(d))
    if not runs:
        print(f"gpu_figures: {results}: no run folders", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for run in runs:
        if not fidelity(run, out):
            print(f"gpu_figures: {run}: no fidelity_*.json, no fidelity figure")
    for name, draw in (("fig11_packing", packing), ("fig12_overhead", overhead), ("fig13_timeslice", timeslice)):
        if not draw(runs, out):
            print(f"gpu_figures: no inputs for {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
