#!/usr/bin/python3
"""Figures of any salus-sim or salus-run summary (the JSON written by --summary-json or --out).

    /usr/bin/python3 plots/plot_run.py SUMMARY.json --out DIR [--policy P,...] [--log-x auto|on|off]
        [--gpu-range A-B] [--time-range FROM-TO] [--lane-view auto|bars|aggregate]

Writes to DIR, each as .png (200 dpi) and .pdf:
  run_jct_cdf        the CDF of job completion times, one line per policy; the time axis is
                     logarithmic when the times are heavy-tailed (--log-x auto: some policy's
                     median lies in the first twentieth of a linear axis), or as --log-x says;
  run_queuing_cdf    the same for queuing delays (arrival to first iteration); on a log axis the
                     jobs that waited 0 s are drawn at a tick labelled 0, left of the others;
  run_policies       the policies side by side: average JCT, 95th-percentile JCT, average
                     queuing and makespan, one bar per policy, each labelled with its value;
  run_gpus_busy      GPUs busy over time, one panel per policy, only when the results carry a
                     "gpus_busy" series ([[t_s, busy], ...] or {"t_s": [...], "busy": [...]});
  run_gpu_lanes_<policy>  a cluster run (results[].cluster.job_gpus, or a per-job "gpu"): with the
                     per-GPU <policy>_timeline.csv beside the summary (salus-sim --out DIR on
                     several GPUs: a gpu column), the lanes of every GPU, a row per lane (lanes
                     alive at once on rows of their own), each run a bar and each rotation a
                     light bar; without it every job from start to finish on every GPU it holds,
                     a GPU's jobs held at the same time on separate rows; past 300 jobs or 80
                     rows in view (--lane-view auto) an aggregate instead, the title saying why:
                     per GPU, the mean number of jobs held in each of 240 time bins, a heat strip;
  run_timeline_<policy>   when <policy>_timeline.csv lies beside the summary and has rows (salus-sim
                     --out DIR): one row per job by first start, each run a solid bar,
                     each rotation it took part in (FAIR's, LAS's) a light bar over its span; at
                     most 100 jobs, the first by first start, the y label saying so (a sample).
Times are drawn in the unit that fits (s, min or h), or on a log axis with ticks at 1 ms, 1 s,
1 min, 1 h, 1 d, 100 d. --gpu-range and --time-range narrow the lane and timeline figures.
plots/README.md describes each figure and option.

Bad input is `FILE: what is wrong` on stderr (the key path named) and exit status 2, with no
figure written; a bad option is exit 2 too; without matplotlib the script says so and exits 3.
The same JSON gives byte-identical files (the style and metadata of make_figures.py).
"""

import argparse
import csv
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_figures as mf  # noqa: E402  (the shared style, colours and checked JSON access)
from atomic_file import save_figure  # noqa: E402  (every file written is renamed into place)

MATPLOTLIB_MISSING = ("plot_run.py: matplotlib not found: install it with "
                      "'apt-get install -y python3-matplotlib' and run with /usr/bin/python3")

# The paper's four keep make_figures.py's colours; the others get the rest of Okabe-Ito.
COLOUR = dict(mf.POLICY_COLOUR, las="#E69F00", priority="#56B4E9")
LINESTYLE = dict(mf.POLICY_LINESTYLE, las=(0, (3, 1, 1, 1)), priority=(0, (5, 2)))
EXTRA_COLOURS = ["#F0E442", "#000000", "#999999"]
SIZE_IN = (3.5, 2.6)

# A job's colour in the lane figure says how many GPUs it holds (Paul Tol's bright), the same
# in every figure, so a gang job is seen on each of its GPUs; other counts are grey.
GPU_COUNT_COLOURS = {1: "#4477AA", 2: "#CCBB44", 3: "#66CCEE", 4: "#EE6677", 8: "#AA3377", 16: "#228833"}
OTHER_COUNT_COLOUR = "#BBBBBB"

# --log-x auto: a log axis when some policy's median lies in the first 1/HEAVY_TAIL of a linear
# axis (which then shows that half of the jobs as a vertical line at its left edge).
HEAVY_TAIL = 20.0
# --lane-view auto: bars while at most this many jobs and rows are in view, else the aggregate.
BARS_MAX_JOBS = 300
BARS_MAX_ROWS = 80
AGGREGATE_BINS = 240
# The timeline figure's sample: at most this many jobs, the first by first start.
TIMELINE_MAX_JOBS = 100

# Ticks of a log time axis, in seconds; the first of each unit is labelled where all would crowd.
LOG_TICKS = [(1e-3, "1 ms"), (1e-2, "10 ms"), (0.1, "100 ms"), (1.0, "1 s"), (10.0, "10 s"),
             (60.0, "1 min"), (600.0, "10 min"), (3600.0, "1 h"), (36000.0, "10 h"),
             (86400.0, "1 d"), (864000.0, "10 d"), (8640000.0, "100 d"), (86400000.0, "1000 d")]
LOG_TICKS_MAJOR = {"1 ms", "1 s", "1 min", "1 h", "1 d", "100 d"}


class BadOption(Exception):
    """A command-line option is wrong; the message is complete."""


