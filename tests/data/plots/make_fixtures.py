#!/usr/bin/env python3
"""Writes the fixture JSON files in this folder (made-up but plausible numbers, marked
"fixture": true) for tests/plots/test_make_figures.py. Run it again after a schema change:

    python3 tests/data/plots/make_fixtures.py

Standard library only; a fixed seed makes the output the same on every run.
"""

import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, doc):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def r(x, digits=3):
    return round(x, digits)


def long_trace(rng):
    # Paper Table 1, in minutes: makespan, avg queuing, avg JCT, 95% JCT.
    paper = {"fifo": (303.4, 167.6, 170.6, 251.1), "srtf": (306.0, 28.6, 53.4, 217.0),
             "pack": (287.4, 129.9, 145.5, 266.1), "fair": (301.6, 58.5, 96.6, 281.2)}
    # Slightly different from the paper, as a simulator's numbers would be.
    ours = {"fifo": (301.9, 165.2, 168.8, 249.0), "srtf": (304.7, 31.0, 55.9, 221.4),
            "pack": (285.0, 131.7, 146.9, 262.3), "fair": (300.2, 61.3, 99.1, 276.5)}
    lanes = {"fifo": "exclusive", "srtf": "single", "pack": "auto", "fair": "single"}
    n = 100
    policies, cdfs = {}, {}
    for name, (mk, q, avg, p95) in ours.items():
        # JCTs: a lognormal shape rescaled to the policy's mean, softly capped (tanh) below
        # the makespan.
        sigma = {"fifo": 0.45, "srtf": 1.3, "pack": 0.6, "fair": 0.9}[name]
        raw = sorted(math.exp(rng.gauss(0, sigma)) for _ in range(n))
        mean = sum(raw) / n
        cap = mk * 0.97
        jcts = sorted(cap * math.tanh(x / mean * avg / cap) * 60 for x in raw)
        cdfs[name] = [[r(j, 1), r((i + 1) / n, 2)] for i, j in enumerate(jcts)]
        policies[name] = {"makespan_s": r(mk * 60, 1), "avg_queuing_s": r(q * 60, 1),
                          "avg_jct_s": r(sum(jcts) / n, 1), "p95_jct_s": r(p95 * 60, 1),
                          "lane_mode": lanes[name]}
    return {
        "experiment": "long_trace", "version": 1, "fixture": True,
        "config": {"trace": "traces/long_100.csv", "jobs": n, "gpu_mib": 16384,
                   "interference": "profiled", "switch_cost_ms": 1},
        "policies": policies,
        "paper": {k: {"makespan_s": v[0] * 60, "avg_queuing_s": r(v[1] * 60, 1),
                      "avg_jct_s": r(v[2] * 60, 1), "p95_jct_s": r(v[3] * 60, 1)}
                  for k, v in paper.items()},
        "jct_cdf": cdfs,
    }


def srtf_snapshot():
    t0 = 41230.0
    # The paper's Figure 8a story: #1 preempts #0; #3 (shorter) runs before #2; #5 preempts #4.
    jobs = [("#0", "job007", "resnet50_75", -620.0, 1310.0),
            ("#1", "job012", "superres_32", 40.0, 150.0),
            ("#2", "job013", "googlenet_50", 100.0, 330.0),
            ("#3", "job014", "alexnet_25", 120.0, 230.0),
            ("#4", "job018", "inception3_25", 420.0, 600.0),
            ("#5", "job019", "vgg11_25", 470.0, 540.0)]
    bars = [(0, "running", -620, 40), (0, "waiting", 40, 330), (0, "running", 330, 420),
            (0, "waiting", 420, 600), (0, "running", 600, 1310),
            (1, "running", 40, 150),
            (2, "waiting", 100, 230), (2, "running", 230, 330),
            (3, "waiting", 120, 150), (3, "running", 150, 230),
            (4, "running", 420, 470), (4, "waiting", 470, 540), (4, "running", 540, 600),
            (5, "running", 470, 540)]
    gantt = {
        "window_s": [t0, t0 + 700.0],
        "jobs": [{"label": l, "id": i, "workload": w, "arrival_s": t0 + a, "finish_s": t0 + f}
                 for l, i, w, a, f in jobs],
        "bars": [{"job": j, "state": s, "start_s": t0 + a, "end_s": t0 + b}
                 for j, s, a, b in bars],
    }
    # Memory around the #0 -> #1 switch at t0 + 40: resnet50_75 iterations of 0.41 s holding
    # 5.1 GiB ephemeral; superres_32 admitted at its arrival (persistent +0.15 GiB), its
    # iterations of 0.12 s holding 2.6 GiB start right after #0's last iteration ends.
    switch = t0 + 40.06
    p0, p1 = 1105.0, 152.0
    e0, e1 = 5220.0, 2640.0
    iterations = []
    t = t0 + 40.06 - 0.41 * 7
    while t < switch - 1e-9:
        iterations.append(("#0", t, t + 0.41, e0))
        t += 0.41
    t = switch + 0.001  # the switching cost
    while t < t0 + 43.5:
        iterations.append(("#1", t, t + 0.12, e1))
        t += 0.121
    mem_window = [t0 + 37.5, t0 + 42.5]
    # Persistent and total ephemeral as step functions.
    events = sorted({mem_window[0], t0 + 40.0} | {a for _, a, _, _ in iterations}
                    | {b for _, _, b, _ in iterations})
    ts, pers, eph = [], [], []
    for e in events:
        if e > mem_window[1]:
            break
        ts.append(r(e, 4))
        pers.append(p0 + (p1 if e >= t0 + 40.0 else 0.0))
        eph.append(sum(m for _, a, b, m in iterations if a <= e < b))
    return {
        "experiment": "srtf_snapshot", "version": 1, "fixture": True,
        "gantt": gantt,
        "memory": {
            "window_s": mem_window, "switch_s": switch, "from_job": "#0", "to_job": "#1",
            "capacity_mib": 16384,
            "steps": {"t_s": ts, "persistent_mib": pers, "ephemeral_mib": eph},
            "iterations": [{"job": j, "start_s": r(a, 4), "end_s": r(b, 4), "ephemeral_mib": m}
                           for j, a, b, m in iterations if b > mem_window[0]
                           and a < mem_window[1]],
        },
    }


