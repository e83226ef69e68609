#!/usr/bin/python3
"""Paper-style figures for Salus (MLSys 2020, section 5) from the JSON that salus-experiment writes.

    /usr/bin/python3 plots/make_figures.py --in DIR --out DIR [--only NAME,...]

Reads DIR/<experiment>.json for each experiment in EXPERIMENTS that is present and writes each of
its figures as OUT/<figure>.png (200 dpi) and OUT/<figure>.pdf. Depends only on those JSON files
and on matplotlib (Debian's python3-matplotlib, so run it with /usr/bin/python3).

Every input file is checked before anything is drawn; bad input is reported as `FILE: what is
wrong` (a missing key is named by its path, e.g. `policies.fifo.avg_jct_s`) and the program exits
with status 2 without writing any figure. The same JSON gives byte-identical PNG and PDF files.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atomic_file import save_figure  # noqa: E402  (every file written is renamed into place)

MATPLOTLIB_MISSING = ("make_figures.py: matplotlib not found: install it with "
                      "'apt-get install -y python3-matplotlib' and run with /usr/bin/python3")

# Experiment name -> the figures drawn from DIR/<name>.json, in the paper's figure order.
EXPERIMENTS = {
    "long_trace": ["fig07_jct_cdf"],
    "srtf_snapshot": ["fig08a_srtf_gantt", "fig08b_srtf_memory"],
    "fair_three": ["fig09_fair_throughput"],
    "inference": ["fig10a_inference_gpus", "fig10b_inference_latency"],
    "hyperparam": ["fig11_hyperparam_makespan"],
    "fidelity": ["fidelity_jct"],
    "gpus_needed": ["gpus_needed"],
}
FIGURES = [fig for figs in EXPERIMENTS.values() for fig in figs]

# Figure sizes in inches: one column of a two-column paper is about 3.5 in wide. Heights are
# multiples of 0.05 in so that the PNG is a whole number of pixels at DPI.
DPI = 200
FIG_SIZE_IN = {
    "fig07_jct_cdf": (3.5, 2.6),
    "fig08a_srtf_gantt": (3.5, 2.6),
    "fig08b_srtf_memory": (3.5, 2.6),
    "fig09_fair_throughput": (3.5, 2.4),
    "fig10a_inference_gpus": (3.5, 2.4),
    "fig10b_inference_latency": (3.5, 2.8),
    "fig11_hyperparam_makespan": (3.5, 2.4),
    "fidelity_jct": (7.0, 2.5),
    "gpus_needed": (3.5, 2.6),
}

# One colour and line style per policy, the same in every figure (Okabe-Ito, colour-blind safe;
# the line styles keep the CDF readable in greyscale).
POLICY_ORDER = ["fifo", "srtf", "pack", "fair"]
POLICY_LABEL = {"fifo": "FIFO", "srtf": "SRTF", "pack": "PACK", "fair": "FAIR"}
POLICY_COLOUR = {"fifo": "#0072B2", "srtf": "#D55E00", "pack": "#009E73", "fair": "#CC79A7"}
POLICY_LINESTYLE = {"fifo": "-", "srtf": "--", "pack": "-.", "fair": (0, (1, 1))}
# salus-experiment gpus_needed --cluster-policies: the preemptive cluster policies (whole GPUs, or
# lanes beneath with --gpu-sharing), drawn beside the five configurations.
CLUSTER_POLICIES = ["dlas-gpu", "dlas", "max-min", "fifo-rounds"]

# Jobs are told apart by Paul Tol's "bright" palette (colour-blind safe), in order of appearance.
JOB_COLOURS = ["#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"]

# Inference deployments: no sharing, NVIDIA MPS, Salus (which packs, hence PACK's colour).
SYSTEM_LABEL = {"exclusive": "exclusive", "mps": "MPS", "salus": "Salus"}
SYSTEM_COLOUR = {"exclusive": "#999999", "mps": "#E69F00", "salus": POLICY_COLOUR["pack"]}

MIB_PER_GIB = 1024.0
PNG_METADATA = {"Software": "salus plots/make_figures.py"}
PDF_METADATA = {"Creator": "salus plots/make_figures.py", "CreationDate": None}


class BadInput(Exception):
    """The user's input is wrong; the message is complete (`FILE: what is wrong`)."""


def _describe(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Node:
    """A JSON value with the file and key path it came from, so that errors can name both."""

    def __init__(self, file, value, path=""):
        self.file = file
        self.value = value
        self.path = path

    def fail(self, what):
        raise BadInput(f"{self.file}: {self.path or 'top level'}: {what}")

    def _child(self, key):
        return f"{self.path}.{key}" if self.path else str(key)

    def obj(self):
        if not isinstance(self.value, dict):
            self.fail(f"expected an object, got {_describe(self.value)}")
        return self.value

    def __getitem__(self, key):
        d = self.obj()
        if key not in d:
            raise BadInput(f"{self.file}: missing key {self._child(key)}")
        return Node(self.file, d[key], self._child(key))

    def get(self, key):
        """The child at key, or None where it is absent or null (optional keys)."""
        d = self.obj()
        if d.get(key) is None:
            return None
        return Node(self.file, d[key], self._child(key))

    def keys(self):
        return list(self.obj().keys())

    def items(self):
        return [(k, Node(self.file, v, self._child(k))) for k, v in self.obj().items()]

    def list(self, min_len=0):
        if not isinstance(self.value, list):
            self.fail(f"expected a list, got {_describe(self.value)}")
        if len(self.value) < min_len:
            self.fail(f"expected at least {min_len} element{'s' if min_len != 1 else ''}, "
                      f"got {len(self.value)}")
        return [Node(self.file, v, f"{self.path}[{i}]") for i, v in enumerate(self.value)]

    def num(self, lo=None, positive=False):
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(f"expected a number, got {_describe(v)}")
        if positive and v <= 0:
            self.fail(f"expected a positive number, got {_describe(v)}")
        if lo is not None and v < lo:
            self.fail(f"expected a number >= {lo:g}, got {_describe(v)}")
        return float(v)

    def integer(self, lo=None):
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.fail(f"expected an integer, got {_describe(v)}")
        if lo is not None and v < lo:
            self.fail(f"expected an integer >= {lo}, got {v}")
        return v

    def string(self):
        if not isinstance(self.value, str) or not self.value:
            self.fail(f"expected a non-empty string, got {_describe(self.value)}")
        return self.value

    def numbers(self, min_len=0, lo=None):
        return [n.num(lo=lo) for n in self.list(min_len)]


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def read_json(file, experiment):
    """Parses FILE and checks the envelope (experiment name, version); returns the root Node."""
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{file}: cannot read: {e}")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise BadInput(f"{file}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}")
    except ValueError as e:
        raise BadInput(f"{file}: invalid JSON: {e}")
    root = Node(file, value)
    root.obj()
    name = root.get("experiment")
    if name is not None and name.value != experiment:
        name.fail(f"is {_describe(name.value)}, expected \"{experiment}\"")
    version = root.get("version")
    # Version 2 adds the executor (sim or real), the device and the time scale to "config";
    # the figures read the same keys from both.
    if version is not None and version.integer() not in (1, 2, 3):
        version.fail(f"{version.value} is not supported (this script reads versions 1 to 3)")
    return root


