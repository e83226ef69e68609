#!/usr/bin/python3
"""Runs plots/make_figures.py on the fixtures in tests/data/plots and checks what it writes.

    /usr/bin/python3 tests/plots/test_make_figures.py SOURCE_DIR

Plain Python (no pytest). Exits 0 when every check passes, 1 when one fails, and 77 (ctest's
SKIP_RETURN_CODE) when this interpreter cannot import matplotlib.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from checks import SKIP, check, failures  # noqa: E402 (the scripts' own folder is on sys.path)

EXPERIMENTS = ["long_trace", "srtf_snapshot", "fair_three", "inference", "hyperparam", "fidelity", "gpus_needed"]
# Figure -> PNG size in pixels (inches x 200 dpi); a change here is a change of the figures.
EXPECTED_PNG = {
    "fig07_jct_cdf": (700, 520),
    "fig08a_srtf_gantt": (700, 520),
    "fig08b_srtf_memory": (700, 520),
    "fig09_fair_throughput": (700, 480),
    "fig10a_inference_gpus": (700, 480),
    "fig10b_inference_latency": (700, 560),
    "fig11_hyperparam_makespan": (700, 480),
    "fidelity_jct": (1400, 500),
    "gpus_needed": (700, 520),
}



def run(script, *args):
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def no_traceback(stderr, what):
    check("Traceback" not in stderr, f"{what}: a Python traceback instead of an error line:\n"
          + stderr)


def test_all_figures(script, data, tmp):
    out1, out2 = os.path.join(tmp, "out1"), os.path.join(tmp, "out2")
    rc, stdout, stderr = run(script, "--in", data, "--out", out1)
    check(rc == 0, f"fixtures: exit {rc}, expected 0; stderr:\n{stderr}")
    no_traceback(stderr, "fixtures")
    check("absent" not in stdout, f"fixtures: something reported absent:\n{stdout}")
    for name, (width, height) in EXPECTED_PNG.items():
        base = os.path.join(out1, name)
        check(f"wrote {base}.png, .pdf" in stdout.splitlines(),
              f"{name}: no 'wrote {base}.png, .pdf' line in:\n{stdout}")
        for ext in ("png", "pdf"):
            path = f"{base}.{ext}"
            if not check(os.path.isfile(path), f"{path} was not written"):
                continue
            check(os.path.getsize(path) > 1000, f"{path} is (nearly) empty")
        if os.path.isfile(base + ".png"):
            size = png_size(base + ".png")
            check(size == (width, height), f"{name}.png is {size}, expected {(width, height)}")
        if os.path.isfile(base + ".pdf"):
            pdf = read_bytes(base + ".pdf")
            check(pdf.startswith(b"%PDF-") and b"%%EOF" in pdf[-64:],
                  f"{name}.pdf is not a complete PDF")
            check(b"/CreationDate" not in pdf, f"{name}.pdf has a CreationDate")
    written = sorted(os.listdir(out1)) if os.path.isdir(out1) else []
    expected = sorted(f"{n}.{e}" for n in EXPECTED_PNG for e in ("png", "pdf"))
    check(written == expected, f"fixtures: wrote {written}, expected {expected}")

    # The same JSON gives the same bytes.
    rc, _, stderr = run(script, "--in", data, "--out", out2)
    check(rc == 0, f"second run: exit {rc}; stderr:\n{stderr}")
    for name in expected:
        a, b = os.path.join(out1, name), os.path.join(out2, name)
        if os.path.isfile(a) and os.path.isfile(b):
            check(read_bytes(a) == read_bytes(b), f"{name} differs between two runs")


def test_only_and_absent(script, data, tmp):
    # One experiment present: its figures are drawn, the others are reported absent.
    indir, out = os.path.join(tmp, "only_in"), os.path.join(tmp, "only_out")
    os.makedirs(indir)
    shutil.copy(os.path.join(data, "hyperparam.json"), indir)
    rc, stdout, stderr = run(script, "--in", indir, "--out", out)
    check(rc == 0, f"one experiment: exit {rc}; stderr:\n{stderr}")
    check(sorted(os.listdir(out)) == ["fig11_hyperparam_makespan.pdf",
                                      "fig11_hyperparam_makespan.png"],
          f"one experiment: wrote {sorted(os.listdir(out))}")
    absent = [line for line in stdout.splitlines() if line.startswith("absent from")]
    check(len(absent) == 1 and all(f"{e}.json" in absent[0] for e in EXPERIMENTS
                                   if e != "hyperparam"),
          f"one experiment: absent experiments not listed:\n{stdout}")

    # --only with a figure name and an experiment name.
    out = os.path.join(tmp, "only_out2")
    rc, stdout, stderr = run(script, "--in", data, "--out", out,
                             "--only", "fig08b_srtf_memory,fair_three")
    check(rc == 0, f"--only: exit {rc}; stderr:\n{stderr}")
    check(sorted(os.listdir(out)) == ["fig08b_srtf_memory.pdf", "fig08b_srtf_memory.png",
                                      "fig09_fair_throughput.pdf", "fig09_fair_throughput.png"],
          f"--only: wrote {sorted(os.listdir(out))}")

    # An unknown --only name: exit 2, listing the valid names.
    rc, stdout, stderr = run(script, "--in", data, "--out", out, "--only", "long_trace,nope")
    check(rc == 2, f"--only nope: exit {rc}, expected 2")
    no_traceback(stderr, "--only nope")
    check(stderr.startswith("make_figures.py: --only: unknown name nope (valid: ")
          and all(e in stderr for e in EXPERIMENTS),
          f"--only nope: the message does not list the valid names:\n{stderr}")


def test_bad_input(script, data, tmp):
    # The malformed fixture: fifo lacks avg_jct_s.
    bad = os.path.join(data, "malformed")
    out = os.path.join(tmp, "bad_out")
    rc, stdout, stderr = run(script, "--in", bad, "--out", out)
    check(rc == 2, f"malformed: exit {rc}, expected 2")
    no_traceback(stderr, "malformed")
    want = f"{os.path.join(bad, 'long_trace.json')}: missing key policies.fifo.avg_jct_s\n"
    check(stderr == want, f"malformed: stderr is {stderr!r}, expected {want!r}")
    check(not os.path.exists(out) or not os.listdir(out), "malformed: figures were written")

    # More bad input, made on the fly: each gives exit 2 and exactly this line.
    with open(os.path.join(data, "fair_three.json"), encoding="utf-8") as f:
        fair = json.load(f)
    short = dict(fair, total=fair["total"][:-1])
    wrong_type = dict(fair, jobs=[dict(fair["jobs"][0], arrival_s="0")] + fair["jobs"][1:])
    cases = [
        ("fair_three", '{"experiment": "fair_three",\n  "t_s": [0.5, 1.5],\n}\n',
         "{f}:3:1: invalid JSON: Expecting property name enclosed in double quotes"),
        ("fair_three", json.dumps(short),
         f"{{f}}: total: {len(fair['total']) - 1} values, but t_s has {len(fair['t_s'])}"),
        ("fair_three", json.dumps(wrong_type),
         '{f}: jobs[0].arrival_s: expected a number, got "0"'),
        ("hyperparam", '{"experiment": "long_trace", "version": 1}',
         '{f}: experiment: is "long_trace", expected "hyperparam"'),
        ("inference", '[]', "{f}: top level: expected an object, got a list"),
        ("long_trace", '{"policies": {"lottery": {}}, "jct_cdf": {}}',
         "{f}: policies.lottery: unknown policy (valid: fifo, srtf, pack, fair)"),
        ("srtf_snapshot", '{"gantt": {"window_s": [0, NaN]}}',
         "{f}: invalid JSON: NaN is not a JSON number"),
    ]
    for i, (experiment, text, message) in enumerate(cases):
        indir = os.path.join(tmp, f"bad{i}")
        os.makedirs(indir)
        file = os.path.join(indir, experiment + ".json")
        with open(file, "w", encoding="utf-8") as f:
            f.write(text)
        rc, _, stderr = run(script, "--in", indir, "--out", os.path.join(tmp, f"bad{i}_out"))
        want = message.format(f=file) + "\n"
        check(rc == 2, f"bad case {i}: exit {rc}, expected 2")
        no_traceback(stderr, f"bad case {i}")
        check(stderr == want, f"bad case {i}: stderr is {stderr!r}, expected {want!r}")


def test_without_matplotlib(script, data, tmp):
    # As if matplotlib were not installed: sys.modules[name] = None makes `import name` fail.
    code = ("import runpy, sys\n"
            "sys.modules['matplotlib'] = None\n"
            "sys.argv = sys.argv[1:]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", code, script, "--in", data, "--out",
                           os.path.join(tmp, "nompl_out")], capture_output=True, text=True)
    want = ("make_figures.py: matplotlib not found: install it with 'apt-get install -y "
            "python3-matplotlib' and run with /usr/bin/python3\n")
    check(proc.returncode == 3, f"without matplotlib: exit {proc.returncode}, expected 3")
    check(proc.stderr == want, f"without matplotlib: stderr is {proc.stderr!r}")


def test_gpus_needed_axes(source, data):
    """The gpus_needed figure counts GPUs in whole numbers and says what it shows in its title,
    also when the search tried only two cluster sizes (where a plain locator puts ticks at 1.2)."""
    import copy
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    sys.path.insert(0, os.path.join(source, "plots"))
    import make_figures as mf
    mf._style(matplotlib)
    file = os.path.join(data, "gpus_needed.json")
    root = mf.read_json(file, "gpus_needed")
    with open(file) as f:
        narrow = json.load(f)
    for p in narrow["policies"].values():
        p["curve"] = copy.deepcopy(p["curve"][:2])
        p["gpus_needed"] = p["curve"][1]["gpus"]
    # --cluster-policies adds lines named after the cluster policies (once refused as unknown).
    leases = copy.deepcopy(narrow)
    for name, mode in [("dlas-gpu", "exclusive"), ("max-min", "exclusive")]:
        line = copy.deepcopy(next(iter(narrow["policies"].values())))
        line.update({"policy": name, "label": name, "lane_mode": mode, "placement": "consolidated"})
        leases["policies"][name] = line
    drawn = mf.load_gpus_needed(mf.Node(file, leases))
    check([line["label"] for line in drawn["lines"]][-2:] == ["dlas-gpu", "max-min"],
          f"gpus_needed with cluster policies: lines {[line['label'] for line in drawn['lines']]}")
    for what, node in [("fixture", root), ("two sizes", mf.Node(file, narrow)), ("cluster policies", mf.Node(file, leases))]:
        fig = Figure(figsize=mf.FIG_SIZE_IN["gpus_needed"], dpi=mf.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        mf.draw_gpus_needed(fig, mf.load_gpus_needed(node))
        fig.canvas.draw()
        ax = fig.axes[0]
        lo, hi = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
        check(len(ticks) >= 2 and all(float(t).is_integer() for t in ticks),
              f"gpus_needed ({what}): x ticks {ticks} are not whole GPUs")
        title = fig._suptitle.get_text() if fig._suptitle is not None else ""
        check(title.startswith("GPUs needed for average JCT \u2264") and "fixture.csv" in title,
              f"gpus_needed ({what}): title {title!r}")


def main():
    if len(sys.argv) != 2:
        print("usage: test_make_figures.py SOURCE_DIR", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"SKIP: {sys.executable} cannot import matplotlib "
              "(apt-get install -y python3-matplotlib)")
        return SKIP
    source = os.path.abspath(sys.argv[1])
    script = os.path.join(source, "plots", "make_figures.py")
    data = os.path.join(source, "tests", "data", "plots")
    tmp = tempfile.mkdtemp(prefix="salus-plots-test-")
    try:
        test_all_figures(script, data, tmp)
        test_only_and_absent(script, data, tmp)
        test_bad_input(script, data, tmp)
        test_without_matplotlib(script, data, tmp)
        test_gpus_needed_axes(source, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
