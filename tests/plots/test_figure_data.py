#!/usr/bin/python3
"""Reads what each figure draws (issue 43): its series, styles, ticks and titles, not its pixels.

    /usr/bin/python3 tests/plots/test_figure_data.py SOURCE_DIR SALUS_SIM SALUS_TRACE

Draws every figure of plots/make_figures.py (on the fixtures in tests/data/plots) and every kind of
figure of plots/plot_run.py (on runs of salus-sim made here: the shipped 100-job trace under the six
policies on one GPU, 120 jobs with gangs on 8 GPUs, 6,000 jobs under FAIR on 16 GPUs) into
matplotlib figures, and checks what they hold:
  - in every axes, the labelled series are told apart (colour, line style, marker) and no two
    curves of a CDF have the same data; curves that lie on one another are drawn thinner one after
    the other, so the one beneath shows;
  - every log axis has at least three labelled ticks, covering the data;
  - timelines name every job drawn, have a legend, bars at least MIN_BAR_PX wide, no rotation line
    where no rotation ran, and an axis not mostly blank;
  - a cluster's lane view draws a rotation's 1-GPU jobs in their own colour;
  - the fidelity figure's dots are every repeat's, and each title's numbers are those repeats'.
Exit 0: all pass; 1: a check failed (each named); 77: no matplotlib for this interpreter.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile

from checks import SKIP, check, failures  # noqa: E402 (the scripts' own folder is on sys.path)


def style_key(artist):
    """What tells a series apart: colour, dash pattern, marker."""
    from matplotlib.colors import to_hex
    from matplotlib.lines import Line2D
    if isinstance(artist, Line2D):
        ls = artist.get_linestyle()
        dashes = tuple(artist._unscaled_dash_pattern[1] or ()) if hasattr(artist, "_unscaled_dash_pattern") else ls
        return (to_hex(artist.get_color()), ls, dashes, artist.get_marker())
    fc = artist.get_facecolor()
    ec = artist.get_edgecolor()
    colour = to_hex(fc[0]) if len(fc) else (to_hex(ec[0]) if len(ec) else "none")
    hollow = len(fc) == 0 or (len(fc) and fc[0][3] == 0)
    paths = artist.get_paths()
    marker = len(paths[0].vertices) if paths else 0
    return (colour if not hollow else to_hex(ec[0]), hollow, marker)


def labelled_series(ax):
    out = []
    for a in list(ax.get_lines()) + list(ax.collections):
        label = a.get_label()
        if label and not label.startswith("_"):
            out.append(a)
    return out


def check_series_distinct(name, fig):
    for k, ax in enumerate(fig.axes):
        series = labelled_series(ax)
        keys = [style_key(a) for a in series]
        check(len(set(keys)) == len(keys),
              f"{name}: axes {k}: two labelled series drawn alike: {[a.get_label() for a in series]} -> {keys}")


def check_log_axes(name, fig):
    for k, ax in enumerate(fig.axes):
        for axis, scale, lim, data in (("x", ax.get_xscale(), ax.get_xlim(), "x"), ("y", ax.get_yscale(), ax.get_ylim(), "y")):
            if scale != "log":
                continue
            a = ax.xaxis if axis == "x" else ax.yaxis
            lo, hi = min(lim), max(lim)
            ticks = [(t, lab.get_text()) for t, lab in zip(a.get_majorticklocs(), a.get_majorticklabels())
                     if lo <= t <= hi and lab.get_text()]
            check(len(ticks) >= 3, f"{name}: axes {k}: log {axis} axis has {len(ticks)} labelled ticks: {ticks}")


def check_cdf(name, fig):
    """No curve of a CDF hidden: different data, and each drawn thinner than the one before."""
    ax = fig.axes[0]
    lines = labelled_series(ax)
    check(len(lines) >= 2, f"{name}: {len(lines)} curves")
    data = [tuple(map(tuple, l.get_xydata())) for l in lines]
    check(len(set(data)) == len(data), f"{name}: two curves with the same data (one would hide the other)")
    widths = [l.get_linewidth() for l in lines]
    check(all(a > b for a, b in zip(widths, widths[1:])), f"{name}: line widths {widths} do not shrink in drawing order")


def bar_widths_px(ax):
    from matplotlib.collections import PolyCollection
    out = []
    for c in ax.collections:
        if not isinstance(c, PolyCollection):
            continue
        for p in c.get_paths():
            xs = p.vertices[:, 0]
            x0, x1 = ax.transData.transform([(min(xs), 0), (max(xs), 0)])[:, 0]
            out.append(x1 - x0)
    return out


def check_timeline(name, fig, plot_run, jobs_drawn):
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    check(len(labels) == jobs_drawn and all(labels), f"{name}: {len(labels)} job names for {jobs_drawn} rows")
    check(ax.get_legend() is not None, f"{name}: no legend")
    title = fig._suptitle.get_text() if fig._suptitle else ax.get_title()
    check("(0 %)" not in title and " 0 % of iterations" not in title, f"{name}: title speaks of rotations that never ran: {title!r}")
    min_px = getattr(plot_run, "MIN_BAR_PX", 2.0)
    widths = bar_widths_px(ax)
    check(widths and min(widths) >= min_px - 0.05,
          f"{name}: a bar {min(widths) if widths else 0:.2f} px wide (at least {min_px})")
    return title


def render(mf, size, draw):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, dpi=mf.DPI, layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig)
    fig.canvas.draw()
    return fig


def test_make_figures(src, mf):
    data_dir = os.path.join(src, "tests", "data", "plots")
    for experiment, names in mf.EXPERIMENTS.items():
        path = os.path.join(data_dir, experiment + ".json")
        root = mf.Node(path, json.load(open(path)))
        data = mf.LOADERS[experiment](root)
        for name in names:
            fig = render(mf, mf.figure_size(name, data), lambda f: mf.DRAW[name](f, data))
            check_figure(mf, name, fig, data, path)


def check_figure(mf, name, fig, data, path):
    if True:  # one level, as the checks were written inside the loop
        check_series_distinct(name, fig)
        check_log_axes(name, fig)
        if name == "fidelity_jct":
            raw = json.load(open(path))
            for ax, p in zip(fig.axes, data["policies"]):
                dots = [c for c in ax.collections if c.get_label().startswith("repeat")]
                n = len(raw["per_job_repeats"][p["policy"]])
                check(len(dots) == n, f"fidelity_jct: {p['policy']}: {len(dots)} sets of dots for {n} repeats")
                want = [100 * row["jct_error_median"] for rep in raw["repeats"] for row in rep if row["policy"] == p["policy"]]
                m = re.search(r"JCT err p50 ([\d. /]+) %", ax.get_title())
                if not check(m is not None, f"fidelity_jct: {p['policy']}: no per-repeat errors in {ax.get_title()!r}"):
                    continue
                shown = [float(x) for x in m.group(1).split(" / ")]
                check(len(shown) == len(want) and all(abs(a - b) < 0.051 for a, b in zip(shown, want)),
                      f"fidelity_jct: {p['policy']}: title says {shown}, the repeats' errors are {want}")
                for dot, rep in zip(dots, raw["per_job_repeats"][p["policy"]]):
                    xy = sorted(map(tuple, dot.get_offsets().tolist()))
                    check(xy == sorted((j["jct_real_s"], j["jct_sim_s"]) for j in rep),
                          f"fidelity_jct: {p['policy']}: {dot.get_label()}'s dots are not its jobs")
        if name == "gpus_needed":
            ax = fig.axes[0]
            series = labelled_series(ax)
            from matplotlib.colors import to_hex
            colours = [to_hex(l.get_color()) for l in series]
            check(len(set(colours)) == len(colours), f"gpus_needed: a colour shared by two configurations: {colours}")
            big = [tuple(l.get_xydata()[0]) for l in ax.get_lines() if l.get_markersize() >= 6]
            check(len(set(big)) == len(big), f"gpus_needed: chosen-N markers on one another: {big}")
            values = [y for l in series for y in l.get_ydata() if y > 0]
            ticks = [t for t in ax.yaxis.get_majorticklocs()]
            lo, hi = min(values), max(values)
            check(min(ticks) <= lo * 2.5 and max(ticks) >= hi / 2.5,
                  f"gpus_needed: ticks {ticks} do not cover the points {lo:.2f}-{hi:.2f} min")


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-500:]}")


SEEN_PLOT_RUN = set()


def plot_run_figures(plot_run, mf, summary, only=None):
    """The figures plot_run.py draws for `summary` (those named in `only`, else all), each drawn
    once and given the checks every figure gets (series told apart, log ticks)."""
    args = plot_run.parse_args([summary, "--out", os.path.join(os.path.dirname(summary), "plots")])
    figs = {}
    for name, size, draw in plot_run.plan(args):
        if only is not None and name not in only:
            continue
        fig = render(mf, size, draw)
        check_series_distinct(f"{name} ({os.path.basename(os.path.dirname(summary))})", fig)
        check_log_axes(f"{name} ({os.path.basename(os.path.dirname(summary))})", fig)
        SEEN_PLOT_RUN.add(re.sub(r"_(fifo|srtf|pack|fair|las|priority)$", "_<policy>", name))
        figs[name] = fig
    return figs


def test_plot_run(src, sim, trace, mf, plot_run, tmp):
    env_src = src
    # One GPU: the shipped trace under every policy.
    run([sim, "--trace", os.path.join(env_src, "traces", "long_trace_100.csv"), "--quiet", "--out", "one"], tmp)
    figs = plot_run_figures(plot_run, mf, os.path.join(tmp, "one", "summary.json"),
                            only={"run_jct_cdf", "run_queuing_cdf", "run_policies", "run_timeline_fifo",
                                  "run_timeline_pack", "run_timeline_fair"})
    for name in ("run_jct_cdf", "run_queuing_cdf"):
        check_cdf(name, figs[name])
    for policy in ("fifo", "pack", "fair"):
        name = f"run_timeline_{policy}"
        title = check_timeline(name, figs[name], plot_run, 100)
        if policy == "pack":
            check("rotation" not in title, f"{name}: PACK ran no rotation, the title says {title!r}")
        if policy == "fair":
            check("rotations" in title, f"{name}: FAIR's rotations not said: {title!r}")
    # A cluster with gangs: FAIR's lanes, rotations as turns in each job's GPU-count colour.
    run([trace, "generate", "--jobs", "120", "--seed", "5", "--mean-interarrival-s", "20",
         "--gang-sizes", "1:0.6,2:0.25,4:0.15", "--out", "g.csv"], tmp)
    run([sim, "--trace", "g.csv", "--gpus", "8", "--policy", "fifo,pack,fair", "--quiet", "--out", "c8"], tmp)
    figs = plot_run_figures(plot_run, mf, os.path.join(tmp, "c8", "summary.json"),
                            only={"run_jct_cdf", "run_queuing_cdf", "run_gpus_busy", "run_gpu_lanes_pack",
                                  "run_gpu_lanes_fair"})
    fig = figs["run_gpu_lanes_fair"]
    from matplotlib.colors import to_hex
    light = {to_hex(c.get_facecolor()[0]) for c in fig.axes[0].collections
             if len(c.get_facecolor()) and c.get_facecolor()[0][3] < 1}
    check(len(light) >= 2, f"run_gpu_lanes_fair: rotations in one colour only: {light}")
    # A rotation where a 1-GPU job took turns with a gang's replica shows the 1-GPU job's turns
    # on its row (the rows as plot_run lays them out).
    data = plot_run.load(os.path.join(tmp, "c8", "summary.json"))
    r = next(x for x in data["runs"] if x["policy"] == "fair")
    entries = plot_run.lane_jobs(r, None, None)
    ids = {r["jobs"][e[0]]["id"]: e[4] for e in entries}
    runs = plot_run.load_lane_runs(os.path.join(tmp, "c8", "fair_timeline.csv"), ids, None, None)
    rows_used, row_of = plot_run.assign_lane_rows(runs)
    gpus = plot_run.gpu_list([(0, g) for g in rows_used], None, data["gpus"])
    base, _ = plot_run.gpu_row_bases(gpus, rows_used)
    _, per = plot_run.time_unit(max(e[3] for e in entries) * 1.02)
    mixed = {}
    for gpu, lane, job, start, end, rotation, count in runs:
        if rotation:
            mixed.setdefault((gpu, lane, rotation), {"span": (start, end), "counts": set()})["counts"].add(count)
    mixed = [m | {"gpu": k[0], "lane": k[1]} for k, m in mixed.items() if 1 in m["counts"] and len(m["counts"]) > 1]
    check(mixed, "run_gpu_lanes_fair: the run has no rotation of 1-GPU jobs and gangs (the check needs one)")
    one = plot_run.GPU_COUNT_COLOURS[1].lower()
    pieces = [p.vertices for c in fig.axes[0].collections if len(c.get_facecolor()) and c.get_facecolor()[0][3] < 1
              and to_hex(c.get_facecolor()[0]) == one for p in c.get_paths()]
    missing = 0
    for m in mixed:
        y = base[m["gpu"]] + row_of[(m["gpu"], m["lane"])]
        s0, e0 = m["span"][0] / per, m["span"][1] / per
        if not any(v[:, 1].min() >= y and v[:, 1].max() <= y + 1 and v[:, 0].max() > s0 and v[:, 0].min() < e0
                   for v in pieces):
            missing += 1
    check(missing == 0, f"run_gpu_lanes_fair: {missing} of {len(mixed)} rotations with 1-GPU jobs show none of their turns")
    # 6,000 jobs under FAIR: the timeline's sample of 100 fills its axis.
    run([trace, "generate", "--jobs", "6000", "--seed", "7", "--mean-interarrival-s", "8", "--out", "g6k.csv"], tmp)
    run([sim, "--trace", "g6k.csv", "--gpus", "16", "--policy", "fair", "--quiet", "--out", "c6k"], tmp)
    # (its other figures are the kinds the runs above checked: the timeline only)
    fig = plot_run_figures(plot_run, mf, os.path.join(tmp, "c6k", "summary.json"), only={"run_timeline_fair"})[
        "run_timeline_fair"]
    check_timeline("run_timeline_fair (6,000 jobs)", fig, plot_run, 100)
    ax = fig.axes[0]
    xmax = ax.get_xlim()[1]
    covered = [p.vertices[:, 0].max() for c in ax.collections for p in c.get_paths()]
    # At least half the axis holds bars: the last bar of most rows reaches past its middle or the
    # rows running past the edge say where they end.
    past = [t for t in ax.texts if t.get_text().startswith("\u2192")]
    check(max(covered) >= 0.9 * xmax, f"run_timeline_fair (6,000 jobs): bars reach {max(covered):.2f} of {xmax:.2f}")
    check(sorted(covered)[len(covered) // 2] >= 0.2 * xmax,
          f"run_timeline_fair (6,000 jobs): half the bars end in the first fifth of the axis (mostly blank)")
    check(all(t.get_position()[0] >= 0.95 * xmax for t in past), "run_timeline_fair: an end note away from the edge")
    # Every kind of figure plot_run.py draws went through the checks.
    kinds = {"run_jct_cdf", "run_queuing_cdf", "run_policies", "run_gpus_busy", "run_gpu_lanes_<policy>",
             "run_timeline_<policy>"}
    check(kinds <= SEEN_PLOT_RUN, f"plot_run figures not checked: {sorted(kinds - SEEN_PLOT_RUN)}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, sim, trace = (os.path.abspath(a) for a in sys.argv[1:])
    try:
        import matplotlib
    except ImportError:
        print("no matplotlib for this interpreter: skipped")
        return SKIP
    sys.path.insert(0, os.path.join(src, "plots"))
    import make_figures as mf
    import plot_run
    mf._style(matplotlib)
    test_make_figures(src, mf)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SALUS_DATA_DIR"] = os.path.join(src, "traces")
        test_plot_run(src, sim, trace, mf, plot_run, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("figure data: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