def _non_decreasing(node, values, what):
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            node.fail(f"{what} decrease at index {i} ({values[i - 1]:g} then {values[i]:g})")


def _known_policy(node, name):
    if name not in POLICY_ORDER:
        raise BadInput(f"{node.file}: {node.path}.{name}: unknown policy "
                       f"(valid: {', '.join(POLICY_ORDER)})")


# ---------------------------------------------------------------------------------------------
# Loaders: check one experiment's JSON and return plain Python data for the plotting functions.

def load_long_trace(root):
    policies = root["policies"]
    cdfs = root["jct_cdf"]
    for name in policies.keys():
        _known_policy(policies, name)
    for name in cdfs.keys():
        _known_policy(cdfs, name)
    names = [p for p in POLICY_ORDER if p in policies.obj() or p in cdfs.obj()]
    if not names:
        policies.fail("no policies (expected some of " + ", ".join(POLICY_ORDER) + ")")
    paper = root.get("paper")
    out = []
    for name in names:
        avg_jct = policies[name]["avg_jct_s"].num(lo=0)
        paper_avg = None
        if paper is not None and paper.get(name) is not None:
            node = paper[name].get("avg_jct_s")
            paper_avg = node.num(lo=0) if node is not None else None
        cdf = cdfs[name]
        points = []
        for p in cdf.list(min_len=1):
            pair = p.list()
            if len(pair) != 2:
                p.fail(f"expected [jct_s, cumulative_fraction], got {len(pair)} values")
            jct = pair[0].num(lo=0)
            frac = pair[1].num(lo=0)
            if frac > 1:
                pair[1].fail(f"cumulative fraction {frac:g} is above 1")
            points.append((jct, frac))
        _non_decreasing(cdf, [x for x, _ in points], "JCTs")
        _non_decreasing(cdf, [y for _, y in points], "cumulative fractions")
        out.append({"policy": name, "avg_jct_s": avg_jct, "paper_avg_jct_s": paper_avg,
                    "cdf": points})
    return {"policies": out}


def _window(node):
    values = node.numbers()
    if len(values) != 2:
        node.fail(f"expected [t0, t1], got {len(values)} values")
    if values[1] <= values[0]:
        node.fail(f"window end {values[1]:g} is not after its start {values[0]:g}")
    return values


def load_srtf_snapshot(root):
    gantt = root["gantt"]
    g_window = _window(gantt["window_s"])
    jobs = []
    for j in gantt["jobs"].list(min_len=1):
        workload = j.get("workload")
        jobs.append({"label": j["label"].string(),
                     "workload": workload.string() if workload is not None else "",
                     "arrival_s": j["arrival_s"].num(),
                     "finish_s": j["finish_s"].num() if j.get("finish_s") is not None else None})
    bars = []
    for b in gantt["bars"].list():
        index = b["job"].integer(lo=0)
        if index >= len(jobs):
            b["job"].fail(f"{index} is not an index into gantt.jobs ({len(jobs)} jobs)")
        state = b["state"].string()
        if state not in ("running", "waiting"):
            b["state"].fail(f"unknown state {_describe(state)} (valid: running, waiting)")
        start, end = b["start_s"].num(), b["end_s"].num()
        if end < start:
            b.fail(f"end_s {end:g} is before start_s {start:g}")
        bars.append({"job": index, "state": state, "start_s": start, "end_s": end})

    mem = root["memory"]
    m_window = _window(mem["window_s"])
    steps = mem["steps"]
    t = steps["t_s"].numbers(min_len=1)
    _non_decreasing(steps["t_s"], t, "times")
    persistent = steps["persistent_mib"].numbers(lo=0)
    ephemeral = steps["ephemeral_mib"].numbers(lo=0)
    for key, values in (("persistent_mib", persistent), ("ephemeral_mib", ephemeral)):
        if len(values) != len(t):
            steps[key].fail(f"{len(values)} values, but steps.t_s has {len(t)}")
    iterations = []
    for it in mem["iterations"].list():
        start, end = it["start_s"].num(), it["end_s"].num()
        if end < start:
            it.fail(f"end_s {end:g} is before start_s {start:g}")
        iterations.append({"job": it["job"].string(), "start_s": start, "end_s": end,
                           "ephemeral_mib": it["ephemeral_mib"].num(lo=0)})
    optional = {k: mem.get(k) for k in ("from_job", "to_job")}
    return {
        "gantt": {"window_s": g_window, "jobs": jobs, "bars": bars},
        "memory": {
            "window_s": m_window,
            "switch_s": mem["switch_s"].num(),
            "from_job": optional["from_job"].string() if optional["from_job"] else None,
            "to_job": optional["to_job"].string() if optional["to_job"] else None,
            "capacity_mib": mem["capacity_mib"].num(positive=True),
            "t_s": t, "persistent_mib": persistent, "ephemeral_mib": ephemeral,
            "iterations": iterations,
        },
    }