def label_of(policy):
    return mf.POLICY_LABEL.get(policy, policy.upper())


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise mf.BadInput(f"{path}: cannot read: {e}")
    try:
        value = json.loads(text, parse_constant=mf._reject_constant)
    except (ValueError, json.JSONDecodeError) as e:
        line = getattr(e, "lineno", 1)
        col = getattr(e, "colno", 1)
        raise mf.BadInput(f"{path}:{line}:{col}: invalid JSON: {getattr(e, 'msg', e)}")
    root = mf.Node(path, value)
    runs = []
    for r in root["results"].list(min_len=1):
        policy = r["policy"].string()
        jobs = []
        # A cluster run (salus-sim --gpus N) carries its GPU figures in "cluster": the GPUs busy
        # series and, per job in trace order, the GPUs it ran on (a gang job's every GPU).
        cluster = r.get("cluster")
        job_gpus = cluster["job_gpus"].list() if cluster is not None and cluster.get("job_gpus") is not None else None
        for k, j in enumerate(r["jobs"].list()):
            status = j["status"].string()
            job = {"id": str(j["id"].value), "status": status, "arrival": j["arrival_s"].num(lo=0)}
            if status == "done":
                job["jct"] = j["jct_s"].num(lo=0)
                job["queuing"] = j["queuing_s"].num(lo=0)
                job["start"] = j["start_s"].num(lo=0)
                job["finish"] = j["finish_s"].num(lo=0)
                if job["finish"] < job["start"]:
                    j["finish_s"].fail(f"{job['finish']:g} is before start_s {job['start']:g}")
                gpu = j.get("gpu")
                if gpu is not None:
                    job["gpus"] = [gpu.integer(lo=0)]
                elif job_gpus is not None and k < len(job_gpus):
                    gpus = [g.integer(lo=0) for g in job_gpus[k].list()]
                    if gpus:
                        job["gpus"] = gpus
            jobs.append(job)
        busy = None
        series = r.get("gpus_busy")
        if series is None and cluster is not None:
            series = cluster.get("gpus_busy")
        if series is not None:
            if isinstance(series.value, dict):
                ts = series["t_s"].numbers(lo=0)
                counts = series["busy"].numbers(lo=0)
                if len(ts) != len(counts):
                    series.fail(f"t_s has {len(ts)} values but busy has {len(counts)}")
                busy = list(zip(ts, counts))
            else:
                busy = []
                for point in series.list():
                    pair = point.numbers(lo=0)
                    if len(pair) != 2:
                        point.fail(f"expected [t_s, busy], got {len(pair)} numbers")
                    busy.append((pair[0], pair[1]))
            mf._non_decreasing(series, [t for t, _ in busy], "times")
        stats = {}
        for key in ("avg_jct_s", "p95_jct_s", "avg_queuing_s", "makespan_s"):
            node = r.get(key)
            if node is not None:
                stats[key] = node.num(lo=0)
        runs.append({"policy": policy, "jobs": jobs, "busy": busy, "stats": stats})
    gpus = None
    top = root.get("cluster")
    if top is not None and top.get("gpus") is not None:
        gpus = top["gpus"].integer(lo=1)
    trace = root.get("trace")
    return {"tool": root.get("tool").value if root.get("tool") is not None else "", "runs": runs,
            "gpus": gpus, "trace": os.path.basename(str(trace.value)) if trace is not None else None}


TIMELINE_COLUMNS = ["lane", "job_id", "start_s", "end_s", "iterations", "switch_s", "rotation"]
# A cluster of several GPUs writes the GPU of each row first (salus-sim --out, docs/outputs.md).
CLUSTER_TIMELINE_COLUMNS = ["gpu"] + TIMELINE_COLUMNS


def read_timeline(path, visit):
    """Checks every row of a <policy>_timeline.csv (one GPU's, or a cluster's with a gpu column)
    and calls visit(job_id, start_s, end_s, iterations, rotation or 0, gpu or None, lane) for each."""
    def number(text, line, column, integer=False):
        try:
            v = int(text) if integer else float(text)
        except ValueError:
            raise mf.BadInput(f"{path}:{line}: {column}: expected {'an integer' if integer else 'a number'}, got {text!r}")
        if v < 0 or (not integer and not math.isfinite(v)):
            raise mf.BadInput(f"{path}:{line}: {column}: expected a number >= 0, got {text!r}")
        return v
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header not in (TIMELINE_COLUMNS, CLUSTER_TIMELINE_COLUMNS):
                raise mf.BadInput(f"{path}:1: expected the header {','.join(TIMELINE_COLUMNS)} (or on a cluster "
                                  f"gpu,{','.join(TIMELINE_COLUMNS)}), got {','.join(header) if header else 'nothing'}")
            o = len(header) - len(TIMELINE_COLUMNS)  # 1 with a gpu column
            for cells in reader:
                line = reader.line_num
                if len(cells) != len(header):
                    raise mf.BadInput(f"{path}:{line}: expected {len(header)} fields, got {len(cells)}")
                gpu = number(cells[0], line, "gpu", integer=True) if o else None
                lane = number(cells[o], line, "lane", integer=True)
                start = number(cells[o + 2], line, "start_s")
                end = number(cells[o + 3], line, "end_s")
                if end < start:
                    raise mf.BadInput(f"{path}:{line}: end_s {cells[o + 3]} is before start_s {cells[o + 2]}")
                rotation = number(cells[o + 6], line, "rotation", integer=True) if cells[o + 6] else 0
                visit(cells[o + 1], start, end, number(cells[o + 4], line, "iterations", integer=True), rotation,
                      gpu, lane)
    except (OSError, UnicodeDecodeError) as e:
        raise mf.BadInput(f"{path}: cannot read: {e}")


def load_timeline(path, time_range):
    """The timeline figure's data: the rows of at most TIMELINE_MAX_JOBS jobs, the first by first
    start among those with a row inside time_range (all rows of the file are checked), their
    order, the number of jobs in the window, and the iterations run in all and in rotations.
    Two passes over the file, so that a long run's timeline (millions of rows) is never held."""
    first = {}
    totals = [0, 0]
    per_gpu = [False]

    def scan(job, start, end, iterations, rotation, gpu, lane):
        totals[0] += iterations
        if rotation:
            totals[1] += iterations
        per_gpu[0] = gpu is not None
        if time_range and (end < time_range[0] or start > time_range[1]):
            return
        if job not in first or start < first[job]:
            first[job] = start
    read_timeline(path, scan)
    order = sorted(first, key=lambda j: (first[j], j))
    keep = set(order[:TIMELINE_MAX_JOBS])
    rows = []
    # The rows were checked by the first pass; this one converts only the kept jobs' rows. A
    # rotation is named by its GPU and number (numbers are per GPU).
    o = 1 if per_gpu[0] else 0
    wanted = set()
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        next(reader, None)
        for cells in reader:
            if cells[o + 1] in keep:
                start, end = float(cells[o + 2]), float(cells[o + 3])
                if not (time_range and (end < time_range[0] or start > time_range[1])):
                    rotation = (cells[0] if o else "", int(cells[o + 6])) if cells[o + 6] else None
                    if rotation:
                        wanted.add(rotation)
                    rows.append((cells[o + 1], start, end, int(cells[o + 4]), rotation, int(cells[o])))
    # How many jobs took turns in each rotation drawn (a third pass, only when there is one).
    members = {}
    if wanted:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            next(reader, None)
            for cells in reader:
                if cells[o + 6]:
                    key = (cells[0] if o else "", int(cells[o + 6]))
                    if key in wanted:
                        members.setdefault(key, []).append(cells[o + 1])
    return {"rows": rows, "order": order[:TIMELINE_MAX_JOBS], "jobs": len(order), "members": members,
            "iterations": totals[0], "in_rotations": totals[1], "path": path, "per_gpu": per_gpu[0]}


