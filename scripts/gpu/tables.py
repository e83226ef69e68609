#!/usr/bin/env python3
"""The tables validate.sh prints last: each check's measurement, its target and a verdict.

    tables.py call1|call2|call3|phases DIR   # DIR: a call's folder (what its tarball holds)
    tables.py losses DIR                     # DIR/losses of call1: the loss comparison

Verdicts: PASS, FAIL, or MISSING (the phase did not leave what the check reads). Targets are
issue 29's; scripts/gpu/README.md explains each. Tolerances of the loss checks: LOSS_TOL_FP32
(default 1e-4, the CUDA test suite's) and LOSS_TOL_TF32 (default 1e-2). Standard library only, so
it also runs here on a tarball that came back."""
import glob
import hashlib
import json
import os
import re
import sys

POLICIES = ["fifo", "srtf", "pack", "fair"]
MEDIAN_JCT_TARGET = 0.05
MAKESPAN_TARGET = 0.03
PACK_LANES_TARGET = 8
SWITCH_P99_TARGET_MS = 1.0
OVERHEAD_TARGET = 0.03


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def verdict(ok):
    return "PASS" if ok else "FAIL"


def row(check, measured, target, result):
    return (check, measured, target, result)


def missing(check, what, target):
    return row(check, f"no {what}", target, "MISSING")


def step_status(d, name):
    """The status validate.sh recorded for a phase (ok, rc=N, timeout, no-time), or None."""
    for line in (text(os.path.join(d, "steps.txt")) or "").splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == name:
            return f[1]
    return None


def by_policy(summary):
    return {r["policy"]: r for r in summary.get("results", [])} if summary else {}


# ---- call1 ---------------------------------------------------------------------------------

def cuda_tests(d):
    log = text(os.path.join(d, "cuda_tests.log"))
    m = log and re.search(r"test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed", log)
    if not m:
        return [missing("CUDA test suite", "cuda_tests.log summary", "all pass")]
    total, passed, failed = (int(x) for x in m.groups())
    return [row("CUDA test suite", f"{passed}/{total} cases passed, {failed} failed", "all pass",
                verdict(failed == 0 and passed > 0))]


def sanitizer(d):
    log = text(os.path.join(d, "sanitizer.log"))
    m = log and re.search(r"ERROR SUMMARY: (\d+) error", log)
    if not m:
        return [missing("compute-sanitizer memcheck, PACK", "ERROR SUMMARY", "0 errors")]
    return [row("compute-sanitizer memcheck, PACK", f"{m.group(1)} errors", "0 errors", verdict(m.group(1) == "0"))]


def loss_pair(summary):
    try:
        job = summary["results"][0]["jobs"][0]
        return float(job["loss_first"]), float(job["loss_last"])
    except (TypeError, KeyError, IndexError, ValueError):
        return None


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def compare_losses(d):
    """{net: {"cpu": (first, last), "fp32": ..., "tf32": ...}} and the worst differences."""
    nets = sorted(os.path.basename(p)[4:-5] for p in glob.glob(os.path.join(d, "cpu_*.json")))
    nets += sorted({os.path.basename(p)[len("cuda_fp32_"):-5] for p in glob.glob(os.path.join(d, "cuda_fp32_*.json"))}
                   - set(nets))
    table = {}
    for n in nets:
        table[n] = {k: loss_pair(load(os.path.join(d, f))) for k, f in
                    (("cpu", f"cpu_{n}.json"), ("fp32", f"cuda_fp32_{n}.json"), ("tf32", f"cuda_tf32_{n}.json"))}
    return table


def worst(table, a, b):
    """The largest relative difference of a's losses from b's, and where; None if one is missing."""
    best = (0.0, "")
    for n, t in table.items():
        if t[a] is None or t[b] is None:
            return None, n
        for i, which in enumerate(("first", "last")):
            r = rel(t[a][i], t[b][i])
            if r >= best[0]:
                best = (r, f"{n} {which}")
    return best


def losses(d):
    ld = os.path.join(d, "losses")
    table = compare_losses(ld)
    if not table:
        return [missing("losses CUDA vs CPU (FP32)", "losses/*.json", "all networks")]
    tol32 = float(os.environ.get("LOSS_TOL_FP32", "1e-4"))
    tol_tf = float(os.environ.get("LOSS_TOL_TF32", "1e-2"))
    out = []
    for check, a, b, tol in (("losses CUDA FP32 vs CPU", "fp32", "cpu", tol32),
                             ("losses CUDA TF32 vs FP32", "tf32", "fp32", tol_tf)):
        w, where = worst(table, a, b)
        if w is None:
            out.append(row(check, f"{where}: a run left no loss", f"<= {tol:g} rel.", "FAIL"))
        else:
            out.append(row(check, f"{len(table)} networks, worst {w:.1e} ({where})", f"<= {tol:g} rel.",
                           verdict(w <= tol)))
    return out