def load_fair_three(root):
    t = root["t_s"].numbers(min_len=1)
    _non_decreasing(root["t_s"], t, "times")
    unit = root.get("unit")
    jobs = []
    for j in root["jobs"].list(min_len=1):
        jobs.append({"label": j["label"].string(), "arrival_s": j["arrival_s"].num(),
                     "finish_s": j["finish_s"].num() if j.get("finish_s") is not None else None})
    labels = [j["label"] for j in jobs]
    throughput = root["throughput"]
    for name in throughput.keys():
        if name not in labels:
            throughput.fail(f"series {_describe(name)} is not a job in jobs "
                            f"(jobs: {', '.join(labels)})")
    for job in jobs:
        node = throughput[job["label"]]
        job["throughput"] = node.numbers(lo=0)
        if len(job["throughput"]) != len(t):
            node.fail(f"{len(job['throughput'])} values, but t_s has {len(t)}")
    total = root["total"].numbers(lo=0)
    if len(total) != len(t):
        root["total"].fail(f"{len(total)} values, but t_s has {len(t)}")
    bin_node = root.get("bin_s")
    if bin_node is not None:
        bin_s = bin_node.num(positive=True)
    else:
        bin_s = (t[-1] - t[0]) / (len(t) - 1) if len(t) > 1 and t[-1] > t[0] else 1.0
    return {"t_s": t, "bin_s": bin_s, "unit": unit.string() if unit is not None else "images/s",
            "jobs": jobs, "total": total}


def load_hyperparam(root):
    groups = []
    for key, node in root.items():
        if not isinstance(node.value, dict):
            continue
        if "fifo_makespan_s" not in node.value and "pack_makespan_s" not in node.value:
            continue
        fifo = node["fifo_makespan_s"].num(positive=True)
        pack = node["pack_makespan_s"].num(positive=True)
        speedup = fifo / pack
        given = node.get("speedup")
        if given is not None and abs(given.num(positive=True) - speedup) > 0.01 * speedup:
            given.fail(f"{given.value:g} disagrees with fifo_makespan_s / pack_makespan_s "
                       f"= {speedup:.3f}")
        paper = node.get("paper_speedup")
        jobs = node.get("jobs")
        groups.append({"workload": key, "fifo_s": fifo, "pack_s": pack, "speedup": speedup,
                       "paper_speedup": paper.num(positive=True) if paper is not None else None,
                       "jobs": jobs.integer(lo=1) if jobs is not None else None})
    if not groups:
        root.fail("no workload objects with fifo_makespan_s and pack_makespan_s")
    return {"groups": groups}


def load_inference(root):
    gpus = {}
    for system in SYSTEM_LABEL:
        node = root.get(f"gpus_{system}") if system == "mps" else root[f"gpus_{system}"]
        if node is not None:
            gpus[system] = node.integer(lo=0)
    paper_gpus = {}
    paper = root.get("paper")
    if paper is not None:
        for system in SYSTEM_LABEL:
            node = paper.get(f"gpus_{system}")
            if node is not None:
                paper_gpus[system] = node.integer(lo=0)
    avg = root["avg_latency_ms"]
    averages = {"exclusive": avg["exclusive"].num(lo=0), "salus": avg["salus"].num(lo=0)}
    for key in ("mps", "overhead"):
        if avg.get(key) is not None:
            averages[key] = avg[key].num()
    models = []
    for m in root["models"].list(min_len=1):
        instances = m.get("instances")
        models.append({"workload": m["workload"].string(),
                       "instances": instances.integer(lo=1) if instances is not None else None,
                       "exclusive_ms": m["avg_latency_ms_exclusive"].num(lo=0),
                       "salus_ms": m["avg_latency_ms_salus"].num(lo=0)})
    return {"gpus": gpus, "paper_gpus": paper_gpus, "avg_latency_ms": averages,
            "models": models}


def load_fidelity(root):
    """salus-experiment fidelity: per policy, simulated against measured JCT of each job."""
    policies = root["policies"]
    per_job = root["per_job"]
    names = [p for p in POLICY_ORDER if p in per_job.obj()]
    for name in per_job.keys():
        _known_policy(per_job, name)
    if not names:
        per_job.fail("no policies (expected some of " + ", ".join(POLICY_ORDER) + ")")
    # Every repeat's jobs where the file has them (per_job_repeats), else repeat 1's (per_job):
    # the dots drawn and the errors in each panel's title are those of the same repeats.
    by_repeat = root.get("per_job_repeats")
    repeat_rows = root["repeats"].list(min_len=1)
    out = []
    for name in names:
        runs = by_repeat[name].list(min_len=1) if by_repeat is not None else [per_job[name]]
        repeats = []
        for k, run in enumerate(runs):
            if k >= len(repeat_rows):
                root["repeats"].fail(f"{len(repeat_rows)} repeats, but per_job_repeats has {len(runs)} for {name}")
            row = None
            for r in repeat_rows[k].list():
                if r["policy"].string() == name:
                    row = r
            if row is None:
                repeat_rows[k].fail(f"no row for {name}")
            jobs = [(j["jct_real_s"].num(lo=0), j["jct_sim_s"].num(lo=0)) for j in run.list()]
            repeats.append({"jobs": jobs, "jct_error_median": row["jct_error_median"].num(lo=0),
                            "makespan_error": row["makespan_error"].num(lo=0)})
        med = policies[name]
        out.append({"policy": name, "repeats": repeats,
                    "jct_error_median": med["jct_error_median"].num(lo=0),
                    "makespan_error": med["makespan_error"].num(lo=0)})
    return {"policies": out, "device": root["device"].value, "repeat": root["repeat"].integer()}


LOADERS = {
    "long_trace": load_long_trace,
    "srtf_snapshot": load_srtf_snapshot,
    "fair_three": load_fair_three,
    "hyperparam": load_hyperparam,
    "inference": load_inference,
    "fidelity": load_fidelity,
    "gpus_needed": lambda root: load_gpus_needed(root),  # defined beside its drawing, below
}