def load_lane_runs(path, ids, gpu_range, time_range):
    """From a cluster's per-GPU timeline (checked by load_timeline), the rows of the jobs `ids`
    (job id -> GPUs it holds) inside the ranges: (gpu, lane, job id, start, end, rotation, GPUs
    held). Only these rows are kept: the lane figure draws at most BARS_MAX_JOBS jobs."""
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        next(reader, None)
        for cells in reader:
            count = ids.get(cells[2])
            if count is None:
                continue
            gpu = int(cells[0])
            if gpu_range and not gpu_range[0] <= gpu <= gpu_range[1]:
                continue
            start, end = float(cells[3]), float(cells[4])
            if time_range and (end < time_range[0] or start > time_range[1]):
                continue
            out.append((gpu, int(cells[1]), cells[2], start, end, int(cells[7]) if cells[7] else 0, count))
    return out


# ---------------------------------------------------------------------------------------------
# Options

TIME_UNITS = {"": 1.0, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_gpu_range(text):
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not m:
        raise BadOption(f"--gpu-range {text}: expected FIRST-LAST or one GPU, e.g. 0-7 or 3")
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) is not None else first
    if last < first:
        raise BadOption(f"--gpu-range {text}: the last GPU is before the first")
    return first, last


def parse_time_range(text):
    number = r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(s|min|h|d)?\s*"
    m = re.fullmatch(number + "-" + number, text)
    if not m:
        raise BadOption(f"--time-range {text}: expected FROM-TO in s, or with a unit (s, min, h, d), "
                        "e.g. 0-3600 or 100h-200h")
    lo = float(m.group(1)) * TIME_UNITS[m.group(2) or ""]
    hi = float(m.group(3)) * TIME_UNITS[m.group(4) or ""]
    if hi <= lo:
        raise BadOption(f"--time-range {text}: TO must be after FROM")
    return lo, hi


def select_policies(data, text, path):
    names = [r["policy"] for r in data["runs"]]
    wanted = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in names]
    if unknown or not wanted:
        raise BadOption(f"--policy {text}: {', '.join(unknown) if unknown else '(empty)'} not in {path} "
                        f"(valid: {', '.join(names)})")
    data["runs"] = [r for r in data["runs"] if r["policy"] in wanted]


# ---------------------------------------------------------------------------------------------
# Helpers shared by the figures

def time_unit(seconds):
    return ("s", 1.0) if seconds < 100 else ("min", 60.0) if seconds < 6000 else ("h", 3600.0)


def style_of(policy, index):
    colour = COLOUR.get(policy, EXTRA_COLOURS[index % len(EXTRA_COLOURS)])
    return colour, LINESTYLE.get(policy, "-")