def print_losses(d):
    """The per-network table (losses phase log), and compare.json beside the runs."""
    table = compare_losses(d)
    print(f"{'network':14} {'cpu first/last':>22} {'cuda fp32 first/last':>24} {'fp32 vs cpu':>11} "
          f"{'tf32 vs fp32':>12}")
    out = {}
    for n, t in table.items():
        f = lambda p: "-" if p is None else f"{p[0]:.6f}/{p[1]:.6f}"
        d32 = None if t["cpu"] is None or t["fp32"] is None else max(rel(t["fp32"][i], t["cpu"][i]) for i in (0, 1))
        dtf = None if t["fp32"] is None or t["tf32"] is None else max(rel(t["tf32"][i], t["fp32"][i]) for i in (0, 1))
        g = lambda x: "-" if x is None else f"{x:.1e}"
        print(f"{n:14} {f(t['cpu']):>22} {f(t['fp32']):>24} {g(d32):>11} {g(dtf):>12}")
        out[n] = {"cpu": t["cpu"], "cuda_fp32": t["fp32"], "cuda_tf32": t["tf32"], "fp32_vs_cpu": d32,
                  "tf32_vs_fp32": dtf}
    with open(os.path.join(d, "compare.json"), "w") as fh:
        json.dump(out, fh, indent=1)


def runs(d):
    out = []
    for name in ("run_small", "run_mixed"):
        s = load(os.path.join(d, f"{name}.json"))
        if not s:
            out.append(missing(f"{name}: 4 policies", f"{name}.json", "no failure"))
            continue
        failed = sum(r.get("jobs_failed", 0) for r in s["results"])
        fatal = [r["policy"] for r in s["results"] if r.get("fatal_error")]
        p99 = max((r["switch_latency"]["p99_ms"] for r in s["results"] if r["switch_latency"]["count"]), default=0)
        grown = max((r.get("outside_pool_growth_bytes") or 0 for r in s["results"]), default=0)
        out.append(row(f"{name}: {len(s['results'])} policies",
                       f"{failed} failed, fatal {','.join(fatal) or 'none'}, switch p99 <= {p99:.3f} ms, "
                       f"outside pool grew {grown / 2**20:.0f} MiB", "no failure", verdict(failed == 0 and not fatal)))
    return out


def bench(d, name="bench"):
    b = load(os.path.join(d, f"{name}.json"))
    if not b:
        return [missing("service overhead (Fig. 12)", f"{name}.json", f"<= {OVERHEAD_TARGET:.0%}")]
    t = {}
    for x in b.get("benchmarks", []):
        parts = x["name"].split("/")
        if len(parts) >= 2:
            t[(parts[0], parts[1])] = x["real_time"]
    models = sorted({m for (_, m) in t})
    cells, ok = [], bool(models)
    for m in models:
        s, e = t.get(("service", m)), t.get(("plain_loop_sync_at_end", m))
        if s is None or e is None:
            cells.append(f"{m} -")
            ok = False
            continue
        over = s / e - 1
        cells.append(f"{m} {100 * over:+.1f}%")
        ok &= over <= OVERHEAD_TARGET
    label = "service vs end-synced loop (Fig. 12)" if name == "bench" else f"{name}: service vs end-synced loop"
    return [row(label, ", ".join(cells), f"<= {OVERHEAD_TARGET:.0%} each", verdict(ok))]


def packing(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "packing_*.json"))):
        w = os.path.basename(p)[len("packing_"):-5]
        r = by_policy(load(p))
        if "fifo" not in r or "pack" not in r:
            out.append(missing(f"Fig. 11 packing {w}", "fifo and pack", "PACK ahead"))
            continue
        f, k = r["fifo"]["makespan_s"], r["pack"]["makespan_s"]
        out.append(row(f"Fig. 11 packing, 8 x {w}", f"makespan FIFO {f:.2f} s -> PACK {k:.2f} s ({f / k:.2f}x)",
                       "PACK ahead", verdict(k < f)))
    return out or [missing("Fig. 11 packing", "packing_*.json", "PACK ahead")]