# ---------------------------------------------------------------------------------------------
# Drawing. Each function gets a fresh Figure of the figure's size and the loaded data.

def _style(mpl):
    """Fixed settings, independent of any matplotlibrc, so output depends only on the JSON."""
    mpl.rcdefaults()
    mpl.rcParams.update({
        "font.family": "DejaVu Sans",
        "font.size": 8,
        "axes.titlesize": 8,
        "axes.labelsize": 8,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "legend.fontsize": 8,
        "legend.frameon": False,
        "legend.handlelength": 2.0,
        "legend.columnspacing": 1.0,
        "axes.linewidth": 0.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "xtick.major.width": 0.6,
        "ytick.major.width": 0.6,
        "xtick.major.size": 2.5,
        "ytick.major.size": 2.5,
        "lines.linewidth": 1.4,
        "hatch.linewidth": 0.6,
        "pdf.fonttype": 42,
        "figure.constrained_layout.h_pad": 0.02,
        "figure.constrained_layout.w_pad": 0.02,
        "svg.hashsalt": "salus",
    })


def _legend_above(ax, ncol, handles=None, labels=None, **extra):
    """A legend in a row above the axes, where it cannot cover data."""
    kwargs = {"loc": "lower center", "bbox_to_anchor": (0.5, 1.01), "ncol": ncol,
              "borderaxespad": 0.0, "handletextpad": 0.4, "handlelength": 1.6,
              "columnspacing": 1.0}
    kwargs.update(extra)
    if handles is not None:
        return ax.legend(handles, labels, **kwargs)
    return ax.legend(**kwargs)


def figure_size(name, data):
    """FIG_SIZE_IN, except that the Gantt chart grows by one row height per job beyond six."""
    width, height = FIG_SIZE_IN[name]
    if name == "fig08a_srtf_gantt":
        rows = len(data["gantt"]["jobs"])
        height = max(height, round((0.95 + 0.275 * rows) * 20) / 20)
    return width, height


def _job_colours(labels):
    return {label: JOB_COLOURS[i % len(JOB_COLOURS)] for i, label in enumerate(labels)}


def draw_jct_cdf(fig, data):
    ax = fig.subplots()
    xmax = 0.0
    for p in data["policies"]:
        xs = [x / 60.0 for x, _ in p["cdf"]]
        ys = [y for _, y in p["cdf"]]
        xmax = max(xmax, xs[-1])
        ax.step([xs[0]] + xs, [0.0] + ys, where="post", label=POLICY_LABEL[p["policy"]],
                color=POLICY_COLOUR[p["policy"]], linestyle=POLICY_LINESTYLE[p["policy"]])
    ax.set_xlim(0, xmax * 1.02 if xmax > 0 else 1)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("job completion time (min)")
    ax.set_ylabel("fraction of jobs")
    ax.grid(True, linewidth=0.3, color="#dddddd")
    _legend_above(ax, len(data["policies"]), handlelength=2.4)


def draw_srtf_gantt(fig, data):
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    g = data["gantt"]
    t0, t1 = g["window_s"]
    jobs = g["jobs"]
    colours = _job_colours([j["label"] for j in jobs])
    ax = fig.subplots()
    height = 0.62
    for bar in g["bars"]:
        start, end = max(bar["start_s"], t0), min(bar["end_s"], t1)
        if end <= start:
            continue
        job = jobs[bar["job"]]
        colour = colours[job["label"]]
        if bar["state"] == "running":
            ax.barh(bar["job"], end - start, left=start - t0, height=height, color=colour,
                    edgecolor=colour, linewidth=0.4)
        else:
            ax.barh(bar["job"], end - start, left=start - t0, height=height * 0.7,
                    facecolor=colour + "33", edgecolor=colour, hatch="//////", linewidth=0.4)
    for i, job in enumerate(jobs):
        if t0 <= job["arrival_s"] <= t1:
            ax.plot(job["arrival_s"] - t0, i - height / 2 - 0.08, marker="v", markersize=3.5,
                    color="black", linestyle="none", clip_on=False)
    ax.set_yticks(range(len(jobs)))
    ax.set_yticklabels([f"{j['label']} {j['workload']}".strip() for j in jobs])
    ax.set_ylim(len(jobs) - 0.5, -0.5 - 0.2)
    ax.set_xlim(0, t1 - t0)
    ax.set_xlabel("time since window start (s)")
    ax.tick_params(axis="y", length=0)
    ax.grid(True, axis="x", linewidth=0.3, color="#dddddd")
    ax.set_axisbelow(True)
    grey = "#555555"
    handles = [Patch(facecolor=grey, edgecolor=grey),
               Patch(facecolor=grey + "33", edgecolor=grey, hatch="//////", linewidth=0.4),
               Line2D([], [], marker="v", markersize=3.5, color="black", linestyle="none")]
    _legend_above(ax, 3, handles, ["running", "waiting", "arrival"])


def _step_value(ts, values, t):
    """The step function (values[i] holds from ts[i] until ts[i + 1]) at time t; 0 before ts[0]."""
    result = 0.0
    for ti, v in zip(ts, values):
        if ti <= t:
            result = v
        else:
            break
    return result