def median(values):
    v = sorted(values)
    n = len(v)
    return (v[(n - 1) // 2] + v[n // 2]) / 2


def heavy_tailed(values):
    """True when, on a linear axis to the largest value, some list's median sits in the first
    1/HEAVY_TAIL of the axis."""
    top = max((max(v) for v in values if v), default=0.0)
    return top > 0 and any(median(v) * HEAVY_TAIL < top for v in values if v)


# Between the decades, where fewer than three of LOG_TICKS fall on an axis.
LOG_TICKS_FINE = [(2e-3, "2 ms"), (5e-3, "5 ms"), (2e-2, "20 ms"), (5e-2, "50 ms"), (0.2, "200 ms"),
                  (0.5, "500 ms"), (2.0, "2 s"), (5.0, "5 s"), (20.0, "20 s"), (30.0, "30 s"), (120.0, "2 min"),
                  (300.0, "5 min"), (1200.0, "20 min"), (1800.0, "30 min"), (7200.0, "2 h"), (18000.0, "5 h"),
                  (43200.0, "12 h"), (172800.0, "2 d"), (432000.0, "5 d"), (1728000.0, "20 d"),
                  (4320000.0, "50 d")]


def log_time_ticks(lo, hi):
    """(positions, labels, unlabelled positions) for a log time axis from lo to hi seconds; at
    least three labelled where the axis spans less than a few decades."""
    inside = [(t, name) for t, name in LOG_TICKS if lo <= t <= hi]
    if len(inside) < 3:
        # A fine tick within a factor 1.6 of one already taken (20 and 30 min) would overlap its
        # label: left out.
        for t, name in LOG_TICKS_FINE:
            if lo <= t <= hi and all(max(t, u) / min(t, u) >= 1.6 for u, _ in inside):
                inside.append((t, name))
        inside.sort()
    if len(inside) > 7:
        return ([t for t, n in inside if n in LOG_TICKS_MAJOR], [n for _, n in inside if n in LOG_TICKS_MAJOR],
                [t for t, n in inside if n not in LOG_TICKS_MAJOR])
    return [t for t, _ in inside], [n for _, n in inside], []


def legend_rows(ax, **extra):
    """The legend above the axes: one row of up to four, else two rows read across in policy
    order (matplotlib fills a legend's columns first, hence the reordering)."""
    handles, labels = ax.get_legend_handles_labels()
    n = len(handles)
    if n <= 4:
        return mf._legend_above(ax, max(n, 1), handles=handles, labels=labels, **extra)
    ncol = math.ceil(n / 2)
    order = [r * ncol + c for c in range(ncol) for r in range(2) if r * ncol + c < n]
    return mf._legend_above(ax, ncol, handles=[handles[k] for k in order], labels=[labels[k] for k in order], **extra)


def offset_spines(ax):
    """Spines set off the data by a few points, so that a curve along an axis stays visible."""
    ax.spines["left"].set_position(("outward", 3))
    ax.spines["bottom"].set_position(("outward", 3))


def mean_busy(busy, end):
    """Time-weighted mean of a step series up to `end`."""
    total = 0.0
    for (t, b), (t2, _) in zip(busy, busy[1:] + [(end, 0)]):
        total += b * max(0.0, min(t2, end) - t)
    return total / end if end > 0 else 0.0


def source_line(data):
    parts = []
    if data["trace"]:
        parts.append(data["trace"])
    if data["gpus"]:
        parts.append(f"{data['gpus']} GPUs")
    jobs = max((len(r["jobs"]) for r in data["runs"]), default=0)
    parts.append(f"{jobs:,} jobs")
    line = ", ".join(parts)
    return line if len(line) <= 50 else parts[0] + "\n" + ", ".join(parts[1:])


# ---------------------------------------------------------------------------------------------
# CDFs

def draw_cdf(fig, data, key, what, log_x):
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator
    ax = fig.subplots()
    values = [[j[key] for j in r["jobs"] if j["status"] == "done"] for r in data["runs"]]
    longest = max((max(v) for v in values if v), default=0.0)
    log = longest > 0 and (log_x == "on" or (log_x == "auto" and heavy_tailed(values)))
    if log:
        positive = [x for v in values for x in v if x > 0]
        lo = min(positive)
        has_zero = any(x <= 0 for v in values for x in v)
        # Zero has no place on a log axis: those jobs are drawn a decade below the least
        # positive value, at a tick labelled 0.
        zero_at = 10 ** (math.floor(math.log10(lo)) - 1) if has_zero else lo
        per = 1.0
        left = zero_at / 10 ** 0.25
        right = longest * 10 ** 0.1
    else:
        unit, per = time_unit(longest)
        right = longest / per * 1.02 if longest > 0 else 1.0
        left = -0.015 * right  # the rise at 0 stays clear of the axis
    # Policies whose values are the same (PRIORITY and FIFO on a trace without priorities) are one
    # curve, labelled with both: drawn twice, one would hide the other.
    groups = []
    for i, (r, v) in enumerate(zip(data["runs"], values)):
        if not v:
            continue
        key = sorted(v)
        for g in groups:
            if g["key"] == key:
                g["policies"].append(r["policy"])
                break
        else:
            groups.append({"key": key, "policies": [r["policy"]], "index": i})
    # Each curve drawn thinner than the one before it, so one lying over another leaves the one
    # beneath showing at both its edges.
    widths = [2.2 - 1.0 * k / max(len(groups) - 1, 1) for k in range(len(groups))]
    for g, lw in zip(groups, widths):
        xs = sorted((x if not log or x > 0 else zero_at) / per for x in g["key"])
        ys = [(k + 1) / len(xs) for k in range(len(xs))]
        colour, ls = style_of(g["policies"][0], g["index"])
        label = " = ".join(label_of(p) for p in g["policies"])
        ax.step([left] + [xs[0]] + xs, [0.0, 0.0] + ys, where="post", label=label,
                color=colour, linestyle=ls, linewidth=lw, clip_on=False)
    ax.set_xlim(left, right)
    ax.set_ylim(0, 1.0)
    if log:
        ax.set_xscale("log")
        ticks, labels, minor = log_time_ticks(lo / 10 ** 0.5 if has_zero else left, right)
        if has_zero:
            ticks, labels = [zero_at] + ticks, ["0"] + labels
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.set_xticklabels(labels)
        ax.xaxis.set_minor_locator(FixedLocator(minor) if minor else NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"{what} (log scale)")
    else:
        ax.set_xlabel(f"{what} ({unit})")
    ax.set_ylabel("fraction of finished jobs")
    if longest == 0 and any(values):
        ax.text(0.5, 0.5, f"every finished job: {what} 0 s", transform=ax.transAxes, ha="center", va="center")
    ax.grid(True, linewidth=0.3, color="#dddddd")
    offset_spines(ax)
    legend_rows(ax, handlelength=2.4)
    return log


# ---------------------------------------------------------------------------------------------
# Policies side by side

COMPARISON = [("avg_jct_s", "average JCT"), ("p95_jct_s", "95th-percentile JCT"),
              ("avg_queuing_s", "average queuing"), ("makespan_s", "makespan")]


def value_text(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def draw_policies(fig, data):
    runs = data["runs"]
    panels = [(key, title) for key, title in COMPARISON if all(key in r["stats"] for r in runs)]
    rows = (len(panels) + 1) // 2
    axes = fig.subplots(rows, 2, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_visible(False)
            continue
        key, title = panels[k]
        seconds = [r["stats"][key] for r in runs]
        unit, per = time_unit(max(seconds))
        for i, (r, s) in enumerate(zip(runs, seconds)):
            colour, _ = style_of(r["policy"], i)
            ax.bar(i, s / per, width=0.7, color=colour)
            ax.text(i, s / per, value_text(s / per), ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([label_of(r["policy"]) for r in runs], fontsize=6 if len(runs) > 4 else 7,
                           rotation=45 if len(runs) > 4 else 0)
        ax.set_xlim(-0.6, len(runs) - 0.4)
        ax.set_ylim(0, max(seconds) / per * 1.18 if max(seconds) > 0 else 1)
        ax.set_title(f"{title} ({unit})")
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, axis="y", linewidth=0.3, color="#dddddd")
        ax.set_axisbelow(True)
    line = source_line(data)
    short = [f"{label_of(r['policy'])} {sum(j['status'] == 'done' for j in r['jobs'])}/{len(r['jobs'])}"
             for r in runs if any(j["status"] != "done" for j in r["jobs"])]
    if short:
        line += "\njobs done: " + ", ".join(short)
    fig.suptitle(line, fontsize="small")


# ---------------------------------------------------------------------------------------------
# GPUs busy over time

def draw_busy(fig, data):
    runs = [r for r in data["runs"] if r["busy"]]
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]

    def end_of(r):
        return max([t for t, _ in r["busy"]] + [j["finish"] for j in r["jobs"] if j["status"] == "done"])
    end = max(end_of(r) for r in runs)
    unit, per = time_unit(end)
    top = data["gpus"] or max(b for r in runs for _, b in r["busy"])
    for ax, r in zip(axes, runs):
        colour, _ = style_of(r["policy"], data["runs"].index(r))
        ts = [t / per for t, _ in r["busy"]] + [end_of(r) / per]
        bs = [b for _, b in r["busy"]]
        bs = bs + [bs[-1]]
        ax.fill_between(ts, bs, step="post", color=colour, alpha=0.3, linewidth=0)
        ax.step(ts, bs, where="post", color=colour, linewidth=0.9)
        ax.set_ylim(0, top * 1.05)
        ax.set_xlim(0, end / per if end > 0 else 1)
        ax.set_yticks(sorted({0, round(top / 2), int(top)}))
        ax.grid(True, linewidth=0.3, color="#dddddd")
        # Over the run's own span, from 0 to its last finish.
        ax.set_title(f"{label_of(r['policy'])}: mean {mean_busy(r['busy'], end_of(r)):.1f} GPUs busy",
                     loc="left", fontsize=7, pad=2)
        ax.tick_params(axis="y", labelsize=7)
    axes[-1].set_xlabel(f"time ({unit})")
    fig.supylabel(f"GPUs with a job (of {top:g})", fontsize=8)
    fig.suptitle(source_line(data), fontsize="small")


def busy_height(data):
    n = sum(1 for r in data["runs"] if r["busy"])
    return max(SIZE_IN[1], round((0.75 + 0.7 * n) * 20) / 20)


# ---------------------------------------------------------------------------------------------
# Jobs on each GPU

def lane_jobs(run, gpu_range, time_range):
    """(job index, gpu, start, finish, gpu count) for every GPU each finished job held, inside the
    ranges; a gang job gives one entry per GPU."""
    out = []
    for k, j in enumerate(run["jobs"]):
        if "gpus" not in j:
            continue
        if time_range and (j["finish"] < time_range[0] or j["start"] > time_range[1]):
            continue
        for g in j["gpus"]:
            if gpu_range and not gpu_range[0] <= g <= gpu_range[1]:
                continue
            out.append((k, g, j["start"], j["finish"], len(j["gpus"])))
    return out


def assign_rows(entries):
    """Per GPU, each entry a row such that the entries of a row never overlap in time (a job
    holds [start, finish)): the first free row, in order of start. Returns {gpu: rows used} and
    the row of each entry, in the order given."""
    rows_used = {}
    row_of = [0] * len(entries)
    by_gpu = {}
    for n, (k, g, start, finish, _) in enumerate(entries):
        by_gpu.setdefault(g, []).append((start, finish, k, n))
    for g, items in by_gpu.items():
        ends = []  # per row, when its last job lets go
        for start, finish, _, n in sorted(items):
            for r, end in enumerate(ends):
                if end <= start:
                    ends[r] = finish
                    row_of[n] = r
                    break
            else:
                row_of[n] = len(ends)
                ends.append(finish)
        rows_used[g] = max(1, len(ends))
    return rows_used, row_of


def assign_lane_rows(runs):
    """Per GPU, each lane a row such that lanes that live at the same time (from their first run
    to their last) never share one: the first free row, in order of first run. Lane ids are per
    GPU and never reused, so a GPU gets as many rows as it ever has lanes at once. Returns
    {gpu: rows used} and {(gpu, lane): row}."""
    life = {}
    for gpu, lane, _, start, end, _, _ in runs:
        span = life.get((gpu, lane))
        life[(gpu, lane)] = (min(span[0], start), max(span[1], end)) if span else (start, end)
    rows_used, row_of = {}, {}
    by_gpu = {}
    for (gpu, lane), (start, end) in life.items():
        by_gpu.setdefault(gpu, []).append((start, lane, end))
    for gpu, lanes in by_gpu.items():
        ends = []
        for start, lane, end in sorted(lanes):
            for r, last in enumerate(ends):
                if last <= start:
                    ends[r] = end
                    row_of[(gpu, lane)] = r
                    break
            else:
                row_of[(gpu, lane)] = len(ends)
                ends.append(end)
        rows_used[gpu] = max(1, len(ends))
    return rows_used, row_of


def choose_view(view, entries, rows_used):
    if view != "auto":
        return view
    jobs = len({e[0] for e in entries})
    return "bars" if jobs <= BARS_MAX_JOBS and sum(rows_used.values()) <= BARS_MAX_ROWS else "aggregate"


def gpu_list(entries, gpu_range, gpus):
    """The GPUs drawn: the whole range (or the cluster), idle ones included."""
    if gpu_range:
        return list(range(gpu_range[0], gpu_range[1] + 1))
    if gpus:
        return list(range(gpus))
    return sorted({e[1] for e in entries})


def gpu_tick_step(n):
    """A round step between labelled GPUs, so that at most about 24 are labelled."""
    for step in (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 1000):
        if n / step <= 24:
            return step
    return math.ceil(n / 24)


def gpu_row_bases(gpus, rows_used):
    """GPU g's rows are base[g] .. base[g] + rows_used[g] - 1, a half-row gap between GPUs; and the
    figure's height in rows."""
    base, y = {}, 0.0
    for g in gpus:
        base[g] = y
        y += rows_used.get(g, 1) + 0.5
    return base, y - 0.5


def gpu_rows_axes(ax, gpus, base, rows_used, height, xlim, unit, ylabel):
    """The axes of a figure with rows per GPU (GPU g's rows from base[g], rows_used[g] of them):
    a rule between GPUs, a tick per GPU (thinned past many), time on x in `unit`."""
    for g in gpus[1:]:
        ax.axhline(base[g] - 0.25, color="#999999", linewidth=0.4)
    step = gpu_tick_step(len(gpus))
    shown = [g for g in gpus if g % step == 0] if step > 1 else gpus
    ax.set_yticks([base[g] + rows_used.get(g, 1) / 2 for g in shown])
    ax.set_yticklabels([str(g) for g in shown])
    ax.tick_params(axis="y", length=0)
    ax.set_ylim(height, 0)
    ax.set_xlim(*xlim)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)


def draw_lane_bars(fig, run, data, entries, rows_used, row_of, gpu_range, window):
    ax = fig.subplots()
    gpus = gpu_list(entries, gpu_range, data["gpus"])
    base, height = gpu_row_bases(gpus, rows_used)
    lo, hi = window
    unit, per = time_unit(hi)
    counts = sorted({e[4] for e in entries})
    colour = {c: GPU_COUNT_COLOURS.get(c, OTHER_COUNT_COLOUR) for c in counts}
    spans = {}
    for (k, g, start, finish, count), r in zip(entries, row_of):
        spans.setdefault((base[g] + r, count), []).append((start / per, (finish - start) / per))
    for (row, count), xs in sorted(spans.items()):
        ax.broken_barh(xs, (row + 0.1, 0.8), facecolors=colour[count], edgecolor="white", linewidth=0.3)
    gpu_rows_axes(ax, gpus, base, rows_used, height, (lo / per, hi / per), unit, "GPU (a row per job held at once)")
    jobs = len({e[0] for e in entries})
    fig.suptitle(f"{label_of(run['policy'])}: each job from start to finish on each GPU it holds "
                 f"({jobs:,} jobs)", fontsize=7)
    count_legend(ax, counts)


def count_legend(ax, counts):
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=GPU_COUNT_COLOURS[c], label=f"{c} GPU{'s' if c > 1 else ''}") for c in counts
               if c in GPU_COUNT_COLOURS]
    others = [str(c) for c in counts if c not in GPU_COUNT_COLOURS]
    if others:
        handles.append(Patch(facecolor=OTHER_COUNT_COLOUR, label=f"{', '.join(others)} GPUs"))
    mf._legend_above(ax, min(len(handles), 4), handles=handles, labels=[h.get_label() for h in handles])