def timeslice(d):
    salus = by_policy(load(os.path.join(d, "timeslice_salus.json"))).get("pack")
    alone = by_policy(load(os.path.join(d, "timeslice_alone.json"))).get("fifo")
    procs = [by_policy(load(os.path.join(d, f"timeslice_proc{i}.json"))).get("fifo") for i in (1, 2)]
    if not salus or not alone or None in procs:
        return [missing("Fig. 13 lanes vs time slicing", "timeslice_*.json", "Salus ahead")]
    proc_avg = sum(p["avg_jct_s"] for p in procs) / 2
    return [row("Fig. 13 lanes vs time slicing", f"avg JCT: Salus lanes {salus['avg_jct_s']:.1f} s, two processes "
                f"{proc_avg:.1f} s, one alone {alone['avg_jct_s']:.1f} s", "Salus ahead",
                verdict(salus["avg_jct_s"] < proc_avg))]


# ---- call2 ---------------------------------------------------------------------------------

def profile_all(d):
    c = load(os.path.join(d, "profiles_all.json"))
    log = text(os.path.join(d, "profile_all.log")) or ""
    if not c:
        return [missing("catalog: every workload alone", "profiles_all.json", "every one that fits")]
    unfit = re.findall(r"^(\S+)\s+not measured: (.*)$", log, re.M)
    status = step_status(d, "profile_all")
    return [row("catalog: every workload alone", f"{len(c['workloads'])} measured, {len(unfit)} do not fit"
                + (f" ({', '.join(n for n, _ in unfit)})" if unfit else "") + f", exit {status}", "every one that fits",
                verdict(status == "ok" and len(c["workloads"]) > 0))]