def draw_srtf_memory(fig, data):
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator
    m = data["memory"]
    t0, t1 = m["window_s"]
    ts, pers, eph = m["t_s"], m["persistent_mib"], m["ephemeral_mib"]
    iterations = [it for it in m["iterations"] if it["end_s"] > t0 and it["start_s"] < t1]
    # Every time at which anything changes, clipped to the window.
    cuts = {t0, t1}
    cuts.update(t for t in ts if t0 < t < t1)
    for it in iterations:
        cuts.update(t for t in (it["start_s"], it["end_s"]) if t0 < t < t1)
    cuts = sorted(cuts)
    used_max = max([_step_value(ts, pers, t) + _step_value(ts, eph, t) for t in cuts[:-1]] +
                   [_step_value(ts, pers, t) + sum(it["ephemeral_mib"] for it in iterations
                                                   if it["start_s"] <= t < it["end_s"])
                    for t in cuts[:-1]])
    capacity = m["capacity_mib"]
    in_gib = max(used_max, capacity) >= 2048
    scale = 1.0 / MIB_PER_GIB if in_gib else 1.0
    unit = "GiB" if in_gib else "MiB"
    # Draw the capacity only when the data would still use a fair part of the axis.
    show_capacity = used_max >= 0.3 * capacity

    gantt_labels = [j["label"] for j in data["gantt"]["jobs"]]
    labels = list(gantt_labels)
    for it in iterations:
        if it["job"] not in labels:
            labels.append(it["job"])
    colours = _job_colours(labels)

    ax = fig.subplots()
    x = [t - t0 for t in cuts]
    base = [_step_value(ts, pers, t) * scale for t in cuts]
    ax.fill_between(x, 0, base, step="post", facecolor="#c8c8c8", edgecolor="#707070",
                    linewidth=0.5)
    # Ephemeral memory of each iteration, stacked on the persistent region (iterations that
    # overlap in time stack in the order they are listed).
    stacked = [0.0] * len(cuts)
    for it in iterations:
        bottom, top, xs = [], [], []
        for k, t in enumerate(cuts):
            inside = it["start_s"] <= t < it["end_s"] or (t == cuts[-1] and xs)
            if not inside:
                if xs:
                    break
                continue
            xs.append(t - t0)
            bottom.append(base[k] + stacked[k])
            top.append(base[k] + stacked[k] + it["ephemeral_mib"] * scale)
        if not xs:
            continue
        end = min(it["end_s"], t1) - t0
        if xs[-1] < end:
            xs.append(end)
            bottom.append(bottom[-1])
            top.append(top[-1])
        for k, t in enumerate(cuts):
            if it["start_s"] <= t < it["end_s"]:
                stacked[k] += it["ephemeral_mib"] * scale
        ax.fill_between(xs, bottom, top, step="post", facecolor=colours[it["job"]],
                        edgecolor="white", linewidth=0.3)
    # The total the program reports, as an outline: it should match the stacked areas.
    total = [(_step_value(ts, pers, t) + _step_value(ts, eph, t)) * scale for t in cuts]
    ax.step(x, total, where="post", color="black", linewidth=0.6)

    switch = m["switch_s"] - t0
    used_top = used_max * scale
    ax.axvline(switch, color="black", linestyle="--", linewidth=0.9)
    if show_capacity:
        cap = capacity * scale
        ax.axhline(cap, color="#D55E00", linewidth=1.0)
        ax.set_ylim(0, max(cap * 1.12, used_top * 1.3))
        ax.text(t1 - t0, cap, f"capacity {cap:g} {unit} ", ha="right", va="bottom",
                color="#D55E00")
    else:
        ax.set_ylim(0, used_top * 1.45)
        ax.text(0.99, 0.98, f"capacity {capacity * scale:g} {unit} (off scale)", ha="right",
                va="top", transform=ax.transAxes)
    switch_name = "switch"
    if m["from_job"] and m["to_job"]:
        switch_name = f"switch {m['from_job']}\u2192{m['to_job']}"
    left_half = switch <= 0.6 * (t1 - t0)
    ax.text(switch, used_top * 1.04, (" " + switch_name) if left_half else (switch_name + " "),
            ha="left" if left_half else "right", va="bottom")
    ax.set_xlim(0, t1 - t0)
    ax.set_xlabel("time since window start (s)")
    ax.set_ylabel(f"memory in use ({unit})")
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 4, 5, 10]))

    present = [label for label in labels if any(it["job"] == label for it in iterations)]
    handles = [Patch(facecolor="#c8c8c8", edgecolor="#707070", linewidth=0.5)]
    names = ["persistent"]
    for label in present:
        handles.append(Patch(facecolor=colours[label]))
        names.append(f"{label} ephemeral")
    _legend_above(ax, min(len(handles), 3), handles, names)


def draw_fair_throughput(fig, data):
    from matplotlib.lines import Line2D
    ax = fig.subplots()
    t = data["t_s"]
    colours = _job_colours([j["label"] for j in data["jobs"]])
    ymax = max(data["total"] + [max(j["throughput"]) for j in data["jobs"]])
    half_bin = data["bin_s"] / 2
    for job in data["jobs"]:
        # A job's line runs from its arrival to its finish, not along the axis outside them.
        ys = [y if t_i + half_bin > job["arrival_s"]
              and (job["finish_s"] is None or t_i - half_bin < job["finish_s"]) else math.nan
              for t_i, y in zip(t, job["throughput"])]
        ax.plot(t, ys, color=colours[job["label"]], linewidth=1.1, label=job["label"])
    ax.plot(t, data["total"], color="black", linestyle="--", linewidth=1.1, label="total")
    for job in data["jobs"]:
        ax.axvline(job["arrival_s"], color=colours[job["label"]], linestyle=":", linewidth=0.8)
        ax.plot(job["arrival_s"], 0, marker="^", markersize=5, color=colours[job["label"]],
                markeredgecolor="black", markeredgewidth=0.4, linestyle="none", clip_on=False,
                zorder=5)
    ax.set_xlim(min(t[0], min(j["arrival_s"] for j in data["jobs"])), t[-1])
    ax.set_ylim(0, ymax * 1.08 if ymax > 0 else 1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"throughput ({data['unit']})")
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], marker="^", markersize=5, color="white",
                          markeredgecolor="black", markeredgewidth=0.6, linestyle="none"))
    labels.append("arrival")
    _legend_above(ax, len(handles), handles, labels, handlelength=1.3, columnspacing=0.7)


