"""Inert stand-in for matrix_completion (a PyPI package; no Debian 12 package provides it).

Gavel's scheduler.py and throughput_estimator.py import it at module load; it is called only
when throughputs are estimated online (packing policies with profiling_percentage < 1 or fewer
reference models), which the runs in scripts/peers/run-gavel.sh never do.  Any use stops the run.
"""


def __getattr__(name):
    raise RuntimeError("matrix_completion stand-in: Gavel called matrix_completion.%s, "
                       "which is not installed here" % name)
