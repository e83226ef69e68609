#!/usr/bin/env python3
"""Compares a simulated run with a measured one, per policy: makespan error, per-job JCT error
(median, p95, max), completion-order agreement (Kendall's tau over jobs done in both).

    fidelity.py SIM_DIR REAL_DIR [--json OUT]

SIM_DIR and REAL_DIR are the --out folders of salus-sim and salus-run on the same trace and
catalog (each holds <policy>_jobs.csv). Errors are relative to the measured value. Standard
library only."""
import csv
import json
import math
import os
import sys


def read_jobs(path):
    with open(path, newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    k = max(0, math.ceil(q * len(v)) - 1)  # nearest rank
    return v[k]


def kendall_tau(xs, ys):
    n = len(xs)
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            a = (xs[i] > xs[j]) - (xs[i] < xs[j])
            b = (ys[i] > ys[j]) - (ys[i] < ys[j])
            if a * b > 0:
                concordant += 1
            elif a * b < 0:
                discordant += 1
    pairs = n * (n - 1) / 2
    return (concordant - discordant) / pairs if pairs else float("nan")


def compare(sim, real):
    done = [i for i in real if real[i]["status"] == "done" and sim.get(i, {}).get("status") == "done"]
    errs = []
    for i in done:
        r, s = float(real[i]["jct_s"]), float(sim[i]["jct_s"])
        errs.append(abs(s - r) / r if r > 0 else 0.0)

    def makespan(jobs):
        fin = [float(j["finish_s"]) for j in jobs.values() if j["status"] == "done"]
        return max(fin) if fin else float("nan")

    ms_r, ms_s = makespan(real), makespan(sim)
    return {
        "jobs": len(real),
        "done_both": len(done),
        "done_real": sum(1 for j in real.values() if j["status"] == "done"),
        "done_sim": sum(1 for j in sim.values() if j["status"] == "done"),
        "makespan_real_s": ms_r,
        "makespan_sim_s": ms_s,
        "makespan_error": abs(ms_s - ms_r) / ms_r if ms_r > 0 else float("nan"),
        "jct_error_median": pct(errs, 0.5),
        "jct_error_p95": pct(errs, 0.95),
        "jct_error_max": max(errs) if errs else float("nan"),
        "kendall_tau_finish": kendall_tau([float(real[i]["finish_s"]) for i in done],
                                          [float(sim[i]["finish_s"]) for i in done]),
        "per_job": [{"id": i, "jct_real_s": float(real[i]["jct_s"]), "jct_sim_s": float(sim[i]["jct_s"])}
                    for i in done],
    }


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--json"):
        print(__doc__, file=sys.stderr)
        return 2
    sim_dir, real_dir = argv[1], argv[2]
    out = {}
    for name in sorted(os.listdir(real_dir)):
        if not name.endswith("_jobs.csv"):
            continue
        policy = name[: -len("_jobs.csv")]
        sim_path = os.path.join(sim_dir, name)
        if not os.path.exists(sim_path):
            print(f"fidelity: {sim_path}: missing, policy {policy} not compared", file=sys.stderr)
            continue
        out[policy] = compare(read_jobs(sim_path), read_jobs(os.path.join(real_dir, name)))
    if not out:
        print(f"fidelity: no policy run on both sides ({sim_dir}, {real_dir})", file=sys.stderr)
        return 2
    print(f"{'policy':8} {'jobs':>5} {'done r/s':>9} {'makespan r/s (s)':>18} {'ms err':>7} "
          f"{'JCT err p50':>11} {'p95':>7} {'max':>7} {'tau':>6}")
    for p, r in out.items():
        print(f"{p:8} {r['jobs']:5d} {r['done_real']:4d}/{r['done_sim']:<4d} "
              f"{r['makespan_real_s']:8.2f}/{r['makespan_sim_s']:<8.2f} {100 * r['makespan_error']:6.2f}% "
              f"{100 * r['jct_error_median']:10.2f}% {100 * r['jct_error_p95']:6.2f}% "
              f"{100 * r['jct_error_max']:6.2f}% {r['kendall_tau_finish']:6.3f}")
    if len(argv) == 5:
        with open(argv[4], "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