def draw_inference_gpus(fig, data):
    ax = fig.subplots()
    systems = [s for s in SYSTEM_LABEL if s in data["gpus"]]
    values = [data["gpus"][s] for s in systems]
    rects = ax.bar(range(len(systems)), values, width=0.6,
                   color=[SYSTEM_COLOUR[s] for s in systems], edgecolor="black", linewidth=0.5)
    ax.set_ylim(0, max(values + list(data["paper_gpus"].values()) + [1]) * 1.3)
    ytop = ax.get_ylim()[1]
    for s, v, rect in zip(systems, values, rects):
        x = rect.get_x() + rect.get_width() / 2
        ax.text(x, v + 0.015 * ytop, f"{v}", ha="center", va="bottom", fontweight="bold")
        if s in data["paper_gpus"]:
            ax.text(x, v + 0.09 * ytop, f"paper {data['paper_gpus'][s]}", ha="center",
                    va="bottom", color="#444444")
    ax.set_xticks(range(len(systems)))
    ax.set_xticklabels([SYSTEM_LABEL[s] for s in systems])
    ax.set_xlim(-0.6, len(systems) - 0.4)
    ax.set_ylabel("GPUs needed")
    ax.tick_params(axis="x", length=0)


def _model_name(workload):
    return workload[:-len("_infer")] if workload.endswith("_infer") else workload


def draw_inference_latency(fig, data):
    ax = fig.subplots()
    models = data["models"]
    n = len(models)
    width = 0.38
    xs = list(range(n))
    avg = data["avg_latency_ms"]
    for offset, system, key in ((-width / 2, "exclusive", "exclusive_ms"),
                                (width / 2, "salus", "salus_ms")):
        ax.bar([x + offset for x in xs], [m[key] for m in models], width=width,
               color=SYSTEM_COLOUR[system], edgecolor="black", linewidth=0.3,
               label=f"{SYSTEM_LABEL[system]}: avg {avg[system]:.1f} ms")
    ax.set_xticks(xs)
    ax.set_xticklabels([_model_name(m["workload"]) for m in models], rotation=50, ha="right",
                       rotation_mode="anchor")
    ax.tick_params(axis="x", length=0)
    ax.set_xlim(-0.6, n - 0.4)
    ymax = max(max(m["exclusive_ms"], m["salus_ms"]) for m in models)
    ax.set_ylim(0, ymax * 1.05 if ymax > 0 else 1)
    ax.set_ylabel("average latency (ms)")
    ax.grid(True, axis="y", linewidth=0.3, color="#dddddd")
    ax.set_axisbelow(True)
    # Legend, column by column: exclusive over MPS's average (no per-model MPS data, so no
    # handle), Salus over its average overhead.
    from matplotlib.patches import Patch
    (h_ex, h_salus), (l_ex, l_salus) = ax.get_legend_handles_labels()
    blank = Patch(visible=False)
    handles, labels = [h_ex], [l_ex]
    if "mps" in avg:
        handles.append(blank)
        labels.append(f"MPS: avg {avg['mps']:.1f} ms")
    handles.append(h_salus)
    labels.append(l_salus)
    if "overhead" in avg:
        handles.append(blank)
        labels.append(f"overhead: {avg['overhead']:+.1f} ms")
    if "mps" in avg and "overhead" not in avg:
        handles.append(blank)
        labels.append("")
    _legend_above(ax, 2, handles, labels)


