#!/usr/bin/env python3
"""Estimates how long `salus-profile` takes on a device from a catalog of the same workloads measured
there before (their solo iteration times, u, pair slowdowns and memory), phase by phase, following
what real/profiler.cpp runs: each workload alone, beside a copy of itself and through the
executor; every pair bracketed by solo runs; the mixed crowds and the homogeneous sweeps in rounds,
each bracketed by solo runs; each workload's switching run. An estimate, not a measurement: it
leaves out building networks and pools and starting threads, and a crowd's or sweep's slowdown is
taken as max(1, sum of u / C), C the capacity guessed with --capacity. Checked on the CPU device
(docs/results/2026-11-23-h100-runs.md): 6.9 s estimated for sweeps that took 7.1 s.

    profile_cost.py CATALOG [--sweeps 3,5,8,12] [--crowds 3,5,7] [--crowd-rounds 1]
                            [--min-seconds 0.5] [--iterations 10] [--warmup 2] [--gpu-mem-gib 16]
                            [--capacity 1.13] [--switch on|off]

Standard library only. Prints the seconds of each phase and, for the sweeps, of each workload.
"""
import argparse
import itertools
import json
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("catalog")
    ap.add_argument("--sweeps", default="3,5,8,12")
    ap.add_argument("--crowds", default="3,5,7")
    ap.add_argument("--crowd-rounds", type=int, default=1)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--gpu-mem-gib", type=float, default=16)
    ap.add_argument("--capacity", type=float, default=1.13, help="C guessed for crowds and sweeps (run2: 1.11-1.14)")
    ap.add_argument("--switch", default="on")
    a = ap.parse_args()
    cat = json.load(open(a.catalog))
    W = {w["name"]: w for w in cat["workloads"]}
    names = list(W)
    pairs = {}
    for p in cat.get("pairs", []):
        pairs[(p["a"], p["b"])] = p["slowdown_a"]
        pairs[(p["b"], p["a"])] = p["slowdown_b"]
    n_it, warm, min_s, R, C = a.iterations, a.warmup, a.min_seconds, a.crowd_rounds, a.capacity
    sweeps = [int(k) for k in a.sweeps.split(",")] if a.sweeps != "off" else []
    crowds = [int(k) for k in a.crowds.split(",")] if a.crowds != "off" else []

    def t(n):
        return W[n]["iter_ms"] / 1e3

    def u(n):
        return W[n]["gpu_util"]

    def solo(n, seconds):  # run_solo: the warm-up, then at least n_it iterations and `seconds`
        return warm * t(n) + max(n_it * t(n), seconds)

    def together(lanes, seconds, per_lane=None):  # lanes: (workload, slowdown); warm-up, window, last iteration
        per_lane = n_it if per_lane is None else per_lane
        return (max(warm * s * t(n) for n, s in lanes) + max(seconds, max(per_lane * s * t(n) for n, s in lanes)) +
                max(s * t(n) for n, s in lanes))

    def copies_fit(n):
        foot = math.ceil(W[n].get("persistent_bytes", W[n]["persistent_mib"] * 2**20) / 256) * 256 + \
            math.ceil(W[n].get("ephemeral_bytes", W[n]["ephemeral_mib"] * 2**20) / 256) * 256
        return int(a.gpu_mem_gib * 2**30 // foot)

    phases = {}
    phases["alone, beside itself, executor"] = sum(
        solo(n, min_s) + 2 * solo(n, min_s) + together([(n, 2 * u(n))] * 2, min_s) + max(n_it * t(n), min_s) for n in names)
    phases["pairs"] = sum(2 * solo(x, min_s) + 2 * solo(y, min_s) +
                          together([(x, pairs.get((x, y), u(x) + u(y))), (y, pairs.get((y, x), u(x) + u(y)))], min_s)
                          for x, y in itertools.combinations(names, 2))
    cost, before = 0.0, set()
    for k in crowds:
        lanes = [names[l % len(names)] for l in range(k)]
        distinct = set(lanes)
        s = max(1.0, sum(u(x) for x in lanes) / C)
        if not distinct <= before:
            cost += sum(solo(x, min_s / 2) for x in distinct)
        for _ in range(R):
            cost += together([(x, s) for x in lanes], min_s * k / 2 / R) + sum(solo(x, min_s / 2) for x in distinct)
        before = distinct
    phases["crowds"] = cost
    per = {}
    for n in names:
        fitting = [k for k in sweeps if k <= copies_fit(n)]
        cost = solo(n, min_s / 2) if fitting else 0.0
        for k in fitting:
            s = max(1.0, k * u(n) / C)
            cost += R * (together([(n, s)] * k, min_s / R, math.ceil(n_it / k)) + solo(n, min_s / 2))
        per[n] = (cost, fitting)
    phases["sweeps"] = sum(c for c, _ in per.values())
    if a.switch == "on":
        phases["switch"] = sum(3 * (int(min(200, max(20, 2 * min_s / t(n)))) + 2) * t(n) for n in names)
    print(f"estimated salus-profile time: {sum(phases.values()):.0f} s")
    for k, v in phases.items():
        print(f"  {k:32} {v:6.1f} s")
    for n, (c, fitting) in per.items():
        if sweeps:
            print(f"  sweep {n:25} {c:6.1f} s  (k = {','.join(map(str, fitting)) or 'none fits'}; "
                  f"{copies_fit(n)} copies fit)")


if __name__ == "__main__":
    main()
