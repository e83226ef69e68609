#!/usr/bin/python3
"""Figures of any salus-sim or salus-run summary (the JSON written by --summary-json or --out).

    /usr/bin/python3 plots/plot_run.py SUMMARY.json --out DIR

Writes to DIR, each as .png (200 dpi) and .pdf:
  run_jct_cdf        the CDF of job completion times, one line per policy;
  run_queuing_cdf    the CDF of queuing delays (arrival to first iteration), one line per policy;
  run_gpus_busy      GPUs busy over time, one line per policy, only when the results carry a
                     "gpus_busy" series ([[t_s, busy], ...] or {"t_s": [...], "busy": [...]});
  run_gpu_lanes_<policy>  each job as a bar from start to finish on the row of the GPU it ran on,
                     only when the jobs carry a "gpu" field;
  run_timeline_<policy>   when <policy>_timeline.csv lies beside the summary (salus-sim --out DIR
                     writes both): one row per job, each run of it a solid bar, and each rotation
                     it took part in (a row with a rotation number: the simulator ran the
                     policy's rotation in one go, e.g. FAIR) a light bar over the rotation's
                     span; the title gives the share of iterations run in rotations.
Times are drawn in the unit that fits the run (s, min or h), as salus-sim's table does.

Bad input is `FILE: what is wrong` on stderr (the key path named) and exit status 2, with no
figure written; without matplotlib the script says so and exits 3. The same JSON gives
byte-identical files (the style and metadata of make_figures.py).
"""

import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_figures as mf  # noqa: E402  (the shared style, colours and checked JSON access)

MATPLOTLIB_MISSING = ("plot_run.py: matplotlib not found: install it with "
                      "'apt-get install -y python3-matplotlib' and run with /usr/bin/python3")

# The paper's four keep make_figures.py's colours; the others get the rest of Okabe-Ito.
COLOUR = dict(mf.POLICY_COLOUR, las="#E69F00", priority="#56B4E9")
LINESTYLE = dict(mf.POLICY_LINESTYLE, las=(0, (3, 1, 1, 1)), priority=(0, (5, 2)))
EXTRA_COLOURS = ["#F0E442", "#000000", "#999999"]
SIZE_IN = (3.5, 2.6)


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
        # series and, per job in trace order, the GPUs it ran on (its first one is drawn).
        cluster = r.get("cluster")
        job_gpus = cluster["job_gpus"].list() if cluster is not None and cluster.get("job_gpus") is not None else None
        for k, j in enumerate(r["jobs"].list()):
            status = j["status"].string()
            job = {"id": j["id"].value, "status": status, "arrival": j["arrival_s"].num(lo=0)}
            if status == "done":
                job["jct"] = j["jct_s"].num(lo=0)
                job["queuing"] = j["queuing_s"].num(lo=0)
                job["start"] = j["start_s"].num(lo=0)
                job["finish"] = j["finish_s"].num(lo=0)
                gpu = j.get("gpu")
                if gpu is None and job_gpus is not None and k < len(job_gpus) and job_gpus[k].list():
                    gpu = job_gpus[k].list()[0]
                if gpu is not None:
                    job["gpu"] = gpu.integer(lo=0)
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
        runs.append({"policy": policy, "jobs": jobs, "busy": busy})
    return {"tool": root.get("tool").value if root.get("tool") is not None else "", "runs": runs}


TIMELINE_COLUMNS = ["lane", "job_id", "start_s", "end_s", "iterations", "switch_s", "rotation"]


def load_timeline(path):
    """The rows of a <policy>_timeline.csv: (job_id, start_s, end_s, iterations, rotation or 0)."""
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
            if header != TIMELINE_COLUMNS:
                raise mf.BadInput(f"{path}:1: expected the header {','.join(TIMELINE_COLUMNS)}, got "
                                  f"{','.join(header) if header else 'nothing'}")
            rows = []
            for cells in reader:
                line = reader.line_num
                if len(cells) != len(TIMELINE_COLUMNS):
                    raise mf.BadInput(f"{path}:{line}: expected {len(TIMELINE_COLUMNS)} fields, got {len(cells)}")
                start = number(cells[2], line, "start_s")
                end = number(cells[3], line, "end_s")
                if end < start:
                    raise mf.BadInput(f"{path}:{line}: end_s {cells[3]} is before start_s {cells[2]}")
                rotation = number(cells[6], line, "rotation", integer=True) if cells[6] else 0
                rows.append((cells[1], start, end, number(cells[4], line, "iterations", integer=True), rotation))
    except (OSError, UnicodeDecodeError) as e:
        raise mf.BadInput(f"{path}: cannot read: {e}")
    return rows