def draw_lane_runs(fig, run, data, runs, rows_used, row_of, gpu_range, window, jobs):
    """The lanes of every GPU from the per-GPU timeline: a row per lane (assign_lane_rows), each
    run a solid bar and each rotation (a plan: FAIR's, LAS's turns in one lane) its jobs' turns
    over its span, light, each job coloured by how many GPUs it holds."""
    ax = fig.subplots()
    gpus = gpu_list([(0, g) for g in rows_used], gpu_range, data["gpus"])
    base, height = gpu_row_bases(gpus, rows_used)
    lo, hi = window
    unit, per = time_unit(hi)
    # Pieces of one job closer than a tenth of a pixel are one bar (a run cut and resumed).
    gap = (hi - lo) / per / 7000
    solid, light = {}, {}
    rotations = {}
    for gpu, lane, job, start, end, rotation, count in runs:
        row = base[gpu] + row_of[(gpu, lane)]
        if rotation:
            # A rotation's rows share its span: drawn as its turns, each job's in its own colour
            # (its GPU count), so a 1-GPU job taking turns with a gang's replica is seen.
            key = (row, rotation)
            entry = rotations.setdefault(key, {"start": start, "end": end, "jobs": {}})
            entry["jobs"][job] = count
        else:
            solid.setdefault((row, count, job), []).append((start / per, (end - start) / per))
    width_px = fig.get_size_inches()[0] * fig.dpi * 0.8
    min_w = (hi - lo) / per * MIN_BAR_PX / width_px
    for (row, _), r in rotations.items():
        members = sorted(r["jobs"].items())
        s0, w = r["start"] / per, (r["end"] - r["start"]) / per
        for slot, (_, count) in enumerate(members):
            light.setdefault((row, count), []).extend(rotation_turns(s0, w, slot, len(members), min_w))
    colour = lambda c: GPU_COUNT_COLOURS.get(c, OTHER_COUNT_COLOUR)
    for (row, count), xs in sorted(light.items()):
        ax.broken_barh(xs, (row + 0.1, 0.8), facecolors=colour(count), alpha=0.6, linewidth=0)
    # A white edge tells one job's run from the next; on a run a few pixels wide it would be all
    # edge (a white streak that reads as idle time), so narrow runs have none.
    narrow = (hi - lo) / per / 200
    for (row, count, _), xs in sorted(solid.items()):
        spans = merge_spans(xs, gap)
        wide = [x for x in spans if x[1] >= narrow]
        thin = [x for x in spans if x[1] < narrow]
        if wide:
            ax.broken_barh(wide, (row + 0.1, 0.8), facecolors=colour(count), edgecolor="white", linewidth=0.3)
        if thin:
            ax.broken_barh(thin, (row + 0.1, 0.8), facecolors=colour(count), linewidth=0)
    gpu_rows_axes(ax, gpus, base, rows_used, height, (lo / per, hi / per), unit, "GPU (a row per lane)")
    what = "\nruns solid, rotations as their turns (light)" if rotations else ", a bar per run"
    fig.suptitle(f"{label_of(run['policy'])}: each GPU's lanes ({jobs:,} jobs){what}", fontsize=7)
    count_legend(ax, sorted({r[6] for r in runs}))


