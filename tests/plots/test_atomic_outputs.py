#!/usr/bin/python3
"""Checks that the plotting scripts write every file atomically (plots/atomic_file.py): a write that
fails part-way leaves the previous complete file and no temporary beside it.

    /usr/bin/python3 tests/plots/test_atomic_outputs.py SOURCE_DIR

Plain Python. Exits 0 when every check passes, 1 when one fails, 77 without matplotlib. The
failure is made in-process: matplotlib's Figure.savefig is replaced by one that writes half a file
and raises, as a full disk or a kill would leave it; then make_figures.py and plot_run.py run
(their main()), and gpu_figures.py's save() is called.
"""

import contextlib
import io
import os
import stat
import sys
import tempfile

from checks import SKIP, check, failures  # noqa: E402 (the scripts' own folder is on sys.path)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def snapshot(folder):
    return {name: read_bytes(os.path.join(folder, name)) for name in sorted(os.listdir(folder))}


@contextlib.contextmanager
def failing_savefig(figure_class):
    """Figure.savefig writes a few bytes to its target, then raises OSError."""
    real = figure_class.savefig

    def broken(self, fname, *args, **kwargs):
        with open(fname, "wb") as f:
            f.write(b"partial")
        raise OSError(28, "No space left on device (simulated)")

    figure_class.savefig = broken
    try:
        yield
    finally:
        figure_class.savefig = real


def quiet(main, argv):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    try:
        import matplotlib
    except ImportError:
        print("matplotlib not found: skipped", file=sys.stderr)
        return SKIP
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    sys.path.insert(0, os.path.join(root, "plots"))
    import atomic_file
    import make_figures
    import plot_run

    with tempfile.TemporaryDirectory() as tmp:
        # The helper alone: a write that raises leaves the old file and nothing else.
        target = os.path.join(tmp, "helper", "out.csv")
        os.makedirs(os.path.dirname(target))
        atomic_file.replace_atomically(target, lambda p: open(p, "w").write("old,complete\n"))
        try:
            def half(p):
                with open(p, "w") as f:
                    f.write("new,parti")
                raise RuntimeError("killed")
            atomic_file.replace_atomically(target, half)
            check(False, "replace_atomically: the writer's exception was swallowed")
        except RuntimeError:
            pass
        check(read_bytes(target) == b"old,complete\n", "replace_atomically: the old file changed after a failed write")
        check(os.listdir(os.path.dirname(target)) == ["out.csv"],
              f"replace_atomically: left {os.listdir(os.path.dirname(target))} after a failed write")
        umask = os.umask(0o022)
        try:
            fresh = os.path.join(tmp, "helper", "fresh.txt")
            atomic_file.replace_atomically(fresh, lambda p: open(p, "w").write("x"))
            mode = stat.S_IMODE(os.stat(fresh).st_mode)
        finally:
            os.umask(umask)
        check(mode == 0o644, f"replace_atomically: mode {oct(mode)} under umask 022, expected 0o644 (as open() gives)")

        # make_figures.py: a complete run, then one whose writes fail.
        fixtures = os.path.join(root, "tests", "data", "plots")
        out = os.path.join(tmp, "figures")
        rc = quiet(make_figures.main, ["--in", fixtures, "--out", out, "--only", "long_trace,hyperparam"])
        check(rc == 0, f"make_figures.py: exit {rc} on the fixtures")
        before = snapshot(out)
        check(len(before) == 4, f"make_figures.py: wrote {sorted(before)}, expected 2 figures as PNG and PDF")
        with failing_savefig(Figure):
            rc = quiet(make_figures.main, ["--in", fixtures, "--out", out, "--only", "long_trace,hyperparam"])
        check(rc == 1, f"make_figures.py: exit {rc} when a write fails, expected 1")
        check(snapshot(out) == before, "make_figures.py: a failed write changed or added files: "
              f"{sorted(set(os.listdir(out)) ^ set(before))}")
        # A fresh folder: a failed write leaves nothing at all.
        empty = os.path.join(tmp, "figures_failed")
        with failing_savefig(Figure):
            quiet(make_figures.main, ["--in", fixtures, "--out", empty, "--only", "long_trace"])
        check(os.listdir(empty) == [], f"make_figures.py: a failed first write left {os.listdir(empty)}")
        # Rerun after the failure: the same bytes as before (the temporary's name is not in them).
        rc = quiet(make_figures.main, ["--in", fixtures, "--out", out, "--only", "long_trace,hyperparam"])
        check(rc == 0 and snapshot(out) == before, "make_figures.py: a rerun through the temporary changed the bytes")

        # plot_run.py on the long_trace fixture's run is not available; a summary of one job is.
        summary = os.path.join(tmp, "summary.json")
        with open(summary, "w") as f:
            f.write('{"version": 1, "trace": "t.csv", "gpus": 1, "results": [{"policy": "fifo", "jobs": ['
                    '{"id": "a", "status": "done", "arrival_s": 0, "start_s": 0, "finish_s": 2, "jct_s": 2,'
                    ' "queuing_s": 0, "lane": 0, "iterations": 1, "reason": "", "workload": "w"},'
                    '{"id": "b", "status": "done", "arrival_s": 1, "start_s": 2, "finish_s": 5, "jct_s": 4,'
                    ' "queuing_s": 1, "lane": 0, "iterations": 1, "reason": "", "workload": "w"}]}]}\n')
        runs = os.path.join(tmp, "run_figures")
        rc = quiet(plot_run.main, [summary, "--out", runs])
        if check(rc == 0, f"plot_run.py: exit {rc} on a two-job summary"):
            before = snapshot(runs)
            check(len(before) >= 2, f"plot_run.py: wrote {sorted(before)}")
            with failing_savefig(Figure):
                rc = quiet(plot_run.main, [summary, "--out", runs])
            check(rc == 1, f"plot_run.py: exit {rc} when a write fails, expected 1")
            check(snapshot(runs) == before, "plot_run.py: a failed write changed or added files: "
                  f"{sorted(set(os.listdir(runs)) ^ set(before))}")

        # gpu_figures.py's one writer, save().
        import gpu_figures
        gpu_out = os.path.join(tmp, "gpu")
        os.makedirs(gpu_out)
        fig = gpu_figures.plt.figure()
        with contextlib.redirect_stdout(io.StringIO()):
            gpu_figures.save(fig, gpu_out, "probe")
        before = snapshot(gpu_out)
        check(sorted(before) == ["probe.pdf", "probe.png"], f"gpu_figures.py: wrote {sorted(before)}")
        fig = gpu_figures.plt.figure()
        with failing_savefig(Figure):
            try:
                gpu_figures.save(fig, gpu_out, "probe")
                check(False, "gpu_figures.py: a failed write was not reported")
            except OSError:
                pass
        check(snapshot(gpu_out) == before, "gpu_figures.py: a failed write changed or added files: "
              f"{sorted(set(os.listdir(gpu_out)) ^ set(before))}")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