def draw_timeline(fig, run, rows):
    ax = fig.subplots()
    first = {}
    for job, start, _, _, _ in rows:
        first.setdefault(job, start)
    order = sorted(first, key=lambda j: (first[j], j))
    row_of = {j: k for k, j in enumerate(order)}
    longest = max((end for _, _, end, _, _ in rows), default=0.0)
    unit, per = time_unit(longest)
    runs = {j: [] for j in order}
    rotations = {j: [] for j in order}
    for job, start, end, _, rotation in rows:
        (rotations if rotation else runs)[job].append((start / per, (end - start) / per))
    for j in order:
        colour = mf.JOB_COLOURS[row_of[j] % len(mf.JOB_COLOURS)]
        if rotations[j]:
            ax.broken_barh(rotations[j], (row_of[j] - 0.4, 0.8), facecolors=colour, alpha=0.35, linewidth=0)
        if runs[j]:
            ax.broken_barh(runs[j], (row_of[j] - 0.4, 0.8), facecolors=colour, linewidth=0)
    in_rotations = sum(n for _, _, _, n, r in rows if r)
    total = sum(n for _, _, _, n, _ in rows)
    ax.set_ylim(len(order) - 0.5, -0.5)
    if len(order) <= 30:
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels(order)
    else:
        ax.set_yticks([])
    ax.set_xlim(0, longest / per * 1.02 if longest > 0 else 1)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(f"job ({len(order)}, by first start)")
    share = f"{100.0 * in_rotations / total:.0f} %" if total else "no"
    ax.set_title(f"{run['policy']}: runs solid, rotations light ({share} of iterations)")


def timeline_height(rows):
    jobs = len({r[0] for r in rows})
    return min(8.0, max(SIZE_IN[1], round((0.9 + 0.15 * jobs) * 20) / 20))


def time_unit(seconds):
    return ("s", 1.0) if seconds < 100 else ("min", 60.0) if seconds < 6000 else ("h", 3600.0)


def style_of(policy, index):
    colour = COLOUR.get(policy, EXTRA_COLOURS[index % len(EXTRA_COLOURS)])
    return colour, LINESTYLE.get(policy, "-")


def draw_cdf(fig, data, key, xlabel):
    ax = fig.subplots()
    values = [[j[key] for j in r["jobs"] if j["status"] == "done"] for r in data["runs"]]
    longest = max((max(v) for v in values if v), default=0.0)
    unit, per = time_unit(longest)
    for i, (r, v) in enumerate(zip(data["runs"], values)):
        if not v:
            continue
        xs = sorted(x / per for x in v)
        ys = [(k + 1) / len(xs) for k in range(len(xs))]
        colour, ls = style_of(r["policy"], i)
        ax.step([0.0] + xs, [0.0] + ys, where="post", label=r["policy"], color=colour, linestyle=ls)
    ax.set_xlim(0, longest / per * 1.02 if longest > 0 else 1)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel(f"{xlabel} ({unit})")
    ax.set_ylabel("fraction of finished jobs")
    ax.grid(True, linewidth=0.3, color="#dddddd")
    mf._legend_above(ax, min(len(data["runs"]), 3), handlelength=2.4)