def held_per_bin(entries, gpus, lo, hi, bins):
    """Per GPU (row) and time bin, the mean number of jobs held: the integral of the count of
    jobs holding the GPU over the bin, divided by its width."""
    import numpy as np
    edges = np.linspace(lo, hi, bins + 1)
    row = {g: i for i, g in enumerate(gpus)}
    grid = np.zeros((len(gpus), bins))
    events = {}
    for _, g, start, finish, _ in entries:
        if g in row and finish > start:
            events.setdefault(g, []).extend([(start, 1), (finish, -1)])
    for g, ev in events.items():
        ev.sort()
        times = np.array([t for t, _ in ev])
        counts = np.cumsum([d for _, d in ev])  # jobs held from times[i] to times[i + 1]
        # F(t) = integral of the count from the first event to t, piecewise linear in t.
        area = np.concatenate([[0.0], np.cumsum(counts[:-1] * np.diff(times))])
        held = np.interp(edges, times, area)
        grid[row[g]] = np.diff(held) / np.diff(edges)
    return grid, edges


def draw_lane_aggregate(fig, run, data, entries, gpu_range, window, why=""):
    import numpy as np
    import matplotlib
    ax = fig.subplots()
    gpus = gpu_list(entries, gpu_range, data["gpus"])
    lo, hi = window
    unit, per = time_unit(hi)
    grid, edges = held_per_bin(entries, gpus, lo, hi, AGGREGATE_BINS)
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("white")
    image = ax.imshow(np.ma.masked_less_equal(grid, 0.0), cmap=cmap, aspect="auto", interpolation="nearest",
                      extent=(lo / per, hi / per, len(gpus) - 0.5, -0.5), vmin=0,
                      vmax=max(1.0, float(grid.max())))
    step = gpu_tick_step(len(gpus))
    shown = [k for k, g in enumerate(gpus) if g % step == 0] if step > 1 else range(len(gpus))
    ax.set_yticks(list(shown))
    ax.set_yticklabels([str(gpus[k]) for k in shown])
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("GPU")
    bar = fig.colorbar(image, ax=ax, location="top", shrink=0.6, aspect=30, pad=0.02)
    bar.set_label("jobs held on the GPU (mean over the bin; white: none)", fontsize=7)
    bar.ax.tick_params(labelsize=7)
    jobs = len({e[0] for e in entries})
    width = (hi - lo) / AGGREGATE_BINS
    wunit, wper = time_unit(width)
    ax.set_title(f"{label_of(run['policy'])}: aggregate of {jobs:,} jobs, {AGGREGATE_BINS} bins of "
                 f"{width / wper:.3g} {wunit}{why}", fontsize=7)