def fair_three(rng):
    solo = 126.0  # inception3_50 images/s alone
    work = 6000.0  # images per job
    arrivals = [0.0, 15.0, 30.0]
    done = [0.0, 0.0, 0.0]
    finish = [None, None, None]
    dt = 0.01
    t = 0.0
    bins = {}
    while any(f is None for f in finish):
        active = [i for i in range(3) if arrivals[i] <= t and finish[i] is None]
        b = int(t)
        for i in active:
            done[i] += solo / len(active) * dt
            bins.setdefault(b, [0.0, 0.0, 0.0])[i] += solo / len(active) * dt
            if done[i] >= work:
                finish[i] = t + dt
        t += dt
    n = max(bins) + 1
    series = [[0.0] * n for _ in range(3)]
    for b, v in bins.items():
        for i in range(3):
            # Switching at iteration boundaries makes 1-s bins jitter around the fair share.
            series[i][b] = max(0.0, v[i] * (1 + rng.gauss(0, 0.04))) if v[i] > 0 else 0.0
    total = [sum(series[i][b] for i in range(3)) for b in range(n)]
    return {
        "experiment": "fair_three", "version": 1, "fixture": True, "bin_s": 1.0,
        "unit": "images/s",
        "jobs": [{"label": f"job {i + 1}", "id": f"fair{i + 1}", "workload": "inception3_50",
                  "arrival_s": arrivals[i], "finish_s": r(finish[i], 2)} for i in range(3)],
        "t_s": [b + 0.5 for b in range(n)],
        "throughput": {f"job {i + 1}": [r(x, 2) for x in series[i]] for i in range(3)},
        "total": [r(x, 2) for x in total],
    }


def hyperparam():
    doc = {"experiment": "hyperparam", "version": 1, "fixture": True}
    for name, fifo_min, pack_min, paper in (("resnet50_50", 412.3, 384.1, 1.07),
                                            ("superres_128", 236.0, 99.6, 2.38)):
        doc[name] = {"jobs": 300, "fifo_makespan_s": r(fifo_min * 60, 1),
                     "pack_makespan_s": r(pack_min * 60, 1),
                     "speedup": r(fifo_min / pack_min, 3), "paper_speedup": paper}
    return doc


def inference(rng):
    # Exclusive per-request latency (ms) per model at a low request rate, roughly by model size.
    exclusive = {"alexnet_25_infer": 4.1, "googlenet_25_infer": 9.8,
                 "inception3_25_infer": 17.5, "inception4_25_infer": 34.2,
                 "overfeat_25_infer": 8.9, "resnet50_25_infer": 14.6,
                 "resnet101_25_infer": 26.3, "resnet152_25_infer": 37.9,
                 "vgg11_25_infer": 13.2, "vgg16_25_infer": 21.7, "vgg19_25_infer": 25.8,
                 "vae_64_infer": 0.9, "superres_32_infer": 6.4, "speech_25_infer": 19.5}
    models = []
    for name, ms in exclusive.items():
        salus = ms + 2.5 + rng.uniform(0.5, 3.5)
        models.append({"workload": name, "instances": 3, "avg_latency_ms_exclusive": ms,
                       "avg_latency_ms_salus": r(salus, 2)})
    avg_ex = sum(m["avg_latency_ms_exclusive"] for m in models) / len(models)
    avg_sa = sum(m["avg_latency_ms_salus"] for m in models) / len(models)
    return {
        "experiment": "inference", "version": 1, "fixture": True,
        "gpus_exclusive": 42, "gpus_mps": 6, "gpus_salus": 1,
        "paper": {"gpus_exclusive": 42, "gpus_mps": 6, "gpus_salus": 1},
        "avg_latency_ms": {"exclusive": r(avg_ex, 2), "mps": r(avg_ex + 2.9, 2),
                           "salus": r(avg_sa, 2), "overhead": r(avg_sa - avg_ex, 2)},
        "models": models,
    }