def draw_hyperparam_makespan(fig, data):
    ax = fig.subplots()
    groups = data["groups"]
    width = 0.36
    xs = list(range(len(groups)))
    ax.bar([x - width / 2 for x in xs], [g["fifo_s"] / 60 for g in groups], width=width,
           color=POLICY_COLOUR["fifo"], edgecolor="black", linewidth=0.4, label="FIFO")
    pack = ax.bar([x + width / 2 for x in xs], [g["pack_s"] / 60 for g in groups], width=width,
                  color=POLICY_COLOUR["pack"], edgecolor="black", linewidth=0.4,
                  label="PACK (Salus)")
    ymax = max(max(g["fifo_s"], g["pack_s"]) for g in groups) / 60
    ytop = ymax * 1.15
    ax.set_ylim(0, ytop)
    # The speedup sits right over the PACK bar (it is narrower than the bar while there are
    # few groups; with many, it goes above the taller bar of its group); the paper's speedup
    # goes under the group's name.
    crowded = len(groups) > 3
    for g, rect in zip(groups, pack):
        top = max(g["fifo_s"], g["pack_s"]) / 60 if crowded else rect.get_height()
        ax.text(rect.get_x() + rect.get_width() / 2, top + 0.015 * ytop,
                f"{g['speedup']:.2f}\u00d7", ha="center", va="bottom", fontweight="bold")
    names = []
    for g in groups:
        details = []
        if g["jobs"]:
            details.append(f"{g['jobs']} jobs")
        if g["paper_speedup"] is not None:
            details.append(f"paper {g['paper_speedup']:.2f}\u00d7")
        names.append(g["workload"] + ("\n" + ", ".join(details) if details else ""))
    ax.set_xticks(xs)
    if crowded:
        ax.set_xticklabels(names, rotation=30, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticklabels(names)
    ax.tick_params(axis="x", length=0)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("makespan (min)")
    ax.grid(True, axis="y", linewidth=0.3, color="#dddddd")
    ax.set_axisbelow(True)
    _legend_above(ax, 2)


# A repeat's dots in the fidelity figure: its own marker (and hollow after the first), so that
# repeats lying on one another stay told apart.
REPEAT_MARKERS = ["o", "^", "s", "D", "v", "P", "X", "*"]


def draw_fidelity_jct(fig, data):
    """One panel per policy: each job's simulated JCT against its measured one in every repeat
    (a marker per repeat), and y = x; the title gives each repeat's median per-job JCT error and
    makespan error, the same runs as the dots."""
    panels = data["policies"]
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, p in zip(axes, panels):
        xs = [x for rep in p["repeats"] for x, _ in rep["jobs"]]
        ys = [y for rep in p["repeats"] for _, y in rep["jobs"]]
        hi = max(xs + ys + [1e-3]) * 1.05
        ax.plot([0, hi], [0, hi], color="#999999", lw=0.8)
        colour = POLICY_COLOUR[p["policy"]]
        for k, rep in enumerate(p["repeats"]):
            marker = REPEAT_MARKERS[k % len(REPEAT_MARKERS)]
            ax.scatter([x for x, _ in rep["jobs"]], [y for _, y in rep["jobs"]], s=9, marker=marker,
                       facecolors=colour if k == 0 else "none", edgecolors=colour, linewidths=0.6,
                       label=f"repeat {k + 1}")
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        n = len(p["repeats"])
        jct = " / ".join(f"{100 * r['jct_error_median']:.1f}" for r in p["repeats"])
        mk = " / ".join(f"{100 * r['makespan_error']:.1f}" for r in p["repeats"])
        which = "repeat 1" if n == 1 else f"repeats 1-{n}"
        ax.set_title(f"{POLICY_LABEL[p['policy']]} ({which})\nJCT err p50 {jct} %\nmakespan err {mk} %",
                     fontsize=6)
        ax.set_xlabel(f"measured JCT (s), {data['device']}")
    axes[0].set_ylabel("simulated JCT (s)")
    if any(len(p["repeats"]) > 1 for p in panels):
        axes[0].legend(fontsize=5, loc="upper left", handletextpad=0.2, borderpad=0.3, frameon=False)


def _fit_in_figure(fig):
    """Runs constrained layout, then pulls in any axes whose decorations still stick out of the
    figure (matplotlib 3.6's constrained layout can leave the last x tick label half outside
    when long y tick labels narrow the axes)."""
    pad = 0.03  # inches
    width, height = fig.get_size_inches()
    fig.canvas.draw()
    for _ in range(3):
        bbox = fig.get_tightbbox(fig.canvas.get_renderer())
        left, right = max(0.0, pad - bbox.x0), max(0.0, bbox.x1 - (width - pad))
        bottom, top = max(0.0, pad - bbox.y0), max(0.0, bbox.y1 - (height - pad))
        if left + right + bottom + top < 1e-3:
            return
        fig.set_layout_engine("none")
        for ax in fig.axes:
            pos = ax.get_position()
            ax.set_position([pos.x0 + left / width, pos.y0 + bottom / height,
                             pos.width - (left + right) / width,
                             pos.height - (bottom + top) / height])
        fig.canvas.draw()


def load_gpus_needed(root):
    """salus-experiment gpus_needed: average JCT (or queuing) against the cluster size, per configuration."""
    bound = root["bound"]
    kind = bound["kind"].string()
    if kind not in ("avg_jct", "avg_queuing"):
        bound["kind"].fail(f"is {_describe(kind)}, expected \"avg_jct\" or \"avg_queuing\"")
    lines = []
    for name, node in root["policies"].items():
        policy = node["policy"].string() if node.get("policy") is not None else name
        if policy not in CLUSTER_POLICIES:  # --cluster-policies: drawn after the five, by name
            _known_policy(root["policies"], policy)
        points = []
        for p in node["curve"].list(min_len=1):
            early = p.get("missed_early")
            if early is not None and early.value is True:
                # Stopped once it certainly missed the bound (version 3): no average to draw.
                continue
            points.append((p["gpus"].integer(lo=1), p[kind + "_s"].num(lo=0)))
        _non_decreasing(node["curve"], [g for g, _ in points], "gpus")
        needed = node.get("gpus_needed")
        label = node.get("label")
        mode = node.get("lane_mode")
        lines.append({"policy": policy,
                      # A sharing policy run one job at a time (exclusive SRTF) is drawn apart from its Salus line.
                      "exclusive": (policy != "fifo" and policy not in CLUSTER_POLICIES and mode is not None
                                    and mode.string() == "exclusive"),
                      "label": label.string() if label is not None else
                      ("exclusive FIFO" if policy == "fifo" else
                       policy if policy in CLUSTER_POLICIES else "Salus " + POLICY_LABEL[policy]),
                      "points": points,
                      "needed": needed.integer(lo=1) if needed is not None and needed.value is not None else None})
    if not lines:
        root["policies"].fail("has no policy")
    # The JSON's keys are sorted by name: policy order, a policy's exclusive line first, then the
    # cluster policies.
    order = POLICY_ORDER + CLUSTER_POLICIES
    lines.sort(key=lambda line: (order.index(line["policy"]), not line["exclusive"]))
    source = root.get("input")
    return {"kind": kind, "bound_s": bound["seconds"].num(positive=True), "lines": lines,
            "input": os.path.basename(source.string()) if source is not None else None}


# gpus_needed: a colour per configuration (exclusive SRTF is not Salus SRTF's), Okabe-Ito.
# Keyed by (policy, drawn as an exclusive line): FIFO is always exclusive and has no such line.
CONFIG_COLOUR = {("fifo", False): "#0072B2", ("srtf", True): "#E69F00", ("srtf", False): "#D55E00",
                 ("pack", True): "#56B4E9", ("pack", False): "#009E73", ("fair", True): "#F0E442",
                 ("fair", False): "#CC79A7", ("las", False): "#000000", ("priority", False): "#999999",
                 ("dlas-gpu", False): "#882255", ("dlas", False): "#117733", ("max-min", False): "#332288",
                 ("fifo-rounds", False): "#999933"}
CONFIG_MARKER = ["o", "s", "^", "D", "v", "P", "X", "*"]


def log_ticks_125(lo, hi):
    """1-2-5 ticks from lo to hi (a log axis), at least three: 3, 4, 6, 10 where under a decade."""
    ticks = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            t = m * 10.0 ** e
            if lo <= t <= hi:
                ticks.append(t)
    if len(ticks) < 3:
        ticks = sorted(set(ticks) | {t * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1,
                                                                  math.ceil(math.log10(hi)) + 1)
                                     for t in (1, 1.5, 2, 3, 4, 5, 6, 8) if lo <= t * 10.0 ** e <= hi})
    return ticks


