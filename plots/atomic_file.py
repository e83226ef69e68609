"""Atomic output files for the plotting scripts: each file is written to a temporary in its own
folder and renamed into place (os.replace), so a run killed at any moment leaves either the
previous complete file or the new complete one, never a partial one. The one writer of files in
plots/ (make_figures.py, plot_run.py, gpu_figures.py)."""

import os
import tempfile


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def replace_atomically(path, write):
    """Calls write(tmp) with the path of a new temporary file in path's folder, then renames it
    onto path. If write raises (or the process is killed), path is untouched and the temporary
    is removed (left behind only by a kill: a hidden `.NAME.*.tmp`). The file gets the mode a
    plain open() would give it (0666 less the umask), not mkstemp's 0600."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_figure(fig, path, **savefig_args):
    """fig.savefig(path, ...) through replace_atomically; the format is path's extension (the
    temporary's name ends in .tmp, which matplotlib would not recognise)."""
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    replace_atomically(path, lambda tmp: fig.savefig(tmp, format=ext, **savefig_args))