def fid_profile(d, name="profiles_fidelity.json"):
    c = load(os.path.join(d, name))
    if not c:
        return [missing("catalog: fidelity workloads", name, "pairs, crowds, switching")]
    n = len(c["workloads"])
    pairs, crowds = len(c.get("pairs", [])), c.get("crowds", [])
    sizes = ",".join(str(len(x["workloads"])) for x in crowds)
    no_switch = [w["name"] for w in c["workloads"] if "switch_ms" not in w]
    out = [row(f"catalog: {n} fidelity workloads", f"{pairs}/{n * (n - 1) // 2} pairs, crowds of {sizes or 'none'}, "
               f"switch_ms for {n - len(no_switch)}/{n}, interference {c.get('interference', '-')}",
               "all pairs, crowds, switching", verdict(pairs == n * (n - 1) // 2 and crowds and not no_switch))]
    # The homogeneous sweeps (salus-profile --sweeps, k copies of one workload) the `capacity`
    # model reads, and the k each workload reached (the pool stops the large ones early).
    sweeps = {s["workload"]: s["lanes"] for s in c.get("sweeps", [])}
    reach = ", ".join(f"{w} {min(k)}-{max(k)}" for w, k in sweeps.items())
    out.append(row("catalog: sweeps, k copies of each workload", f"{len(sweeps)}/{n} workloads" +
                   (f" (k: {reach})" if reach else "") + (f"; CROWD_SWEEP {os.environ['CROWD_SWEEP']}"
                                                          if os.environ.get("CROWD_SWEEP") else ""),
                   "every workload", verdict(len(sweeps) == n)))
    return out


def h100(d):
    p = os.path.join(d, "h100.json")
    c = load(p)
    if not c:
        return [missing("h100.json", "h100.json", "written")]
    sha = hashlib.sha256(open(p, "rb").read()).hexdigest()[:12]
    return [row("h100.json (traces/profiles/h100.json)", f"{len(c['workloads'])} workloads, {len(c.get('pairs', []))} "
                f"pairs, {len(c.get('crowds', []))} crowds, {len(c.get('sweeps', []))} sweeps, sha256 {sha}", "written", "PASS")]


# ---- call3 ---------------------------------------------------------------------------------

def fidelity(d):
    out = []
    frozen = text(os.path.join(d, "frozen.txt"))
    source = (text(os.path.join(d, "fid_catalog.log")) or "").strip()
    if source:
        out.append(row("fidelity catalog", source[:90], "from call2", verdict(source.startswith("catalog: from call2"))))
    extra = []
    models = os.environ.get("FID_MODELS", "auto capacity shares crowds pairs profiled none").split()
    for label in ("a", "b"):
        real = load(os.path.join(d, f"fid_real_{label}.json"))
        seed = re.search(rf"trace {label}: seed (\d+)", frozen or "")
        name = f"trace {label}"
        if seed:
            out.append(row(f"{name}: seed", seed.group(1) + (" (fixed in advance)" if label == "a" else
                                                            " (drawn after the model was frozen: frozen.txt)"),
                           "recorded", "PASS"))
        if not real:
            out.append(missing(name, f"fid_real_{label}.json", "the GPU run"))
            continue
        r = by_policy(real)
        auto = load(os.path.join(d, f"fid_sim_{label}_auto.json"))
        default = auto.get("interference", "?") if auto else "?"
        res = {m: load(os.path.join(d, f"fidelity_{label}_{m}.json")) or {} for m in models}
        for p in POLICIES:
            f = res.get("auto", {}).get(p)
            if not f:
                out.append(missing(f"{name} {p}", "fidelity_*_auto.json", "<= 5 % / 3 %"))
                continue
            out.append(row(f"{name} {p} ({default}: default)",
                           f"median JCT {100 * f['jct_error_median']:.1f} %, makespan {100 * f['makespan_error']:.1f} %, "
                           f"tau {f['kendall_tau_finish']:.2f}, done {f['done_both']}/{f['jobs']}",
                           "<= 5 % / <= 3 %",
                           verdict(f["jct_error_median"] <= MEDIAN_JCT_TARGET and f["makespan_error"] <= MAKESPAN_TARGET
                                   and f["done_both"] == f["jobs"])))
        lanes = r.get("pack", {}).get("max_concurrent_lanes")
        out.append(row(f"{name} PACK lanes at once", f"{lanes}", f">= {PACK_LANES_TARGET}",
                       "MISSING" if lanes is None else verdict(lanes >= PACK_LANES_TARGET)))
        sw = {p: x["switch_latency"] for p, x in r.items() if x["switch_latency"]["count"]}
        top = max(sw, key=lambda p: sw[p]["p99_ms"], default=None)
        p99 = sw[top]["p99_ms"] if top else None
        fair = sw.get("fair")
        out.append(row(f"{name} switch latency p99",
                       "no switch" if p99 is None else f"worst {top} {p99:.3f} ms over {sw[top]['count']} switches"
                       + (f"; fair {fair['p99_ms']:.3f} ms over {fair['count']}" if fair and top != "fair" else ""),
                       f"< {SWITCH_P99_TARGET_MS:g} ms", "MISSING" if p99 is None else verdict(p99 < SWITCH_P99_TARGET_MS)))
        extra.append((name, res))
    return out, extra


def model_grid(extra):
    """Every model's median JCT / makespan error beside the default's, per trace and policy."""
    lines = []
    for name, res in extra:
        models = [m for m in res if res[m]]
        if not models:
            continue
        lines.append(f"--- {name}: median JCT / makespan error of every model (auto: the default)")
        lines.append(f"{'policy':7}" + "".join(f" {m:>13}" for m in models))
        for p in POLICIES:
            cells = []
            for m in models:
                f = res[m].get(p)
                cells.append(f" {'-':>13}" if not f else
                             f" {'%.1f/%.1f %%' % (100 * f['jct_error_median'], 100 * f['makespan_error']):>13}")
            lines.append(f"{p:7}" + "".join(cells))
    return lines


def print_table(rows, lines=()):
    w = max([len(r[0]) for r in rows] + [5]) + 2
    print(f"{'verdict':8}{'check':{w}}measured (target)")
    for check, measured, target, result in rows:
        print(f"{result:8}{check:{w}}{measured} ({target})")
    for line in lines:
        print(line)
    fails = sum(1 for r in rows if r[3] != "PASS")
    print(f"{len(rows) - fails} of {len(rows)} checks pass" + (f"; {fails} do not" if fails else ""))


def main(argv):
    if len(argv) != 3 or argv[1] not in ("call1", "call2", "call3", "phases", "losses"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, d = argv[1], argv[2]
    if mode == "losses":
        print_losses(d)
        return 0
    rows, lines = [], []
    if mode in ("call1", "phases"):
        for f in (cuda_tests, sanitizer, losses, runs, bench, packing, timeslice):
            if mode == "call1" or f is losses and os.path.isdir(os.path.join(d, "losses")) or \
                    any(os.path.exists(os.path.join(d, x)) for x in (f"{f.__name__}.log", f"{f.__name__}.json")) or \
                    f is runs and os.path.exists(os.path.join(d, "run_small.json")) or \
                    f is packing and glob.glob(os.path.join(d, "packing_*.json")) or \
                    f is timeslice and os.path.exists(os.path.join(d, "timeslice_salus.json")):
                rows += f(d)
        if mode == "phases" and os.path.exists(os.path.join(d, "bench_tf32.json")):
            rows += bench(d, "bench_tf32")
    if mode in ("call2", "phases"):
        if mode == "call2" or os.path.exists(os.path.join(d, "profiles_all.json")):
            rows += profile_all(d)
        if mode == "call2" or os.path.exists(os.path.join(d, "profiles_fidelity.json")):
            rows += fid_profile(d)
        if mode == "call2" or os.path.exists(os.path.join(d, "h100.json")):
            rows += h100(d)
    if mode in ("call3", "phases"):
        if mode == "call3" or glob.glob(os.path.join(d, "fid_real_*.json")):
            r, extra = fidelity(d)
            rows += r
            lines += model_grid(extra)
    print_table(rows, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
