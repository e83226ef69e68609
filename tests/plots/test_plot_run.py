#!/usr/bin/python3
"""Runs plots/plot_run.py on salus-sim summaries and checks what it writes and draws.

    /usr/bin/python3 tests/plots/test_plot_run.py SOURCE_DIR

Plain Python. Exits 0 when every check passes, 1 when one fails, 77 without matplotlib. The
figures' contents are checked in-process (plot_run.plan and render, no files), the command line
and the files by running the script.
"""

import io
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

from checks import SKIP, check, failures  # noqa: E402 (the scripts' own folder is on sys.path)


def run(script, *args):
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def job(jid, arrival, start, finish):
    return {"id": jid, "status": "done", "arrival_s": arrival, "start_s": start, "finish_s": finish,
            "jct_s": finish - arrival, "queuing_s": start - arrival, "lane": 0, "iterations": 1,
            "reason": "", "workload": "w"}


def result(policy, jobs, job_gpus, busy):
    jcts = sorted(j["jct_s"] for j in jobs)
    return {"policy": policy, "jobs": jobs, "avg_jct_s": sum(jcts) / len(jcts),
            "p95_jct_s": jcts[min(len(jcts) - 1, math.ceil(0.95 * len(jcts)) - 1)],
            "avg_queuing_s": sum(j["queuing_s"] for j in jobs) / len(jobs),
            "makespan_s": max(j["finish_s"] for j in jobs),
            "cluster": {"job_gpus": job_gpus, "gpus_busy": busy}}


def small_cluster():
    """Four GPUs. FAIR: a gang job g4 on GPUs 0-3, jobs a, b, c at once on GPU 1 (three rows),
    a 2-GPU job d on GPUs 2 and 3 after g4, e on GPU 0 meeting g4's finish exactly (same row).
    FIFO: the same jobs one after another. Queuing 0 for most FAIR jobs; JCTs heavy-tailed."""
    fair_jobs = [job("g4", 0, 0, 100), job("a", 1, 1, 3), job("b", 1, 2, 40), job("c", 1.5, 2.5, 4),
                 job("d", 5, 100, 130), job("e", 100, 100, 101), job("f", 0, 0, 2), job("h", 3, 3, 4)]
    fair_gpus = [[0, 1, 2, 3], [1], [1], [1], [2, 3], [0], [1], [1]]
    fifo_jobs = [job("g4", 0, 0, 100), job("a", 1, 100, 102), job("b", 1, 102, 140), job("c", 1.5, 140, 142),
                 job("d", 5, 142, 172), job("e", 100, 172, 173), job("f", 0, 173, 175), job("h", 3, 175, 176)]
    fifo_gpus = [[0, 1, 2, 3], [0], [0], [0], [0, 1], [0], [0], [0]]
    return {"tool": "salus-sim", "trace": "/somewhere/small.csv",
            "cluster": {"gpus": 4, "nodes": 4, "placement": "per policy"},
            "results": [result("fifo", fifo_jobs, fifo_gpus, [[0, 4], [100, 1], [142, 2], [172, 1], [176, 0]]),
                        result("fair", fair_jobs, fair_gpus, [[0, 4], [100, 3], [130, 1], [131, 0]])]}