def lanes_size(view, data, entries, rows_used, gpu_range):
    gpus = gpu_list(entries, gpu_range, data["gpus"])
    if view == "bars":
        rows = sum(rows_used.get(g, 1) for g in gpus) + 0.5 * (len(gpus) - 1)
        return SIZE_IN[0], min(9.0, max(SIZE_IN[1], round((1.1 + 0.1 * rows) * 20) / 20))
    return SIZE_IN[0], min(6.0, max(SIZE_IN[1], round((1.3 + 0.07 * len(gpus)) * 20) / 20))


# ---------------------------------------------------------------------------------------------
# One GPU's timeline

def merge_spans(spans, gap):
    """(start, width) spans, sorted, with those less than `gap` apart joined."""
    out = []
    for start, width in sorted(spans):
        if out and start - (out[-1][0] + out[-1][1]) < gap:
            out[-1] = (out[-1][0], max(out[-1][1], start + width - out[-1][0]))
        else:
            out.append((start, width))
    return out


# A bar is at least this many pixels wide, so a job of a second in a run of hours is seen.
MIN_BAR_PX = 2.0
# A rotation is drawn as this many turns at most (each job's 1/n of them, n the rotation's jobs).
ROTATION_TURNS = 24


def rotation_turns(start, width, slot, n, min_w):
    """The pieces of a rotation of `n` jobs the job in `slot` holds: the span cut into turns, the
    job in every n-th (a job of a rotation runs about 1/n of it: FAIR and LAS give equal time)."""
    turns = max(n, min(ROTATION_TURNS * n, int(width / max(min_w, 1e-12))))
    turns -= turns % n
    step = width / turns
    return [(start + k * step, max(step, min_w)) for k in range(slot, turns, n)]


def draw_timeline(fig, run, timeline, time_range):
    from matplotlib.patches import Patch
    ax = fig.subplots()
    rows, order = timeline["rows"], timeline["order"]
    row_of = {j: k for k, j in enumerate(order)}
    sampled = len(order) < timeline["jobs"]
    lo = time_range[0] if time_range else 0.0
    # The x axis spans the jobs drawn: a sample of the first jobs of a long run fills it.
    hi = time_range[1] if time_range else max((end for _, _, end, _, _, _ in rows), default=0.0)
    # A few long jobs would squeeze the rest into the left edge: the axis then ends a little past
    # the 90th percentile of the jobs' last ends, and each job running on past it says until when.
    last_end = {}
    for job, _, end, _, _, _ in rows:
        last_end[job] = max(last_end.get(job, 0.0), end)
    ends = sorted(last_end.values())
    cut = False
    if not time_range and len(ends) >= 10:
        q = ends[int(0.9 * (len(ends) - 1))]
        if q > lo and (q - lo) * 2 < hi - lo:
            hi, cut = lo + (q - lo) * 1.25, True
    unit, per = time_unit(hi)
    width_px = fig.get_size_inches()[0] * fig.dpi * 0.8
    min_w = (hi - lo) / per * MIN_BAR_PX / width_px
    # Every job named: the font follows the row's height (points), never below 3 pt.
    row_pt = fig.get_size_inches()[1] * 72 * 0.8 / max(len(order), 1)
    runs = {j: [] for j in order}
    turns = {j: [] for j in order}
    members = timeline.get("members", {})
    for job, start, end, _, rotation, _ in rows:
        s, w = start / per, (end - start) / per
        if rotation:
            who = sorted(set(members.get(rotation, [job])))
            turns[job].append(rotation_turns(s, w, who.index(job) if job in who else 0, len(who), min_w))
        else:
            runs[job].append((s, w))
    # One colour, the policy's (as in the CDFs); a job is told by its row and its name.
    colour, _ = style_of(run["policy"], 0)
    # Pieces closer than a tenth of a pixel are drawn as one: their edges would leave seams.
    gap = (hi - lo) / per / 7000
    for j in order:
        if runs[j]:
            ax.broken_barh([(s, max(w, min_w)) for s, w in merge_spans(runs[j], gap)], (row_of[j] - 0.4, 0.8),
                           facecolors=colour, linewidth=0)
        for pieces in turns[j]:
            ax.broken_barh(pieces, (row_of[j] - 0.25, 0.5), facecolors=colour, alpha=0.5, linewidth=0)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order, fontsize=max(3.0, min(7.0, 0.75 * row_pt)))
    ax.tick_params(axis="y", length=0, pad=1)
    ax.set_xlim(lo / per, hi / per * 1.02 if hi > 0 else 1)
    ax.set_xlabel(f"time ({unit})" + ("; the axis ends before the longest jobs do" if cut else ""))
    if cut:
        long_unit, long_per = time_unit(max(ends))
        for j in order:
            if last_end.get(j, 0.0) > hi:
                ax.text(hi / per * 1.02, row_of[j], f"\u2192 {last_end[j] / long_per:.1f} {long_unit}", ha="right",
                        va="center", fontsize=max(3.0, min(6.0, 0.75 * row_pt)), color="black",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.8))
    if sampled:
        ax.set_ylabel(f"job: the first {len(order)} of {timeline['jobs']:,} by first start")
    else:
        ax.set_ylabel(f"job ({len(order)}, by first start)")
    iterations = timeline["iterations"]
    title = f"{label_of(run['policy'])}: each job's runs"
    handles = [Patch(facecolor=colour, label="run (iterations in a row)")]
    if timeline["in_rotations"]:
        title += f"; {100.0 * timeline['in_rotations'] / iterations:.0f} % of iterations in rotations"
        handles.append(Patch(facecolor=colour, alpha=0.5, label="rotation: its turns (1 in n, n jobs)"))
    fig.suptitle(title, fontsize=7)
    mf._legend_above(ax, len(handles), handles=handles, labels=[h.get_label() for h in handles], fontsize=5,
                     handlelength=1.2)


def timeline_height(timeline):
    return min(8.0, max(SIZE_IN[1], round((0.9 + 0.15 * len(timeline["order"])) * 20) / 20))


