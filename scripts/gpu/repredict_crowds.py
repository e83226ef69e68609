#!/usr/bin/env python3
"""Re-predicts the PACK runs of the committed H100 fidelity runs (docs/results/h100/run3,
run4) under the `shares` and `capacity` interference models, from what their data allows:

  shares      the catalog as measured (pairs, no crowds, no sweeps)
  capacity    the same catalog: no sweeps, so C = 1 and the model is `shares` (it prints a note)
  +run2       the catalog plus the only homogeneous crowds ever measured on the H100, run2's
              packing runs (8 x alexnet_25 at once: 34.62 ms an iteration against 5.93 ms alone,
              s(8) = 5.84; 5 x resnet50_25: 180.0 ms against 52.5 ms, s(5) = 3.43, approximate:
              the lanes' per-job means, whose last iterations overlapped the next jobs), as sweeps
              of those two workloads; every other workload has no sweep (C = 1)
  what-if     an assumption, not a measurement: every workload at those two C values (C(5) of
              resnet50_25, C(8) of alexnet_25, each from its own catalog's u)
  oracle      (with --oracle) NOT a prediction: weights and one C for 3 or more lanes fitted to the
              run's own PACK timeline (time-weighted least squares on log slowdowns of its rows),
              to see how far the law's form can describe the run at best
  cross       (with --oracle) the other run's oracle weights and C on this run's catalog: parameters
              from measured crowds of the same GPU and networks, but not from this trace

    repredict_crowds.py [--build DIR] [--oracle]

Needs salus-sim in DIR/experiments (default: build). Standard library only. Prints, per run and
variant, the makespan and PACK's makespan error, median and p95 per-job JCT error (fidelity.py).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(ROOT, "docs", "results", "h100")

# run2's packing runs (docs/results/h100/run2/packing_*.json): k copies at once, slowdown.
RUN2_POINTS = {"alexnet_25": (8, 34.62 / 5.927), "resnet50_25": (5, 180.0 / 52.5)}


def fidelity(sim_dir, real_dir):
    out = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), sim_dir, real_dir],
                         capture_output=True, text=True, check=True).stdout
    row = next(line.split() for line in out.splitlines() if line.startswith("pack"))
    return row[3], row[4], row[5], row[6]  # makespan real/sim, makespan error, median, p95


def simulate(build, catalog, trace, model, out):
    r = subprocess.run([os.path.join(build, "experiments", "salus-sim"), "--profiles", catalog, "--trace", trace,
                        "--policy", "pack", "--interference", model, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    return [line for line in r.stdout.splitlines() if line.startswith("note: capacity")]


def with_sweeps(cat, curve_for):
    """A copy of the catalog with a sweep per workload that curve_for(name, u) gives points for."""
    c = json.loads(json.dumps(cat))
    sweeps = []
    for w in c["workloads"]:
        points = curve_for(w["name"], w["gpu_util"])
        if points:
            ks = sorted(points)
            sweeps.append({"workload": w["name"], "lanes": ks, "slowdowns": [round(points[k], 4) for k in ks]})
    c["sweeps"] = sweeps
    return c


def with_weights(cat, weights, capacity):
    """A copy whose pair table the fitted weights reproduce exactly (s_ij = u_i + w_j / w_i u_j) and
    whose sweeps give every workload C = capacity from 3 lanes on."""
    c = json.loads(json.dumps(cat))
    u = {w["name"]: w["gpu_util"] for w in c["workloads"]}
    names = sorted(u)
    c["pairs"] = [{"a": a, "b": b, "slowdown_a": round(u[a] + weights[b] / weights[a] * u[b], 4),
                   "slowdown_b": round(u[b] + weights[a] / weights[b] * u[a], 4)}
                  for i, a in enumerate(names) for b in names[i + 1:]]
    c["sweeps"] = [{"workload": n, "lanes": [3], "slowdowns": [round(3 * u[n] / capacity, 4)]} for n in names]
    return c


def oracle_fit(cat, real_dir):
    """Weights and one C (3 or more lanes) fitted to the measured PACK timeline's rows."""
    u = {w["name"]: w["gpu_util"] for w in cat["workloads"]}
    solo = {w["name"]: w["iter_ms"] / 1e3 for w in cat["workloads"]}
    jobs = {r["id"]: r for r in csv.DictReader(open(os.path.join(real_dir, "pack_jobs.csv")))}
    segs = []
    for s in csv.DictReader(open(os.path.join(real_dir, "pack_timeline.csv"))):
        a, b, n = float(s["start_s"]), float(s["end_s"]), int(s["iterations"])
        if n > 0 and b > a:
            segs.append((a, b, n, jobs[s["job_id"]]["workload"]))
    pieces = []  # per row: (duration, the other rows' workloads) over the row's pieces
    for i, (a, b, n, w) in enumerate(segs):
        cuts = sorted({a, b} | {x for j, t in enumerate(segs) if j != i for x in t[:2] if a < x < b})
        ps = []
        for lo, hi in zip(cuts, cuts[1:]):
            mid = (lo + hi) / 2
            ps.append((hi - lo, [t[3] for j, t in enumerate(segs) if j != i and t[0] <= mid < t[1]]))
        pieces.append(ps)

    def loss(logw, logc):
        total = 0.0
        for (a, b, n, w), ps in zip(segs, pieces):
            inv = 0.0
            for dt, others in ps:
                lanes = others + [w]
                demand = sum(math.exp(logw[x]) * u[x] for x in lanes)
                c = 1.0 if len(lanes) <= 2 else math.exp(logc)
                inv += dt / max(1.0, demand / (math.exp(logw[w]) * c))
            predicted = (b - a) / inv
            measured = max(1.0, (b - a) / (n * solo[w]))
            total += (b - a) * (math.log(measured) - math.log(predicted)) ** 2
        return total

    logw = {n: 0.0 for n in sorted(u)}
    logc = 0.0
    best = loss(logw, logc)
    step = 0.5
    while step > 0.005:  # coordinate descent, deterministic
        improved = False
        for name in list(logw) + [None]:
            for d in (step, -step):
                if name is None:
                    v = loss(logw, logc + d)
                    if v < best:
                        best, logc, improved = v, logc + d, True
                else:
                    logw[name] += d
                    v = loss(logw, logc)
                    if v < best:
                        best, improved = v, True
                    else:
                        logw[name] -= d
        if not improved:
            step /= 2
    mean = sum(logw.values()) / len(logw)
    return {n: math.exp(v - mean) for n, v in logw.items()}, math.exp(logc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--oracle", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="repredict_crowds_")
    reals, fits = {}, {}
    for run in ("run3", "run4"):
        with tarfile.open(os.path.join(RESULTS, run, "fid_real_csv.tgz")) as t:
            t.extractall(os.path.join(tmp, run))
        reals[run] = os.path.join(tmp, run, "fid_real")
        if args.oracle:
            fits[run] = oracle_fit(json.load(open(os.path.join(RESULTS, run, "profiles_fidelity.json"))), reals[run])
            weights, c = fits[run]
            print(f"{run} oracle: C {c:.3f}, weights " + ", ".join(f"{n} {w:.3f}" for n, w in sorted(weights.items())))
    print(f"{'run':5} {'variant':10} {'makespan real/sim':>18} {'makespan err':>12} {'median JCT err':>14} {'p95':>8}")
    for run in ("run3", "run4"):
        d = os.path.join(RESULTS, run)
        real = reals[run]
        trace = os.path.join(d, "fidelity_trace.csv")
        cat = json.load(open(os.path.join(d, "profiles_fidelity.json")))
        u = {w["name"]: w["gpu_util"] for w in cat["workloads"]}
        c_run2 = {name: k * u[name] / s for name, (k, s) in RUN2_POINTS.items()}
        variants = [("shares", cat, "shares"), ("capacity", cat, "capacity"),
                    ("+run2", with_sweeps(cat, lambda n, un: {RUN2_POINTS[n][0]: RUN2_POINTS[n][1]} if n in RUN2_POINTS else None),
                     "capacity"),
                    ("what-if", with_sweeps(cat, lambda n, un: {5: 5 * un / c_run2["resnet50_25"],
                                                                 8: 8 * un / c_run2["alexnet_25"]}), "capacity")]
        if args.oracle:
            variants.append(("oracle", with_weights(cat, *fits[run]), "capacity"))
            variants.append(("cross", with_weights(cat, *fits["run4" if run == "run3" else "run3"]), "capacity"))
        for name, catalog, model in variants:
            path = os.path.join(tmp, f"{run}_{name}.json")
            with open(path, "w") as f:
                json.dump(catalog, f, indent=1)
            notes = simulate(args.build, path, trace, model, os.path.join(tmp, f"sim_{run}_{name}"))
            ms, ms_err, med, p95 = fidelity(os.path.join(tmp, f"sim_{run}_{name}"), real)
            print(f"{run:5} {name:10} {ms:>18} {ms_err:>12} {med:>14} {p95:>8}")
            for n in notes:
                print(f"      {n}")


if __name__ == "__main__":
    main()