def many_jobs(n, gpus):
    """n one-GPU jobs of 10 s round-robin over `gpus` GPUs, two at once on each."""
    jobs, job_gpus = [], []
    for k in range(n):
        start = 5.0 * (k // (2 * gpus))
        jobs.append(job(f"j{k}", start, start, start + 10))
        job_gpus.append([k % gpus])
    return {"tool": "salus-sim", "trace": "many.csv", "cluster": {"gpus": gpus},
            "results": [result("pack", jobs, job_gpus, [[0, gpus], [jobs[-1]["finish_s"], 0]])]}


def write(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def axes_title(fig):
    texts = [ax.get_title() for ax in fig.axes] + [ax.get_title(loc="left") for ax in fig.axes]
    if fig._suptitle is not None:
        texts.append(fig._suptitle.get_text())
    return " | ".join(t for t in texts if t)


def rectangles_of(coll):
    out = []
    for path in coll.get_paths():
        xs = [v[0] for v in path.vertices]
        ys = [v[1] for v in path.vertices]
        out.append((min(xs), max(xs), min(ys), max(ys)))
    return out


def rectangles(ax):
    """(x0, x1, y0, y1) of every bar broken_barh drew."""
    return [r for coll in ax.collections for r in rectangles_of(coll)]


def in_process_checks(pr, tmp):
    import matplotlib
    pr.mf._style(matplotlib)

    def figures(summary, *options):
        args = pr.parse_args([summary, "--out", os.path.join(tmp, "unused"), *options])
        return {name: (size, draw) for name, size, draw in pr.plan(args)}

    def draw(figs, name):
        size, fn = figs[name]
        return pr.render(size, fn)

    # Rows: the jobs of a row never overlap in time, and a GPU gets as many rows as it ever
    # holds jobs at once (a sweep over the same entries, computed here).
    entries = []
    for k in range(200):
        start = (k * 37) % 101
        entries.append((k, k % 3, float(start), float(start + 1 + (k * 13) % 29), 1))
    rows_used, row_of = pr.assign_rows(entries)
    by_row = {}
    for e, r in zip(entries, row_of):
        by_row.setdefault((e[1], r), []).append((e[2], e[3]))
    overlaps = sum(1 for spans in by_row.values() for (s1, f1), (s2, f2) in zip(sorted(spans), sorted(spans)[1:])
                   if s2 < f1)
    check(overlaps == 0, f"assign_rows: {overlaps} overlapping jobs share a row")
    for g in range(3):
        events = sorted([(s, 1) for _, gg, s, _, _ in entries if gg == g] +
                        [(f, -1) for _, gg, _, f, _ in entries if gg == g], key=lambda p: (p[0], p[1]))
        held, most = 0, 0
        for _, d in events:
            held += d
            most = max(most, held)
        check(rows_used[g] == most, f"assign_rows: GPU {g} has {rows_used[g]} rows, holds {most} jobs at most")

    # The aggregate's bins keep every job's time: the mean held times the bin width, summed,
    # is the total time held on each GPU.
    grid, edges = pr.held_per_bin(entries, [0, 1, 2], 0.0, 140.0, 70)
    for g in range(3):
        held = sum(f - s for _, gg, s, f, _ in entries if gg == g)
        binned = sum(grid[g]) * (edges[1] - edges[0])
        check(abs(binned - held) < 1e-6 * held, f"held_per_bin: GPU {g} bins hold {binned}, jobs {held}")

    check(pr.heavy_tailed([[1, 2, 3, 4, 1000]]), "heavy_tailed: median 3 of max 1000 is heavy")
    check(not pr.heavy_tailed([[10, 20, 30, 40, 50]]), "heavy_tailed: 10..50 is not")
    check(pr.parse_time_range("1h-2d") == (3600.0, 172800.0), "parse_time_range 1h-2d")
    check(pr.parse_time_range("1.5min-3600") == (90.0, 3600.0), "parse_time_range 1.5min-3600")
    check(pr.parse_gpu_range("3") == (3, 3) and pr.parse_gpu_range("0-7") == (0, 7), "parse_gpu_range")

    small = write(os.path.join(tmp, "small.json"), small_cluster())
    figs = figures(small)
    check(sorted(figs) == ["run_gpu_lanes_fair", "run_gpu_lanes_fifo", "run_gpus_busy", "run_jct_cdf",
                           "run_policies", "run_queuing_cdf"], f"small cluster figures {sorted(figs)}")

    # Lanes, bars: a bar per job per GPU it holds; the gang job on each of its GPUs; no two bars
    # of one row overlap; GPU 1's three jobs at once on three rows.
    fig = draw(figs, "run_gpu_lanes_fair")
    ax = fig.axes[0]
    rects = rectangles(ax)
    fair = small_cluster()["results"][1]
    check(len(rects) == sum(len(g) for g in fair["cluster"]["job_gpus"]),
          f"lanes: {len(rects)} bars for {sum(len(g) for g in fair['cluster']['job_gpus'])} (job, GPU) pairs")
    separators = sorted(line.get_ydata()[0] for line in ax.lines)

    def gpu_of(rect):
        return sum(1 for y in separators if y < (rect[2] + rect[3]) / 2)
    per = 60.0  # the run lasts 131 s: minutes
    gang = [r for r in rects if abs(r[0]) < 1e-9 and abs(r[1] - 100 / per) < 1e-9]
    check(sorted(gpu_of(r) for r in gang) == [0, 1, 2, 3], f"lanes: the gang job is on GPUs {sorted(map(gpu_of, gang))}")
    d = [r for r in rects if abs(r[0] - 100 / per) < 1e-9 and abs(r[1] - 130 / per) < 1e-9]
    check(sorted(gpu_of(r) for r in d) == [2, 3], f"lanes: the 2-GPU job is on GPUs {sorted(map(gpu_of, d))}")
    rows = {}
    for r in rects:
        rows.setdefault((r[2], r[3]), []).append((r[0], r[1]))
    clash = sum(1 for spans in rows.values() for (s1, f1), (s2, f2) in zip(sorted(spans), sorted(spans)[1:])
                if s2 < f1 - 1e-9)
    check(clash == 0, f"lanes: {clash} bars overlap in a row")
    gpu1_rows = {(r[2], r[3]) for r in rects if gpu_of(r) == 1}
    check(len(gpu1_rows) == 4, f"lanes: GPU 1 (g4, then a, b, c at once, f, h) has {len(gpu1_rows)} rows, expected 4")
    check("each job from start to finish" in axes_title(fig) and "8 jobs" in axes_title(fig),
          f"lanes: title {axes_title(fig)!r}")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    check(labels == ["1 GPU", "2 GPUs", "4 GPUs"], f"lanes: legend {labels}")

    # --gpu-range: only those GPUs' bars.
    fig = draw(figures(small, "--gpu-range", "2-3"), "run_gpu_lanes_fair")
    rects = rectangles(fig.axes[0])
    check(len(rects) == 4, f"--gpu-range 2-3: {len(rects)} bars, expected 4 (g4 and d on GPUs 2 and 3)")
    check([t.get_text() for t in fig.axes[0].get_yticklabels()] == ["2", "3"], "--gpu-range 2-3: GPU ticks")

    # The CDFs: a heavy tail gets a log axis (auto), --log-x forces either way; the queuing CDF
    # draws FAIR's zero-delay jobs at a tick labelled 0, inside the axes (not under the y-axis).
    fig = draw(figs, "run_jct_cdf")
    check(fig.axes[0].get_xscale() == "log", "JCT CDF of a heavy tail: log axis (auto)")
    fig = draw(figures(small, "--log-x", "off"), "run_jct_cdf")
    check(fig.axes[0].get_xscale() == "linear", "--log-x off: linear axis")
    fig = draw(figs, "run_queuing_cdf")
    ax = fig.axes[0]
    check(ax.get_xscale() == "log" and ax.get_xticklabels()[0].get_text() == "0",
          f"queuing CDF: log axis with a 0 tick, got {ax.get_xscale()} {[t.get_text() for t in ax.get_xticklabels()]}")
    left = ax.get_xlim()[0]
    zero_tick = ax.get_xticks()[0]
    check(left < zero_tick, f"queuing CDF: the zero-delay jobs at {zero_tick} lie right of the axis at {left}")
    rise = [line for line in ax.get_lines() if line.get_label() == "FAIR"][0]
    xs, ys = rise.get_xdata(), rise.get_ydata()
    check(any(abs(x - zero_tick) < 1e-12 and y >= 0.5 for x, y in zip(xs, ys)),
          "queuing CDF: FAIR rises at the 0 tick (6 of 8 jobs waited 0 s)")
    fig = draw(figures(small, "--log-x", "off"), "run_queuing_cdf")
    check(fig.axes[0].get_xlim()[0] < 0, "queuing CDF, linear: the axis starts left of 0")
    light = small_cluster()
    for r in light["results"]:
        for j in r["jobs"]:
            j["finish_s"] = j["start_s"] + 50 + len(j["id"])
            j["jct_s"] = j["finish_s"] - j["arrival_s"]
    fig = draw(figures(write(os.path.join(tmp, "light.json"), light)), "run_jct_cdf")
    check(fig.axes[0].get_xscale() == "linear", "JCT CDF without a heavy tail: linear (auto)")
    fig = draw(figures(os.path.join(tmp, "light.json"), "--log-x", "on"), "run_jct_cdf")
    check(fig.axes[0].get_xscale() == "log", "--log-x on: log axis")

    # Policies side by side: each bar is its policy's figure from the summary.
    fig = draw(figs, "run_policies")
    want = {"average JCT": "avg_jct_s", "95th-percentile JCT": "p95_jct_s", "average queuing": "avg_queuing_s",
            "makespan": "makespan_s"}
    summary = small_cluster()
    for ax in fig.axes:
        title = ax.get_title()
        key = want[title.rsplit(" (", 1)[0]]
        unit = {"s": 1, "min": 60, "h": 3600}[title.rsplit("(", 1)[1].rstrip(")")]
        heights = [p.get_height() * unit for p in ax.patches]
        expected = [r[key] for r in summary["results"]]
        check(all(abs(h - e) < 1e-9 * max(1, e) for h, e in zip(heights, expected)) and len(heights) == 2,
              f"run_policies {title}: bars {heights}, summary {expected}")

    # GPUs busy: a panel per policy, whole-number ticks up to the cluster's 4 GPUs.
    fig = draw(figs, "run_gpus_busy")
    check(len(fig.axes) == 2, f"run_gpus_busy: {len(fig.axes)} panels")
    check(all(list(ax.get_yticks()) == [0, 2, 4] for ax in fig.axes), "run_gpus_busy: ticks 0, 2, 4")

    # Many jobs: the lane figure aggregates and says so; --lane-view bars forces bars.
    many = write(os.path.join(tmp, "many.json"), many_jobs(400, 8))
    fig = draw(figures(many), "run_gpu_lanes_pack")
    check("aggregate of 400 jobs" in axes_title(fig) and "over 300 jobs in view" in axes_title(fig),
          f"400 jobs: title {axes_title(fig)!r}")
    check(not rectangles(fig.axes[0]) and fig.axes[0].images, "400 jobs: an image, no bars")
    pdfs = []
    for _ in range(2):
        buffer = io.BytesIO()
        draw(figures(many), "run_gpu_lanes_pack").savefig(buffer, format="pdf", metadata={"CreationDate": None})
        pdfs.append(buffer.getvalue())
    check(pdfs[0] == pdfs[1], "the aggregate lane figure differs between two drawings")
    fig = draw(figures(many, "--lane-view", "bars"), "run_gpu_lanes_pack")
    check(len(rectangles(fig.axes[0])) == 400, "--lane-view bars: 400 bars")
    fig = draw(figures(many, "--time-range", "0-20"), "run_gpu_lanes_pack")
    check("each job" in axes_title(fig), f"--time-range 0-20 narrows to bars: {axes_title(fig)!r}")

    # A one-GPU timeline of more jobs than drawn: a sample, said on the figure.
    tdir = os.path.join(tmp, "timeline")
    os.makedirs(tdir)
    summary = write(os.path.join(tdir, "summary.json"), many_jobs(120, 1))
    with open(os.path.join(tdir, "pack_timeline.csv"), "w") as f:
        f.write("lane,job_id,start_s,end_s,iterations,switch_s,rotation\n")
        for k in range(120):
            f.write(f"0,j{k},{k},{k + 1},1,0,\n")
    fig = draw(figures(summary), "run_timeline_pack")
    ylabel = fig.axes[0].get_ylabel()
    check("the first 100 of 120" in ylabel, f"timeline of 120 jobs: y label {ylabel!r}")
    check(len(rectangles(fig.axes[0])) == 100, "timeline of 120 jobs: 100 drawn")

    # A cluster's per-GPU timeline beside the summary (salus-sim --out DIR on several GPUs): the
    # lane figure draws the real lanes, a row per lane of each GPU (lanes alive at once on rows of
    # their own, a lane opened after another closed on its row), runs solid, a rotation light.
    cdir = os.path.join(tmp, "cluster_timeline")
    os.makedirs(cdir)
    summary = write(os.path.join(cdir, "summary.json"), small_cluster())
    lanes = [(0, 0, "g4", 0, 100, ""), (1, 0, "g4", 0, 100, ""), (2, 0, "g4", 0, 100, ""), (3, 0, "g4", 0, 100, ""),
             (0, 1, "e", 100, 101, ""),
             (1, 1, "f", 0, 2, ""), (1, 1, "a", 2, 3, ""),
             (1, 2, "b", 2, 4, "1"), (1, 2, "c", 2, 4, "1"), (1, 2, "b", 4, 40, ""),
             (1, 3, "h", 3, 4, ""),
             (2, 1, "d", 100, 130, ""), (3, 1, "d", 100, 130, "")]
    with open(os.path.join(cdir, "fair_timeline.csv"), "w") as f:
        f.write("gpu,lane,job_id,start_s,end_s,iterations,switch_s,rotation\n")
        for gpu, lane, jid, start, end, rotation in lanes:
            f.write(f"{gpu},{lane},{jid},{start},{end},1,0,{rotation}\n")
    rows_used, row_of = pr.assign_lane_rows([(g, l, j, s, e, int(r or 0), 1) for g, l, j, s, e, r in lanes])
    check(rows_used == {0: 1, 1: 3, 2: 1, 3: 1}, f"assign_lane_rows: rows per GPU {rows_used}")
    check(row_of[(1, 3)] == row_of[(1, 1)] != row_of[(1, 2)],
          f"assign_lane_rows: lane 3 of GPU 1 (from 3 s) takes lane 1's row (to 3 s), not lane 2's: {row_of}")
    figs = figures(summary, "--policy", "fair")
    fig = draw(figs, "run_gpu_lanes_fair")
    ax = fig.axes[0]
    check(ax.get_ylabel() == "GPU (a row per lane)", f"cluster lanes: y label {ax.get_ylabel()!r}")
    check("each GPU's lanes (8 jobs)" in axes_title(fig) and "rotations as their turns" in axes_title(fig),
          f"cluster lanes: title {axes_title(fig)!r}")
    light = [c for c in ax.collections if c.get_alpha() is not None and c.get_alpha() < 1]
    solid = [c for c in ax.collections if c.get_alpha() is None or c.get_alpha() == 1]
    rects = [r for c in solid for r in rectangles_of(c)]
    # The rotation of b and c (2-4 s on GPU 1) is drawn as their turns: pieces of both inside it.
    turns = [p.vertices for c in light for p in c.get_paths()]
    check(len(rects) == 11 and len(turns) >= 2 and
          all(v[:, 0].min() >= 2 / 60 - 1e-9 and v[:, 0].max() <= 4 / 60 + 1e-3 for v in turns),
          f"cluster lanes: {len(rects)} runs (expected 11) and {len(turns)} turns of the rotation in 2-4 s")
    per = 60.0
    separators = sorted(line.get_ydata()[0] for line in ax.lines)

    def gpu_of(rect):
        return sum(1 for y in separators if y < (rect[2] + rect[3]) / 2)
    gang = [r for r in rects if abs(r[0]) < 1e-9 and abs(r[1] - 100 / per) < 1e-9]
    check(sorted(gpu_of(r) for r in gang) == [0, 1, 2, 3], f"cluster lanes: g4 on GPUs {sorted(map(gpu_of, gang))}")
    gpu1_rows = {(r[2], r[3]) for r in rects if gpu_of(r) == 1}
    check(len(gpu1_rows) == 3, f"cluster lanes: GPU 1 has {len(gpu1_rows)} rows, expected 3 (its lanes at once)")
    by_row = {}
    for r in rects:
        by_row.setdefault((r[2], r[3]), []).append((r[0], r[1]))
    clash = sum(1 for spans in by_row.values() for (s1, f1), (s2, f2) in zip(sorted(spans), sorted(spans)[1:])
                if s2 < f1 - 1e-9)
    check(clash == 0, f"cluster lanes: {clash} runs overlap in a row")
    # --lane-view aggregate and past 300 jobs: the aggregate, saying why.
    fig = draw(figures(summary, "--policy", "fair", "--lane-view", "aggregate"), "run_gpu_lanes_fair")
    check(fig.axes[0].images and "aggregate of 8 jobs" in axes_title(fig), f"aggregate: {axes_title(fig)!r}")
    # The timeline figure reads the gpu column too: a row per job.
    fig = draw(figs, "run_timeline_fair")
    check(len(fig.axes[0].get_yticklabels()) == 8, "cluster timeline: a row per job")


def main(source):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not importable by this interpreter: skipped")
        return SKIP
    script = os.path.join(source, "plots", "plot_run.py")
    sys.path.insert(0, os.path.join(source, "plots"))
    import plot_run
    hand = os.path.join(source, "tests", "data", "golden", "hand_summary.json")
    with tempfile.TemporaryDirectory() as tmp:
        in_process_checks(plot_run, tmp)

        # A single-GPU summary: the two CDFs and the policies, nothing else.
        out = os.path.join(tmp, "hand")
        code, stdout, stderr = run(script, hand, "--out", out)
        check(code == 0, f"hand summary: exit {code}, stderr {stderr!r}")
        check(sorted(os.listdir(out)) == ["run_jct_cdf.pdf", "run_jct_cdf.png", "run_policies.pdf", "run_policies.png",
                                         "run_queuing_cdf.pdf", "run_queuing_cdf.png"],
              f"hand summary wrote {sorted(os.listdir(out))}")
        check(png_size(os.path.join(out, "run_jct_cdf.png")) == (700, 520), "run_jct_cdf.png is 3.5 x 2.6 in at 200 dpi")
        check(stdout == "".join(f"wrote {out}/{n}.png, .pdf\n" for n in ["run_jct_cdf", "run_queuing_cdf", "run_policies"]),
              f"hand summary stdout {stdout!r}")

        # A cluster summary, one policy: the same input gives the same bytes, bars and aggregate.
        small = write(os.path.join(tmp, "small.json"), small_cluster())
        outs = []
        for k in range(2):
            outs.append(os.path.join(tmp, f"small{k}"))
            code, stdout, stderr = run(script, small, "--out", outs[-1], "--policy", "fair")
            check(code == 0, f"small cluster --policy fair: exit {code}, stderr {stderr!r}")
        names = sorted(os.listdir(outs[0]))
        check([n for n in names if n.endswith(".png")] ==
              ["run_gpu_lanes_fair.png", "run_gpus_busy.png", "run_jct_cdf.png", "run_policies.png",
               "run_queuing_cdf.png"], f"--policy fair wrote {names}")
        for name in names:
            with open(os.path.join(outs[0], name), "rb") as a, open(os.path.join(outs[1], name), "rb") as b:
                check(a.read() == b.read(), f"{name} differs between two runs")
        # A timeline beside the summary (salus-sim --out DIR): FAIR's runs and a rotation of
        # jobs a and b (rows with a rotation number) give run_timeline_fair.
        with open(hand) as f:
            summary = json.load(f)
        tdir = os.path.join(tmp, "with_timeline")
        os.makedirs(tdir)
        write(os.path.join(tdir, "summary.json"), summary)
        timeline = os.path.join(tdir, "fair_timeline.csv")
        with open(timeline, "w") as f:
            f.write("lane,job_id,start_s,end_s,iterations,switch_s,rotation\n0,a,0,0.25,3,0,\n"
                    "0,a,0.25,0.5,2,0.001,1\n0,b,0.25,0.5,2,0.002,1\n0,c,0.5,1.9,4,0.001,\n")
        out = os.path.join(tmp, "timeline")
        code, stdout, stderr = run(script, os.path.join(tdir, "summary.json"), "--out", out, "--policy", "fair,srtf")
        check(code == 0, f"summary with a timeline: exit {code}, stderr {stderr!r}")
        check("run_timeline_fair.png" in os.listdir(out) and "run_timeline_fair.pdf" in os.listdir(out),
              f"summary with a timeline wrote {sorted(os.listdir(out))}")
        check(not any(n.startswith("run_timeline_srtf") for n in os.listdir(out)), "no timeline file, no figure")
        with open(timeline, "w") as f:
            f.write("lane,job_id,start_s,end_s,iterations,switch_s,rotation\n0,a,0,0.25,3,0,x\n")
        out = os.path.join(tmp, "bad_timeline")
        code, _, stderr = run(script, os.path.join(tdir, "summary.json"), "--out", out)
        check(code == 2 and stderr == f"{timeline}:2: rotation: expected an integer, got 'x'\n",
              f"bad timeline: exit {code}, stderr {stderr!r}")
        check(not os.path.exists(out), "bad timeline: the output directory was created")
        with open(timeline, "w") as f:
            f.write("gpu,lane,job_id,start_s,end_s,iterations,switch_s,rotation\nx,0,a,0,0.25,3,0,\n")
        code, _, stderr = run(script, os.path.join(tdir, "summary.json"), "--out", out)
        check(code == 2 and stderr == f"{timeline}:2: gpu: expected an integer, got 'x'\n",
              f"bad cluster timeline: exit {code}, stderr {stderr!r}")
        with open(timeline, "w") as f:
            f.write("gpu,job_id,start_s\n")
        code, _, stderr = run(script, os.path.join(tdir, "summary.json"), "--out", out)
        check(code == 2 and stderr == f"{timeline}:1: expected the header lane,job_id,start_s,end_s,iterations,"
              "switch_s,rotation (or on a cluster gpu,lane,job_id,start_s,end_s,iterations,switch_s,rotation), "
              "got gpu,job_id,start_s\n", f"bad timeline header: exit {code}, stderr {stderr!r}")

        # Bad options: exit 2, what is wrong, nothing written.
        out = os.path.join(tmp, "bad_option")
        for options, message in [
                (["--policy", "fifo,las"], f"plot_run.py: --policy fifo,las: las not in {small} (valid: fifo, fair)\n"),
                (["--gpu-range", "3-1"], "plot_run.py: --gpu-range 3-1: the last GPU is before the first\n"),
                (["--gpu-range", "2-9"], f"plot_run.py: --gpu-range 2-9: {small} has GPUs 0-3\n"),
                (["--time-range", "5h"], "plot_run.py: --time-range 5h: expected FROM-TO in s, or with a unit "
                                         "(s, min, h, d), e.g. 0-3600 or 100h-200h\n")]:
            code, _, stderr = run(script, small, "--out", out, *options)
            check(code == 2 and stderr == message, f"{options}: exit {code}, stderr {stderr!r}")
        check(not os.path.exists(out), "bad options: the output directory was created")

        # Without matplotlib: exit 3 and how to get it.
        code_text = ("import runpy, sys\nsys.modules['matplotlib'] = None\nsys.argv = sys.argv[1:]\n"
                     "runpy.run_path(sys.argv[0], run_name='__main__')\n")
        proc = subprocess.run([sys.executable, "-c", code_text, script, hand, "--out", os.path.join(tmp, "nompl")],
                              capture_output=True, text=True)
        check(proc.returncode == 3 and proc.stderr.startswith("plot_run.py: matplotlib not found"),
              f"without matplotlib: exit {proc.returncode}, stderr {proc.stderr!r}")

        # Bad input: the key path named, exit 2, nothing written.
        del summary["results"][2]["jobs"][1]["arrival_s"]
        bad = write(os.path.join(tmp, "bad.json"), summary)
        out = os.path.join(tmp, "bad")
        code, stdout, stderr = run(script, bad, "--out", out)
        check(code == 2, f"bad summary: exit {code}")
        check(stderr == f"{bad}: missing key results[2].jobs[1].arrival_s\n", f"bad summary stderr {stderr!r}")
        check(not os.path.exists(out), "bad summary: the output directory was created")
        with open(bad, "w") as f:
            f.write('{"results": [\n  {"policy": "fifo", "jobs": [}\n')
        code, _, stderr = run(script, bad, "--out", out)
        check(code == 2 and stderr.startswith(f"{bad}:2:"), f"invalid JSON: exit {code}, stderr {stderr!r}")
        broken = small_cluster()
        broken["results"][0]["cluster"]["job_gpus"][2] = [1, "x"]
        code, _, stderr = run(script, write(bad, broken), "--out", out)
        check(code == 2 and stderr == f"{bad}: results[0].cluster.job_gpus[2][1]: expected an integer, got \"x\"\n",
              f"bad job_gpus: exit {code}, stderr {stderr!r}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