def draw_busy(fig, data):
    ax = fig.subplots()
    longest = max((t for r in data["runs"] if r["busy"] for t, _ in r["busy"]), default=0.0)
    unit, per = time_unit(longest)
    for i, r in enumerate(data["runs"]):
        if not r["busy"]:
            continue
        colour, ls = style_of(r["policy"], i)
        ax.step([t / per for t, _ in r["busy"]], [b for _, b in r["busy"]], where="post", label=r["policy"],
                color=colour, linestyle=ls)
    ax.set_xlim(0, longest / per * 1.02 if longest > 0 else 1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("GPUs busy")
    ax.grid(True, linewidth=0.3, color="#dddddd")
    mf._legend_above(ax, min(len(data["runs"]), 3), handlelength=2.4)


def draw_lanes(fig, run):
    ax = fig.subplots()
    jobs = [j for j in run["jobs"] if "gpu" in j]
    longest = max((j["finish"] for j in jobs), default=0.0)
    unit, per = time_unit(longest)
    gpus = sorted({j["gpu"] for j in jobs})
    for k, j in enumerate(sorted(jobs, key=lambda j: (j["gpu"], j["start"]))):
        ax.barh(j["gpu"], (j["finish"] - j["start"]) / per, left=j["start"] / per, height=0.8,
                color=mf.JOB_COLOURS[k % len(mf.JOB_COLOURS)], edgecolor="white", linewidth=0.3)
    ax.set_yticks(gpus)
    ax.set_ylim(min(gpus, default=0) - 0.6, max(gpus, default=0) + 0.6)
    ax.invert_yaxis()
    ax.set_xlim(0, longest / per * 1.02 if longest > 0 else 1)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("GPU")
    ax.set_title(f"{run['policy']}: jobs by GPU, start to finish")


def lanes_height(run):
    gpus = {j["gpu"] for j in run["jobs"] if "gpu" in j}
    return max(SIZE_IN[1], round((0.9 + 0.2 * len(gpus)) * 20) / 20)


def main(argv):
    parser = argparse.ArgumentParser(prog="plot_run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("summary", help="a salus-sim or salus-run summary JSON")
    parser.add_argument("--out", dest="outdir", required=True, help="directory for the figures")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        print(MATPLOTLIB_MISSING, file=sys.stderr)
        return 3
    try:
        data = load(args.summary)
        timelines = {}
        for r in data["runs"]:
            path = os.path.join(os.path.dirname(os.path.abspath(args.summary)), f"{r['policy']}_timeline.csv")
            if os.path.exists(path):
                timelines[r["policy"]] = load_timeline(path)
    except mf.BadInput as e:
        print(e, file=sys.stderr)
        return 2
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        print(f"plot_run.py: --out {args.outdir}: {e}", file=sys.stderr)
        return 1
    figures = [("run_jct_cdf", SIZE_IN, lambda fig: draw_cdf(fig, data, "jct", "job completion time")),
               ("run_queuing_cdf", SIZE_IN, lambda fig: draw_cdf(fig, data, "queuing", "queuing delay"))]
    if any(r["busy"] for r in data["runs"]):
        figures.append(("run_gpus_busy", SIZE_IN, lambda fig: draw_busy(fig, data)))
    for r in data["runs"]:
        if any("gpu" in j for j in r["jobs"]):
            figures.append((f"run_gpu_lanes_{r['policy']}", (SIZE_IN[0], lanes_height(r)),
                            lambda fig, r=r: draw_lanes(fig, r)))
    for r in data["runs"]:
        rows = timelines.get(r["policy"])
        if rows:
            figures.append((f"run_timeline_{r['policy']}", (SIZE_IN[0], timeline_height(rows)),
                            lambda fig, r=r, rows=rows: draw_timeline(fig, r, rows)))
    mf._style(matplotlib)
    for name, size, draw in figures:
        fig = Figure(figsize=size, dpi=mf.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        draw(fig)
        mf._fit_in_figure(fig)
        base = os.path.join(args.outdir, name)
        try:
            fig.savefig(base + ".png", dpi=mf.DPI, metadata={"Software": "salus plots/plot_run.py"})
            fig.savefig(base + ".pdf", metadata={"Creator": "salus plots/plot_run.py", "CreationDate": None})
        except OSError as e:
            print(f"plot_run.py: {base}: {e}", file=sys.stderr)
            return 1
        print(f"wrote {base}.png, .pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