def draw_gpus_needed(fig, data):
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator
    ax = fig.subplots()
    lines = data["lines"]
    # Lines dodged sideways a little, so that points (and chosen N) at one N do not cover each other.
    dodge = 0.09
    for i, line in enumerate(lines):
        p = line["policy"]
        dx = (i - (len(lines) - 1) / 2) * dodge
        gpus = [g + dx for g, _ in line["points"]]
        minutes = [v / 60 for _, v in line["points"]]
        label = line["label"]
        if line["needed"] is not None:
            label += f": {line['needed']} GPUs"
        colour = CONFIG_COLOUR.get((p, line["exclusive"]), "black")
        marker = CONFIG_MARKER[i % len(CONFIG_MARKER)]
        style = (0, (4, 1, 1, 1, 1, 1)) if line["exclusive"] else POLICY_LINESTYLE.get(p, "-")
        ax.plot(gpus, minutes, color=colour, linestyle=style, marker=marker, markersize=2.5, label=label)
        if line["needed"] is not None:
            for g, v in line["points"]:
                if g == line["needed"]:
                    ax.plot([g + dx], [v / 60], marker=marker, markersize=7, markerfacecolor="none",
                            markeredgecolor=colour, markeredgewidth=1.2)
    bound_min = data["bound_s"] / 60
    ax.axhline(bound_min, color="black", linewidth=0.8, linestyle=":")
    ax.text(ax.get_xlim()[1], bound_min, " bound", va="bottom", ha="right", fontsize="small")
    ax.set_yscale("log")
    # Plain numbers on the log axis, 1-2-5 across the whole range of the points and the bound.
    values = [v / 60 for line in lines for _, v in line["points"] if v > 0] + [bound_min]
    ax.yaxis.set_major_locator(FixedLocator(log_ticks_125(min(values) / 1.05, max(values) * 1.05)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    # A cluster has a whole number of GPUs.
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("GPUs in the cluster")
    what = "average JCT" if data["kind"] == "avg_jct" else "average queuing"
    ax.set_ylabel(what + " (min)")
    title = f"GPUs needed for {what} \u2264 {bound_min:.1f} min"
    if data["input"]:
        title += f"\n{data['input']}"
    fig.suptitle(title, fontsize="small")
    _legend_above(ax, ncol=2)


DRAW = {
    "fig07_jct_cdf": draw_jct_cdf,
    "fig08a_srtf_gantt": draw_srtf_gantt,
    "fig08b_srtf_memory": draw_srtf_memory,
    "fig09_fair_throughput": draw_fair_throughput,
    "fig10a_inference_gpus": draw_inference_gpus,
    "fig10b_inference_latency": draw_inference_latency,
    "fig11_hyperparam_makespan": draw_hyperparam_makespan,
    "fidelity_jct": draw_fidelity_jct,
    "gpus_needed": draw_gpus_needed,
}


# ---------------------------------------------------------------------------------------------

def parse_only(text):
    """--only takes experiment names and/or figure names; returns the figures to draw."""
    wanted = []
    unknown = []
    for name in (n.strip() for n in text.split(",")):
        if not name:
            continue
        if name in EXPERIMENTS:
            wanted.extend(EXPERIMENTS[name])
        elif name in FIGURES:
            wanted.append(name)
        else:
            unknown.append(name)
    if unknown or not wanted:
        what = ", ".join(unknown) if unknown else "(empty)"
        raise BadInput(f"--only: unknown name {what} (valid: {', '.join(EXPERIMENTS)}; "
                       f"or a figure: {', '.join(FIGURES)})")
    return set(wanted)


def main(argv):
    parser = argparse.ArgumentParser(
        prog="make_figures.py",
        description="Draw the Salus paper's figures from the JSON that salus-experiment writes.")
    parser.add_argument("--in", dest="indir", required=True, metavar="DIR",
                        help="folder holding <experiment>.json files")
    parser.add_argument("--out", dest="outdir", required=True, metavar="DIR",
                        help="folder to write <figure>.png and <figure>.pdf into")
    parser.add_argument("--only", metavar="NAME,...",
                        help="experiments or figures to draw (default: all): "
                             + ", ".join(EXPERIMENTS))
    args = parser.parse_args(argv)

    try:
        wanted = parse_only(args.only) if args.only is not None else set(FIGURES)
    except BadInput as e:
        print(f"make_figures.py: {e}", file=sys.stderr)
        return 2

    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError:
        print(MATPLOTLIB_MISSING, file=sys.stderr)
        return 3

    if not os.path.isdir(args.indir):
        print(f"make_figures.py: --in {args.indir}: not a folder", file=sys.stderr)
        return 2

    # Load and check every requested experiment before drawing anything.
    loaded, absent, errors = {}, [], []
    for experiment, figures in EXPERIMENTS.items():
        if not wanted.intersection(figures):
            continue
        file = os.path.join(args.indir, experiment + ".json")
        if not os.path.exists(file):
            absent.append(experiment)
            continue
        try:
            loaded[experiment] = LOADERS[experiment](read_json(file, experiment))
        except BadInput as e:
            errors.append(str(e))
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        return 2
    if absent:
        print(f"absent from {args.indir}: "
              + ", ".join(f"{name}.json ({', '.join(f for f in EXPERIMENTS[name] if f in wanted)})"
                          for name in absent))
    if not loaded:
        print(f"make_figures.py: {args.indir}: no experiment JSON to plot (looked for "
              + ", ".join(f"{name}.json" for name in EXPERIMENTS) + ")", file=sys.stderr)
        return 2

    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        print(f"make_figures.py: --out {args.outdir}: {e}", file=sys.stderr)
        return 1
    _style(matplotlib)
    for experiment, figures in EXPERIMENTS.items():
        if experiment not in loaded:
            continue
        for name in figures:
            if name not in wanted:
                continue
            fig = Figure(figsize=figure_size(name, loaded[experiment]), dpi=DPI,
                         layout="constrained")
            FigureCanvasAgg(fig)
            DRAW[name](fig, loaded[experiment])
            _fit_in_figure(fig)
            base = os.path.join(args.outdir, name)
            try:
                save_figure(fig, base + ".png", dpi=DPI, metadata=PNG_METADATA)
                save_figure(fig, base + ".pdf", metadata=PDF_METADATA)
            except OSError as e:
                print(f"make_figures.py: {base}: {e}", file=sys.stderr)
                return 1
            print(f"wrote {base}.png, .pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