# ---------------------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="plot_run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("summary", help="a salus-sim or salus-run summary JSON")
    parser.add_argument("--out", dest="outdir", required=True, help="directory for the figures")
    parser.add_argument("--policy", metavar="P,...", help="the policies to draw (default: every one in the summary)")
    parser.add_argument("--log-x", choices=["auto", "on", "off"], default="auto",
                        help="log time axis on the CDFs: auto (when heavy-tailed), on, off (default: auto)")
    parser.add_argument("--gpu-range", metavar="A-B", help="GPUs drawn in run_gpu_lanes_* (default: all)")
    parser.add_argument("--time-range", metavar="FROM-TO",
                        help="window of the lane and timeline figures, in s or with a unit: 0-3600, 100h-200h")
    parser.add_argument("--lane-view", choices=["auto", "bars", "aggregate"], default="auto",
                        help=f"run_gpu_lanes_*: bars per job, or the mean jobs held per GPU and time bin "
                             f"(auto: bars up to {BARS_MAX_JOBS} jobs and {BARS_MAX_ROWS} rows)")
    args = parser.parse_args(argv)
    args.gpu_range = parse_gpu_range(args.gpu_range) if args.gpu_range is not None else None
    args.time_range = parse_time_range(args.time_range) if args.time_range is not None else None
    return args


def plan(args):
    """Loads and checks the summary (and timelines beside it); returns the figures to draw as
    (name, size in inches, draw(fig)). Raises mf.BadInput or BadOption."""
    gpu_range, time_range = args.gpu_range, args.time_range
    data = load(args.summary)
    if args.policy is not None:
        select_policies(data, args.policy, args.summary)
    if gpu_range and data["gpus"] and gpu_range[1] >= data["gpus"]:
        raise BadOption(f"--gpu-range {gpu_range[0]}-{gpu_range[1]}: {args.summary} has GPUs 0-{data['gpus'] - 1}")
    timelines = {}
    for r in data["runs"]:
        path = os.path.join(os.path.dirname(os.path.abspath(args.summary)), f"{r['policy']}_timeline.csv")
        if os.path.exists(path):
            timelines[r["policy"]] = load_timeline(path, time_range)
    figures = [("run_jct_cdf", SIZE_IN, lambda fig: draw_cdf(fig, data, "jct", "job completion time", args.log_x)),
               ("run_queuing_cdf", SIZE_IN, lambda fig: draw_cdf(fig, data, "queuing", "queuing delay", args.log_x))]
    if any(r["stats"] for r in data["runs"]):
        figures.append(("run_policies", (SIZE_IN[0], 3.0), lambda fig: draw_policies(fig, data)))
    if any(r["busy"] for r in data["runs"]):
        figures.append(("run_gpus_busy", (SIZE_IN[0], busy_height(data)), lambda fig: draw_busy(fig, data)))
    for r in data["runs"]:
        if not any("gpus" in j for j in r["jobs"]):
            continue
        entries = lane_jobs(r, gpu_range, time_range)
        if not entries:
            continue
        window = time_range or (0.0, max(e[3] for e in entries) * 1.02 or 1.0)
        jobs = len({e[0] for e in entries})
        # A cluster's per-GPU timeline beside the summary gives the real lanes; it is read only
        # where bars may be drawn (at most BARS_MAX_JOBS jobs in view unless --lane-view bars).
        timeline = timelines.get(r["policy"])
        runs = None
        if (timeline and timeline["per_gpu"] and args.lane_view != "aggregate" and
                (args.lane_view == "bars" or jobs <= BARS_MAX_JOBS)):
            ids = {r["jobs"][e[0]]["id"]: e[4] for e in entries}
            runs = load_lane_runs(timeline["path"], ids, gpu_range, time_range)
        if runs:
            rows_used, row_of = assign_lane_rows(runs)
        else:
            rows_used, row_of = assign_rows(entries)
        view = choose_view(args.lane_view, entries, rows_used)
        if view == "bars" and runs:
            draw = (lambda fig, r=r, x=runs, u=rows_used, o=row_of, w=window, n=jobs:
                    draw_lane_runs(fig, r, data, x, u, o, gpu_range, w, n))
        elif view == "bars":
            draw = (lambda fig, r=r, e=entries, u=rows_used, o=row_of, w=window:
                    draw_lane_bars(fig, r, data, e, u, o, gpu_range, w))
        else:
            why = "" if args.lane_view == "aggregate" else (
                f"\n(over {BARS_MAX_JOBS} jobs in view; lanes are drawn up to {BARS_MAX_JOBS})" if jobs > BARS_MAX_JOBS
                else f"\n(over {BARS_MAX_ROWS} rows in view; lanes are drawn up to {BARS_MAX_ROWS})")
            draw = (lambda fig, r=r, e=entries, w=window, y=why:
                    draw_lane_aggregate(fig, r, data, e, gpu_range, w, y))
        figures.append((f"run_gpu_lanes_{r['policy']}", lanes_size(view, data, entries, rows_used, gpu_range), draw))
    for r in data["runs"]:
        timeline = timelines.get(r["policy"])
        if timeline and timeline["order"]:
            figures.append((f"run_timeline_{r['policy']}", (SIZE_IN[0], timeline_height(timeline)),
                            lambda fig, r=r, t=timeline: draw_timeline(fig, r, t, time_range)))
    return figures


def render(size, draw):
    """A figure of `size` drawn by `draw`, laid out (the style must be set: mf._style)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, dpi=mf.DPI, layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig)
    mf._fit_in_figure(fig)
    return fig


def main(argv):
    try:
        args = parse_args(argv)
    except BadOption as e:
        print(f"plot_run.py: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib
    except ImportError:
        print(MATPLOTLIB_MISSING, file=sys.stderr)
        return 3
    try:
        figures = plan(args)
    except mf.BadInput as e:
        print(e, file=sys.stderr)
        return 2
    except BadOption as e:
        print(f"plot_run.py: {e}", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        print(f"plot_run.py: --out {args.outdir}: {e}", file=sys.stderr)
        return 1
    mf._style(matplotlib)
    for name, size, draw in figures:
        fig = render(size, draw)
        base = os.path.join(args.outdir, name)
        try:
            save_figure(fig, base + ".png", dpi=mf.DPI, metadata={"Software": "salus plots/plot_run.py"})
            save_figure(fig, base + ".pdf", metadata={"Creator": "salus plots/plot_run.py", "CreationDate": None})
        except OSError as e:
            print(f"plot_run.py: {base}: {e}", file=sys.stderr)
            return 1
        print(f"wrote {base}.png, .pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