def fidelity(rng):
    """Three repeats; repeat 1 simulated 10 % short (as sitting 10's FIFO), the others close."""
    policies, per_job, by_repeat, repeats = {}, {}, {}, [[], [], []]
    for p in ("fifo", "srtf", "pack", "fair"):
        by_repeat[p] = []
        for k, bias in enumerate((0.9, 1.0, 1.01)):
            jobs = []
            for i in range(8):
                real = r(rng.uniform(1, 40))
                jobs.append({"id": f"job{i:03d}", "jct_real_s": real,
                             "jct_sim_s": r(real * bias * rng.uniform(0.98, 1.02))})
            by_repeat[p].append(jobs)
            errors = sorted(abs(j["jct_sim_s"] - j["jct_real_s"]) / j["jct_real_s"] for j in jobs)
            repeats[k].append({"policy": p, "jobs": 8, "done_both": 8, "makespan_real_s": 45.0,
                               "makespan_sim_s": r(45.0 * bias), "makespan_error": r(abs(bias - 1)),
                               "jct_error_median": r((errors[3] + errors[4]) / 2, 4), "jct_error_p95": r(errors[-1], 4),
                               "jct_error_max": r(errors[-1], 4), "kendall_tau": 0.95, "switches_real": 10,
                               "switches_sim": 10})
        per_job[p] = by_repeat[p][0]
        rows = [repeats[k][-1] for k in range(3)]
        policies[p] = dict(rows[1], jct_error_median=sorted(x["jct_error_median"] for x in rows)[1],
                           makespan_error=sorted(x["makespan_error"] for x in rows)[1])
    return {"experiment": "fidelity", "version": 1, "fixture": True, "executor": "real", "device": "cpu",
            "trace": "fixture.csv", "catalog": "fixture.json", "interference": "shares", "switch_cost_ms": 0.1,
            "repeat": 3, "policies": policies, "repeats": repeats, "per_job": per_job,
            "per_job_repeats": by_repeat}



def gpus_needed():
    """Average JCT falling with the cluster size, FIFO above the Salus policies; the curves start at
    the search's lower bound (3 GPUs), as salus-experiment's do."""
    bound = 480.0
    policies = {}
    for name, label, scale, placement in (("fifo", "exclusive FIFO", 9000.0, "first-fit"),
                                          ("srtf_exclusive", "exclusive SRTF", 6000.0, "least-loaded"),
                                          ("pack", "Salus PACK", 4800.0, "util-pack"),
                                          ("srtf", "Salus SRTF", 2000.0, "least-loaded"),
                                          ("fair", "Salus FAIR", 3000.0, "least-loaded")):
        curve = []
        needed = None
        for n in range(3, 11):
            jct = 240.0 + scale / (n - 2) ** 2.5
            curve.append({"gpus": n, "avg_jct_s": r(jct), "avg_queuing_s": r(jct - 240.0),
                          "makespan_s": r(3600.0 + jct), "done": 100})
            if needed is None and jct <= bound:
                needed = n
        policy = name.split("_")[0]
        policies[name] = {"label": label, "policy": policy,
                          "lane_mode": {"fifo": "exclusive", "srtf_exclusive": "exclusive", "pack": "auto"}.get(name, "single"),
                          "placement": placement, "gpus_needed": needed, "rejected": 0, "search_runs": 4,
                          "simulations": 8, "first_meeting_on_curve": needed, "curve": curve}
    return {"experiment": "gpus_needed", "version": 2, "fixture": True, "input": "fixture.csv",
            "avg_solo_s": 240.0, "bound": {"kind": "avg_jct", "seconds": bound},
            "search": {"lower": 3, "upper": 12, "widest_job_gpus": 1, "work_gpu_s": 86400.0, "span_s": 36000.0},
            "policies": policies}


def main():
    rng = random.Random(2020)
    write("long_trace.json", long_trace(rng))
    write("srtf_snapshot.json", srtf_snapshot())
    write("fair_three.json", fair_three(rng))
    write("hyperparam.json", hyperparam())
    write("inference.json", inference(rng))
    write("fidelity.json", fidelity(rng))
    write("gpus_needed.json", gpus_needed())
    # Malformed: a long_trace.json whose fifo policy lacks avg_jct_s.
    bad = long_trace(random.Random(2020))
    del bad["policies"]["fifo"]["avg_jct_s"]
    os.makedirs(os.path.join(HERE, "malformed"), exist_ok=True)
    write(os.path.join("malformed", "long_trace.json"), bad)


if __name__ == "__main__":
    main()
