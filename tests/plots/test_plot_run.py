#!/usr/bin/python3
"""Runs plots/plot_run.py on salus-sim summaries and checks what it writes.

    /usr/bin/python3 tests/plots/test_plot_run.py SOURCE_DIR

Plain Python. Exits 0 when every check passes, 1 when one fails, 77 without matplotlib.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")
    return condition


def run(script, *args):
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def main(source):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not importable by this interpreter: skipped")
        return SKIP
    script = os.path.join(source, "plots", "plot_run.py")
    hand = os.path.join(source, "tests", "data", "golden", "hand_summary.json")
    with tempfile.TemporaryDirectory() as tmp:
        # A single-GPU summary: the two CDFs, nothing else.
        out = os.path.join(tmp, "hand")
        code, stdout, stderr = run(script, hand, "--out", out)
        check(code == 0, f"hand summary: exit {code}, stderr {stderr!r}")
        check(sorted(os.listdir(out)) == ["run_jct_cdf.pdf", "run_jct_cdf.png", "run_queuing_cdf.pdf",
                                         "run_queuing_cdf.png"], f"hand summary wrote {sorted(os.listdir(out))}")
        check(png_size(os.path.join(out, "run_jct_cdf.png")) == (700, 520), "run_jct_cdf.png is 3.5 x 2.6 in at 200 dpi")
        check(stdout == f"wrote {out}/run_jct_cdf.png, .pdf\nwrote {out}/run_queuing_cdf.png, .pdf\n",
              f"hand summary stdout {stdout!r}")
        # The same input gives the same bytes.
        again = os.path.join(tmp, "again")
        run(script, hand, "--out", again)
        for name in os.listdir(out):
            with open(os.path.join(out, name), "rb") as a, open(os.path.join(again, name), "rb") as b:
                check(a.read() == b.read(), f"{name} differs between two runs")

        # A cluster summary: per-job GPUs and a GPUs-busy series add two figures.
        with open(hand) as f:
            summary = json.load(f)
        for r in summary["results"]:
            for k, job in enumerate(r["jobs"]):
                job["gpu"] = k % 2
        summary["results"][0]["gpus_busy"] = [[0, 1], [0.25, 2], [1.9, 0]]
        summary["results"][1]["gpus_busy"] = {"t_s": [0, 1.1], "busy": [2, 0]}
        cluster = os.path.join(tmp, "cluster.json")
        with open(cluster, "w") as f:
            json.dump(summary, f)
        out = os.path.join(tmp, "cluster")
        code, stdout, stderr = run(script, cluster, "--out", out)
        check(code == 0, f"cluster summary: exit {code}, stderr {stderr!r}")
        names = set(os.listdir(out))
        for name in ["run_gpus_busy"] + [f"run_gpu_lanes_{r['policy']}" for r in summary["results"]]:
            check(name + ".png" in names and name + ".pdf" in names, f"cluster summary lacks {name}")

        # A timeline beside the summary (salus-sim --out DIR): FAIR's runs and a rotation of
        # jobs a and b (rows with a rotation number) give run_timeline_fair.
        tdir = os.path.join(tmp, "with_timeline")
        os.makedirs(tdir)
        with open(os.path.join(tdir, "summary.json"), "w") as f:
            json.dump(summary, f)
        timeline = os.path.join(tdir, "fair_timeline.csv")
        with open(timeline, "w") as f:
            f.write("lane,job_id,start_s,end_s,iterations,switch_s,rotation\n0,a,0,0.25,3,0,\n"
                    "0,a,0.25,0.5,2,0.001,1\n0,b,0.25,0.5,2,0.002,1\n0,c,0.5,1.9,4,0.001,\n")
        out = os.path.join(tmp, "timeline")
        code, stdout, stderr = run(script, os.path.join(tdir, "summary.json"), "--out", out)
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

        # Bad input: the key path named, exit 2, nothing written.
        del summary["results"][2]["jobs"][1]["arrival_s"]
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump(summary, f)
        out = os.path.join(tmp, "bad")
        code, stdout, stderr = run(script, bad, "--out", out)
        check(code == 2, f"bad summary: exit {code}")
        check(stderr == f"{bad}: missing key results[2].jobs[1].arrival_s\n", f"bad summary stderr {stderr!r}")
        check(not os.path.exists(out), "bad summary: the output directory was created")
        with open(bad, "w") as f:
            f.write('{"results": [\n  {"policy": "fifo", "jobs": [}\n')
        code, _, stderr = run(script, bad, "--out", out)
        check(code == 2 and stderr.startswith(f"{bad}:2:"), f"invalid JSON: exit {code}, stderr {stderr!r}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
